// Login sessions: one `Session` document each, in the store every controller shares (STORE=etcd,
// #18). Whether a session is open, asked by every request, is answered from an index that
// follows the store's watch (store-index.ts): no store read. What all controllers must agree on
// is decided by the store itself: a refresh is a compare-and-swap on the session document, and
// an ending (logout, a reused refresh token, a password change, expiry) deletes it.
//
// How long another controller goes on accepting an ended session's access tokens: until its
// watch delivers the deletion — as soon as etcd sends the event, or, while that controller's
// watch is reconnecting, once it has resumed. Its refresh token is refused everywhere at once,
// as a refresh reads the store.
import { AuthError, NotFoundError } from '../../errors.js';
import type { Clock } from '../../model/clock.js';
import { Kind, type SessionSpec } from '../../model/kinds.js';
import type { Logger } from '../../log.js';
import type { Store } from '../../store/types.js';
import { StoreIndex } from './store-index.js';
import { newJti } from './tokens.js';

interface Live {
  userId: string;
  expiresAt: number;
}

/** Told when a session ends (logout, a reused refresh token, a password change, expiry), on
 * whichever controller it was ended. */
export type SessionEndListener = (sessionId: string, userId: string) => void;

/** Ended sessions remembered, so a token of one costs no store read (see isOpen). */
const ENDED_KEPT = 10_000;

/** Thrown inside the compare-and-swap when the presented refresh token is not the current one. */
class Reused extends Error {}

export class SessionRegistry {
  private readonly index: StoreIndex<Live>;
  private readonly ended = new Set<string>();
  private readonly endListeners = new Set<SessionEndListener>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly refreshSeconds: number,
  ) {
    this.index = new StoreIndex<Live>(
      store,
      Kind.Session,
      {
        read: (doc) => {
          const spec = doc.spec as SessionSpec;
          return { userId: spec.userId, expiresAt: Date.parse(spec.expiresAt) };
        },
        removed: (id, s) => this.onEnded(id, s.userId),
      },
      logger,
    );
  }

  /** Lists the stored sessions, follows the store from there, and ends the expired ones. */
  async load(): Promise<void> {
    await this.index.start();
    await this.prune();
  }

  /** Stops following the store. */
  close(): void {
    this.index.stop();
  }

  /** From the index alone: what an event stream is checked against. */
  isActive(sessionId: string, userId: string): boolean {
    const s = this.index.get(sessionId);
    return s !== undefined && s.userId === userId && s.expiresAt > this.clock.now();
  }

  /**
   * For a request: the index, or, for a session the index has not heard of, the store — one
   * another controller started a moment ago, its watch event still on its way. Only a token
   * Quarry signed gets this far, so no one else can make a request read the store; and one of
   * a session found ended reads it once.
   */
  async isOpen(sessionId: string, userId: string): Promise<boolean> {
    if (this.isActive(sessionId, userId)) return true;
    if (this.index.has(sessionId) || this.ended.has(sessionId)) return false;
    const doc = await this.store.get<SessionSpec>(Kind.Session, sessionId);
    if (!doc) this.remember(sessionId);
    return doc !== undefined && doc.spec.userId === userId && Date.parse(doc.spec.expiresAt) > this.clock.now();
  }

  async start(userId: string): Promise<{ sessionId: string; refreshJti: string }> {
    await this.prune();
    const refreshJti = newJti();
    const expiresAt = this.clock.now() + this.refreshSeconds * 1000;
    const doc = await this.store.create<SessionSpec>({ kind: Kind.Session, name: userId, spec: this.spec(userId, refreshJti, expiresAt) });
    this.index.put(doc);
    return { sessionId: doc.id, refreshJti };
  }

  /**
   * Swaps the presented refresh token id for a new one. A token id that is not the current one
   * has been used before — by the client or by whoever stole it — so the whole family dies.
   * The swap is a compare-and-swap on the session document: of two uses of one token at once,
   * on one controller or two, one writes first and the other, reading again, finds its token
   * no longer current.
   */
  async rotate(sessionId: string, userId: string, presentedJti: string): Promise<string> {
    const next = newJti();
    try {
      const doc = await this.store.mutateSpec<SessionSpec>(Kind.Session, sessionId, ({ spec }) => {
        if (spec.userId !== userId || Date.parse(spec.expiresAt) <= this.clock.now()) throw new AuthError('session ended');
        if (spec.refreshJti !== presentedJti) throw new Reused();
        return this.spec(userId, next, this.clock.now() + this.refreshSeconds * 1000);
      });
      this.index.put(doc);
      return next;
    } catch (err) {
      if (err instanceof NotFoundError) throw new AuthError('session ended');
      if (!(err instanceof Reused)) throw err;
    }
    this.logger('warn', 'refresh token reused; revoking its session', { sessionId, userId });
    await this.revoke(sessionId);
    throw new AuthError('session ended');
  }

  /** Calls `listener` for every session that ends from now on; returns the unsubscribe. */
  onEnd(listener: SessionEndListener): () => void {
    this.endListeners.add(listener);
    return () => this.endListeners.delete(listener);
  }

  /** Ends it for every controller: they all see the deletion through their watch. */
  async revoke(sessionId: string): Promise<void> {
    try {
      await this.store.delete(Kind.Session, sessionId);
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
    this.index.remove(sessionId);
  }

  /** Ends every session of a user but one (a password change keeps the session that made it).
   * The index names them: one started on another controller in the last moment (its watch
   * event not yet here) may stay. */
  async revokeUser(userId: string, keep?: string): Promise<void> {
    const ids = [...this.index.all()].filter(([id, s]) => s.userId === userId && id !== keep).map(([id]) => id);
    for (const id of ids) await this.revoke(id);
  }

  count(): number {
    return this.index.size;
  }

  private onEnded(sessionId: string, userId: string): void {
    this.remember(sessionId);
    for (const listener of [...this.endListeners]) {
      try {
        listener(sessionId, userId);
      } catch (err) {
        this.logger('warn', 'a session-end listener failed', { sessionId, error: err instanceof Error ? err.message : String(err) });
      }
    }
  }

  /** Bounded: one forgotten costs a store read, once more. */
  private remember(sessionId: string): void {
    if (this.ended.size >= ENDED_KEPT) this.ended.delete(this.ended.values().next().value as string);
    this.ended.add(sessionId);
  }

  private async prune(): Promise<void> {
    const now = this.clock.now();
    const dead = [...this.index.all()].filter(([, s]) => s.expiresAt <= now).map(([id]) => id);
    for (const id of dead) await this.revoke(id);
  }

  private spec(userId: string, refreshJti: string, expiresAt: number): SessionSpec {
    return { userId, refreshJti, expiresAt: new Date(expiresAt).toISOString() };
  }
}
