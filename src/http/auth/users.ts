// User accounts as `User` documents. The password hash stays inside this file's callers: what
// leaves is always `toPublic(doc)`, which has no field for it.
import { ConflictError, NotFoundError } from '../../errors.js';
import type { Doc } from '../../model/document.js';
import { Kind, type UserSpec } from '../../model/kinds.js';
import type { Store } from '../../store/types.js';
import type { PasswordHasher } from './passwords.js';

export interface PublicUser {
  id: string;
  username: string;
  name: string;
  email: string;
  isAdmin: boolean;
}

export type UserDoc = Doc<UserSpec, unknown>;

export interface NewUser {
  username: string;
  password: string;
  name: string;
  email: string;
  isAdmin?: boolean;
}

export interface UserChanges {
  username?: string;
  name?: string;
  email?: string;
  isAdmin?: boolean;
  newPassword?: string;
}

export const toPublic = (doc: UserDoc): PublicUser => ({
  id: doc.id,
  username: doc.spec.username,
  name: doc.spec.name,
  email: doc.spec.email,
  isAdmin: doc.spec.isAdmin,
});

const sameName = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();

export class UserDirectory {
  // Creates and renames run one at a time, so two requests cannot both pass the uniqueness check.
  private writes: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly hasher: PasswordHasher,
  ) {}

  get(id: string): Promise<UserDoc | undefined> {
    return this.store.get<UserSpec>(Kind.User, id);
  }

  async mustGet(id: string): Promise<UserDoc> {
    const doc = await this.get(id);
    if (!doc) throw new NotFoundError(`user ${id} not found`);
    return doc;
  }

  list(): Promise<UserDoc[]> {
    return this.store.list<UserSpec>(Kind.User);
  }

  /** Usernames are unique and matched without regard to case. */
  async findByUsername(username: string): Promise<UserDoc | undefined> {
    return (await this.list()).find((u) => sameName(u.spec.username, username));
  }

  create(input: NewUser): Promise<UserDoc> {
    return this.serial(async () => {
      await this.assertFree(input.username);
      const passwordHash = await this.hasher.hash(input.password);
      const spec: UserSpec = {
        username: input.username,
        name: input.name,
        email: input.email,
        isAdmin: input.isAdmin ?? false,
        passwordHash,
      };
      return this.store.create<UserSpec>({ kind: Kind.User, name: input.username, spec, source: { type: 'api' } });
    });
  }

  update(id: string, changes: UserChanges): Promise<UserDoc> {
    return this.serial(async () => {
      const current = await this.mustGet(id);
      if (changes.username !== undefined && !sameName(changes.username, current.spec.username)) await this.assertFree(changes.username);
      if (changes.isAdmin === false && current.spec.isAdmin) await this.assertAnotherAdmin(id);
      const passwordHash = changes.newPassword === undefined ? current.spec.passwordHash : await this.hasher.hash(changes.newPassword);
      const { username, name, email, isAdmin } = changes;
      const fields = Object.entries({ username, name, email, isAdmin }).filter(([, v]) => v !== undefined);
      const spec: UserSpec = { ...current.spec, ...Object.fromEntries(fields), passwordHash };
      const doc = await this.store.updateSpec<UserSpec>(Kind.User, id, spec, {
        resourceVersion: current.metadata.resourceVersion,
        name: spec.username,
      });
      return doc;
    });
  }

  /** Checks a password; unknown users cost the same scrypt work as known ones. `source` (the
   * client address) is the hashing queue's fairness key. */
  async authenticate(username: string, password: string, source?: string): Promise<UserDoc | undefined> {
    const user = await this.findByUsername(username);
    const ok = await this.hasher.verify(password, user?.spec.passwordHash, source);
    return ok ? user : undefined;
  }

  private async assertFree(username: string): Promise<void> {
    if (await this.findByUsername(username)) throw new ConflictError(`username ${username} is taken`);
  }

  private async assertAnotherAdmin(id: string): Promise<void> {
    const admins = (await this.list()).filter((u) => u.spec.isAdmin && u.id !== id);
    if (admins.length === 0) throw new ConflictError('the last admin cannot lose isAdmin');
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.writes.then(work, work);
    this.writes = run.catch(() => undefined);
    return run;
  }
}
