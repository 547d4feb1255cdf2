// RGW users as the API sees them. Creating one writes the desired RgwUser, then waits (bounded)
// for the rgw-user loop to store its key pair, because the contract answers a creation with the
// keys. The secret key is handed out exactly once: the answer that reveals it marks it shown
// (CAS on the secret document), and every later request, listing or creation, gets no secret.
import { isDeepStrictEqual } from 'node:util';
import { ConflictError } from '../errors.js';
import type { Clock } from '../model/clock.js';
import type { Doc } from '../model/document.js';
import {
  StorageKind,
  rgwUserId,
  type RgwUserSecretSpec,
  type RgwUserSecretStatus,
  type RgwUserSpec,
  type RgwUserStatus,
} from '../model/storage-kinds.js';
import type { Store } from '../store/types.js';

export interface RgwUserView {
  userId: string;
  displayName: string;
  email?: string;
  /** Access keys only. */
  keys: Array<{ accessKey: string }>;
  state: string;
  message: string;
}

export interface RgwUserCreated {
  userId: string;
  displayName: string;
  email?: string;
  keys: Array<{ accessKey: string; secretKey: string }>;
}

type SecretDoc = Doc<RgwUserSecretSpec, RgwUserSecretStatus>;

const shown = (userId: string) =>
  new ConflictError(`RGW user ${userId} exists; its secret key was shown once, when it was created`, 'RGW_USER_EXISTS');

export class RgwUsers {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    /** How long a creation waits for the keys before answering 202. */
    private readonly waitMs = 30_000,
  ) {}

  async list(): Promise<RgwUserView[]> {
    const users = await this.store.list<RgwUserSpec, RgwUserStatus>(StorageKind.RgwUser);
    return users
      .sort((a, b) => a.spec.userId.localeCompare(b.spec.userId))
      .map((u) => ({
        ...u.spec,
        keys: u.status.accessKey ? [{ accessKey: u.status.accessKey }] : [],
        state: u.status.phase ?? 'pending',
        message: u.status.conditions?.find((c) => c.type === 'Ready')?.message ?? '',
      }));
  }

  /** The user with its keys, or null when the loop has not issued them within waitMs. */
  async create(spec: RgwUserSpec): Promise<RgwUserCreated | null> {
    const id = rgwUserId(spec.userId);
    await this.declare(id, spec);
    const secret = await this.waitForSecret(id);
    if (!secret) return null;
    const key = await this.reveal(secret);
    return { ...spec, keys: [key] };
  }

  private async declare(id: string, spec: RgwUserSpec): Promise<void> {
    try {
      await this.store.create({ kind: StorageKind.RgwUser, id, name: spec.userId, spec, status: { phase: 'pending' } });
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
      const known = await this.store.mustGet<RgwUserSpec>(StorageKind.RgwUser, id);
      if (!isDeepStrictEqual(known.spec, spec))
        throw new ConflictError(`RGW user ${spec.userId} is already declared with another display name or email`, 'RGW_USER_EXISTS');
    }
  }

  /** Watches the store from before the first look, so a secret stored in between is not missed. */
  private waitForSecret(id: string): Promise<SecretDoc | undefined> {
    return new Promise((resolve, reject) => {
      let settled = false;
      const finish = (doc: SecretDoc | undefined, err?: Error) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        unwatch();
        if (err) reject(err);
        else resolve(doc);
      };
      const look = () => {
        this.store.get<RgwUserSecretSpec, RgwUserSecretStatus>(StorageKind.RgwUserSecret, id).then(
          (doc) => doc?.status.secretKey && finish(doc),
          (err: unknown) => finish(undefined, err instanceof Error ? err : new Error(String(err))),
        );
      };
      const timer = setTimeout(() => finish(undefined), this.waitMs);
      timer.unref(); // a request still waiting must not hold a stopping process open
      const unwatch = this.store.watch(this.store.revision(), (e) => {
        if (e.type === 'relist' || (e.doc.kind === StorageKind.RgwUserSecret && e.doc.id === id)) look();
      });
      look();
    });
  }

  /** Marks the secret shown and returns it; a secret shown before is a 409. */
  private async reveal(secret: SecretDoc): Promise<{ accessKey: string; secretKey: string }> {
    let doc: SecretDoc | undefined = secret;
    for (;;) {
      if (!doc?.status.secretKey) throw new Error('the secret key vanished while it was being shown');
      if (doc.status.shownAt) throw shown(doc.spec.userId);
      try {
        await this.store.updateStatus(
          StorageKind.RgwUserSecret,
          doc.id,
          { ...doc.status, shownAt: this.clock.iso() },
          { resourceVersion: doc.metadata.resourceVersion },
        );
        return { accessKey: doc.spec.accessKey, secretKey: doc.status.secretKey };
      } catch (err) {
        if (!(err instanceof ConflictError)) throw err;
        doc = await this.store.get<RgwUserSecretSpec, RgwUserSecretStatus>(StorageKind.RgwUserSecret, doc.id);
      }
    }
  }
}
