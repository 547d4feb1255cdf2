// Per-node agent credentials. Quarry issues a 256-bit install secret only when an approved
// node's boot decision is `install` (enrollment.ts), bound to the address the boot request came
// from (the node's DHCP lease where Quarry knows it), good for a short TTL and one claim. The
// machine receives the plaintext in its rendered cloud-init (GET /templates/rendered/cloud-init),
// which shows it only to a request from the bound address; the first login with it must come
// from there too, deletes the stored plaintext, and the agent must then rotate to a secret only
// it ever saw. A second party presenting the install secret (from another address, or again
// after the claim) is a conflict: the credential is revoked and the node needs an admin's
// approval again. An unclaimed credential past its TTL is deleted (no plaintext lingers).
// Only SHA-256 hashes are kept otherwise: a high-entropy secret needs no slow KDF.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { ConflictError, NotFoundError } from '../errors.js';
import type { Clock } from '../model/clock.js';
import type { Doc } from '../model/document.js';
import { Kind, type AgentCredentialSpec, type NodeSpec } from '../model/kinds.js';
import type { Store } from '../store/types.js';
import type { CredentialView } from './enrollment.js';

const PREFIX = 'agent:';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const agentUsername = (nodeId: string): string => `${PREFIX}${nodeId}`;

/** The node id of an `agent:<nodeId>` username, or null when it is not one. */
export function agentNodeId(username: string): string | null {
  if (username.slice(0, PREFIX.length).toLowerCase() !== PREFIX) return null;
  const id = username.slice(PREFIX.length).toLowerCase();
  return UUID.test(id) ? id : null;
}

export interface AgentCredentialState {
  /** False until the agent has replaced the secret it was installed with. */
  rotated: boolean;
}

export interface VerifiedAgent extends AgentCredentialState {
  /** This login was the first ever use of the credential. */
  firstUse: boolean;
}

export interface CredentialOptions {
  /** How long an unclaimed install credential is good for. */
  ttlMs: number;
  /** Told (without secrets) when a second party used or raced for a node's credential. */
  onConflict?: (nodeId: string, message: string, node: { hostname: string; name: string } | null) => void;
}

export const DEFAULT_INSTALL_TTL_MS = 30 * 60_000;

type CredDoc = Doc<AgentCredentialSpec>;

const newSecret = (): string => randomBytes(32).toString('base64url');
const digest = (secret: string): Buffer => createHash('sha256').update(secret, 'utf8').digest();
// Compared against when the node has no credential, so both answers cost the same.
const NO_HASH = digest(newSecret());
const sameHash = (d: Buffer, hex: string | null | undefined): boolean => {
  const stored = hex ? Buffer.from(hex, 'hex') : NO_HASH;
  return timingSafeEqual(d, stored.length === 32 ? stored : NO_HASH) && !!hex;
};

export class AgentCredentials {
  private readonly opts: CredentialOptions;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    opts: Partial<CredentialOptions> = {},
  ) {
    this.opts = { ttlMs: DEFAULT_INSTALL_TTL_MS, ...opts };
  }

  /** Issues an install credential bound to `address` (null: unbound, the in-process lab link)
   * unless a valid one exists: a pending one within its TTL stays as it is, an expired one is
   * replaced, a claimed or revoked one is left alone. */
  async issue(nodeId: string, address: string | null): Promise<void> {
    const doc = await this.get(nodeId);
    if (doc && !(this.pending(doc) && this.expired(doc))) return;
    if (doc) await this.store.delete(Kind.AgentCredential, nodeId, { resourceVersion: doc.metadata.resourceVersion }).catch(ignoreConflict);
    const secret = newSecret();
    const hash = digest(secret).toString('hex');
    const spec: AgentCredentialSpec = {
      nodeId,
      secretHash: hash,
      initialSecret: secret,
      issuedAt: this.clock.iso(),
      firstUsedAt: null,
      rotatedAt: null,
      boundAddress: address,
      expiresAt: new Date(this.clock.now() + this.opts.ttlMs).toISOString(),
      claimedBy: null,
      installHash: hash,
      conflict: null,
    };
    try {
      await this.store.create<AgentCredentialSpec>({ kind: Kind.AgentCredential, id: nodeId, name: agentUsername(nodeId), spec });
    } catch (err) {
      ignoreConflict(err); // two boots raced; the first one's stands
    }
  }

  /** Unbound, for the in-process lab link (no network, so no address to bind to). */
  ensure(nodeId: string): Promise<void> {
    return this.issue(nodeId, null);
  }

  /** The plaintext for an install render asked from `address` (null: the in-process link):
   * only while unclaimed, within its TTL, and only to the address it is bound to. */
  async installSecret(nodeId: string, address: string | null): Promise<string | null> {
    const doc = await this.get(nodeId);
    if (!doc || !this.pending(doc) || this.expired(doc)) return null;
    if ((doc.spec.boundAddress ?? null) !== null && doc.spec.boundAddress !== address) return null;
    return doc.spec.initialSecret;
  }

  /** The in-process link's boot answer. */
  bootSecret(nodeId: string): Promise<string | null> {
    return this.installSecret(nodeId, null);
  }

  async view(nodeId: string): Promise<CredentialView | null> {
    const doc = await this.get(nodeId);
    if (!doc) return null;
    const s = doc.spec;
    const state = s.conflict ? 'revoked' : s.firstUsedAt === null ? 'pending' : 'claimed';
    return {
      state,
      boundAddress: s.boundAddress ?? null,
      claimedBy: s.claimedBy ?? null,
      expired: state === 'pending' && this.expired(doc),
    };
  }

  /** Null for no credential or a revoked one: its sessions end with it. */
  async state(nodeId: string): Promise<AgentCredentialState | null> {
    const doc = await this.get(nodeId);
    return doc && !doc.spec.conflict ? { rotated: doc.spec.rotatedAt !== null } : null;
  }

  /** Null for an unknown node, a wrong secret, or a refused use of the install secret. The
   * first success forgets the plaintext and records the address it came from. `address`
   * undefined: a caller that has none (unit tests of other areas). */
  async verify(nodeId: string, secret: string, address?: string): Promise<VerifiedAgent | null> {
    const doc = await this.get(nodeId);
    const d = digest(secret);
    const current = sameHash(d, doc?.spec.secretHash);
    if (!doc || doc.spec.conflict) return null;
    const s = doc.spec;
    if (!current) {
      // The install secret again, after the agent rotated away from it, from another address
      // than the claim's: someone else has it. (From the claim's own address it is the agent
      // itself retrying with what its disk held, a plain 401.)
      const elsewhere = address !== undefined && (s.claimedBy ?? null) !== null && address !== s.claimedBy;
      if (elsewhere && s.installHash && s.installHash !== s.secretHash && sameHash(d, s.installHash)) {
        await this.conflict(
          nodeId,
          `the install secret was presented again${address ? ` from ${address}` : ''} after the node's agent replaced it`,
        );
      }
      return null;
    }
    if (s.firstUsedAt === null) {
      if (this.expired(doc)) return null;
      if (address !== undefined && (s.boundAddress ?? null) !== null && address !== s.boundAddress) {
        await this.conflict(nodeId, `the install secret was presented from ${address}, not from the address it is bound to`);
        return null;
      }
    } else if (s.rotatedAt === null && address !== undefined && (s.claimedBy ?? null) !== null && address !== s.claimedBy) {
      await this.conflict(nodeId, `the install secret was presented from ${address} after ${s.claimedBy} had claimed it`);
      return null;
    }
    const firstUse = s.firstUsedAt === null;
    if (s.initialSecret !== null || firstUse) {
      const now = this.clock.iso();
      await this.store.mutateSpec<AgentCredentialSpec>(Kind.AgentCredential, nodeId, (x) =>
        x.spec.initialSecret === null && x.spec.firstUsedAt !== null
          ? undefined
          : { ...x.spec, initialSecret: null, firstUsedAt: x.spec.firstUsedAt ?? now, claimedBy: x.spec.claimedBy ?? address ?? null },
      );
    }
    return { rotated: s.rotatedAt !== null, firstUse };
  }

  /** A new secret, answered once; the old one stops working. */
  async rotate(nodeId: string): Promise<string> {
    const secret = newSecret();
    const now = this.clock.iso();
    try {
      await this.store.mutateSpec<AgentCredentialSpec>(Kind.AgentCredential, nodeId, (d) => ({
        ...d.spec,
        secretHash: digest(secret).toString('hex'),
        initialSecret: null,
        firstUsedAt: d.spec.firstUsedAt ?? now,
        rotatedAt: now,
      }));
    } catch (err) {
      if (err instanceof NotFoundError) throw new NotFoundError(`node ${nodeId} has no agent credential`);
      throw err;
    }
    return secret;
  }

  /** Revokes the node's credential and takes its approval back: an admin must look. */
  async conflict(nodeId: string, message: string): Promise<void> {
    const at = this.clock.iso();
    await this.store
      .mutateSpec<AgentCredentialSpec>(Kind.AgentCredential, nodeId, (d) =>
        d.spec.conflict ? undefined : { ...d.spec, initialSecret: null, conflict: { at, message } },
      )
      .catch(ignoreMissing);
    const node = await this.store
      .mutateSpec<NodeSpec>(Kind.Node, nodeId, (d) => (d.spec.approved === false ? undefined : { ...d.spec, approved: false }))
      .catch(ignoreMissing);
    this.opts.onConflict?.(nodeId, message, node ? { hostname: node.spec.hostname, name: node.name } : null);
  }

  /** Forgets the node's credential (an admin's approval after a conflict starts over). */
  async remove(nodeId: string): Promise<void> {
    await this.store.delete(Kind.AgentCredential, nodeId).catch(ignoreMissing);
  }

  /** Deletes unclaimed credentials past their TTL; answers how many. */
  async sweep(): Promise<number> {
    let n = 0;
    for (const doc of (await this.store.list<AgentCredentialSpec>(Kind.AgentCredential)) as CredDoc[]) {
      if (!this.pending(doc) || !this.expired(doc)) continue;
      await this.store
        .delete(Kind.AgentCredential, doc.id, { resourceVersion: doc.metadata.resourceVersion })
        .then(() => n++, ignoreConflict);
    }
    return n;
  }

  private pending(doc: CredDoc): boolean {
    return doc.spec.firstUsedAt === null && !doc.spec.conflict;
  }

  // A credential stored before TTLs existed expires a TTL after it was issued.
  private expired(doc: CredDoc): boolean {
    const at = doc.spec.expiresAt ? Date.parse(doc.spec.expiresAt) : Date.parse(doc.spec.issuedAt) + this.opts.ttlMs;
    return this.clock.now() >= at;
  }

  private get(nodeId: string): Promise<CredDoc | undefined> {
    return this.store.get<AgentCredentialSpec>(Kind.AgentCredential, nodeId) as Promise<CredDoc | undefined>;
  }
}

function ignoreConflict(err: unknown): void {
  if (!(err instanceof ConflictError) && !(err instanceof NotFoundError)) throw err;
}

function ignoreMissing(err: unknown): void {
  if (!(err instanceof NotFoundError)) throw err;
}
