// Login sessions, persisted as `Session` documents so they survive a restart, and mirrored in
// memory so that every request checks revocation without a store read. Revoking a session
// deletes its document: a token whose session is gone is refused, whatever its signature says.
import { AuthError, NotFoundError } from '../../errors.js';
import type { Clock } from '../../model/clock.js';
import { Kind, type SessionSpec } from '../../model/kinds.js';
import type { Logger } from '../../log.js';
import type { Store } from '../../store/types.js';
import { newJti } from './tokens.js';

interface Live {
  userId: string;
  refreshJti: string;
  expiresAt: number;
}

/** Told when a session ends (logout, a reused refresh token, a password change, expiry). */
export type SessionEndListener = (sessionId: string, userId: string) => void;

export class SessionRegistry {
  private readonly live = new Map<string, Live>();
  private readonly endListeners = new Set<SessionEndListener>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly refreshSeconds: number,
  ) {}

  /** Loads every stored session and drops the expired ones. */
  async load(): Promise<void> {
    for (const doc of await this.store.list<SessionSpec>(Kind.Session)) {
      this.live.set(doc.id, { userId: doc.spec.userId, refreshJti: doc.spec.refreshJti, expiresAt: Date.parse(doc.spec.expiresAt) });
    }
    await this.prune();
  }

  isActive(sessionId: string, userId: string): boolean {
    const s = this.live.get(sessionId);
    return s !== undefined && s.userId === userId && s.expiresAt > this.clock.now();
  }

  async start(userId: string): Promise<{ sessionId: string; refreshJti: string }> {
    await this.prune();
    const refreshJti = newJti();
    const expiresAt = this.clock.now() + this.refreshSeconds * 1000;
    const doc = await this.store.create<SessionSpec>({ kind: Kind.Session, name: userId, spec: this.spec(userId, refreshJti, expiresAt) });
    this.live.set(doc.id, { userId, refreshJti, expiresAt });
    return { sessionId: doc.id, refreshJti };
  }

  /**
   * Swaps the presented refresh token id for a new one. A token id that is not the current one
   * has been used before — by the client or by whoever stole it — so the whole family dies.
   */
  async rotate(sessionId: string, userId: string, presentedJti: string): Promise<string> {
    const s = this.live.get(sessionId);
    if (!s || s.userId !== userId || s.expiresAt <= this.clock.now()) throw new AuthError('session ended');
    if (s.refreshJti !== presentedJti) {
      this.logger('warn', 'refresh token reused; revoking its session', { sessionId, userId });
      await this.revoke(sessionId);
      throw new AuthError('session ended');
    }
    // Memory first and synchronously: a concurrent second use of the same token sees the new
    // id and is treated as the replay it is.
    const next = { userId, refreshJti: newJti(), expiresAt: this.clock.now() + this.refreshSeconds * 1000 };
    this.live.set(sessionId, next);
    try {
      await this.store.mutateSpec<SessionSpec>(Kind.Session, sessionId, () => this.spec(userId, next.refreshJti, next.expiresAt));
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
      throw new AuthError('session ended');
    }
    return next.refreshJti;
  }

  /** Calls `listener` for every session that ends from now on; returns the unsubscribe. */
  onEnd(listener: SessionEndListener): () => void {
    this.endListeners.add(listener);
    return () => this.endListeners.delete(listener);
  }

  async revoke(sessionId: string): Promise<void> {
    const ended = this.live.get(sessionId);
    this.live.delete(sessionId);
    // Synchronously, before the store write: what holds the session open (an event stream)
    // closes with the revocation, not one write later.
    if (ended) for (const listener of [...this.endListeners]) this.tell(listener, sessionId, ended.userId);
    try {
      await this.store.delete(Kind.Session, sessionId);
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
  }

  /** Ends every session of a user but one (a password change keeps the session that made it). */
  async revokeUser(userId: string, keep?: string): Promise<void> {
    const ids = [...this.live].filter(([id, s]) => s.userId === userId && id !== keep).map(([id]) => id);
    for (const id of ids) await this.revoke(id);
  }

  count(): number {
    return this.live.size;
  }

  private tell(listener: SessionEndListener, sessionId: string, userId: string): void {
    try {
      listener(sessionId, userId);
    } catch (err) {
      this.logger('warn', 'a session-end listener failed', { sessionId, error: err instanceof Error ? err.message : String(err) });
    }
  }

  private async prune(): Promise<void> {
    const now = this.clock.now();
    const dead = [...this.live].filter(([, s]) => s.expiresAt <= now).map(([id]) => id);
    for (const id of dead) await this.revoke(id);
  }

  private spec(userId: string, refreshJti: string, expiresAt: number): SessionSpec {
    return { userId, refreshJti, expiresAt: new Date(expiresAt).toISOString() };
  }
}
