// The open /events streams by session and user. A stream is authenticated once, when it opens,
// and may then last for days: it must end when its session does (logout, a reused refresh
// token, a password change elsewhere, expiry), and a user may hold only a few at once.
//
// Past the cap a new stream is refused (429), rather than the oldest closed: EventSource gives
// up on a non-200 answer, while a stream closed from the server's side reconnects on its own —
// closing the oldest would make two pages of the same user close each other in turn forever.
import { RateLimitedError } from '../../errors.js';

export interface StreamOwner {
  userId: string;
  sessionId: string;
}

/** What the registry needs of the sessions (SessionRegistry fits). */
export interface SessionSource {
  isActive(sessionId: string, userId: string): boolean;
  onEnd(listener: (sessionId: string, userId: string) => void): () => void;
}

interface Open {
  owner: StreamOwner;
  end: () => void;
}

export const SSE_STREAMS_PER_USER = 8;
/** Sessions also end by expiry, which no one announces: looked at this often. */
const SWEEP_MS = 30_000;

export class SessionStreams {
  private readonly open = new Set<Open>();
  private readonly perUser = new Map<string, number>();
  private sweeper: NodeJS.Timeout | null = null;

  constructor(
    private readonly sessions: SessionSource,
    readonly maxPerUser = SSE_STREAMS_PER_USER,
    private readonly sweepMs = SWEEP_MS,
  ) {
    sessions.onEnd((sessionId) => this.endSession(sessionId));
  }

  /** Throws 429 when the user already holds maxPerUser streams. */
  admit(owner: StreamOwner): void {
    if ((this.perUser.get(owner.userId) ?? 0) >= this.maxPerUser) {
      throw new RateLimitedError(30, `at most ${this.maxPerUser} event streams per user are open at once; close one first`);
    }
  }

  /** Holds an opened stream until `closed` fires; `end` ends it from the server's side. */
  add(
    owner: StreamOwner,
    end: () => void,
    closed: { once(event: 'close', listener: () => void): unknown; destroyed: boolean; writableEnded: boolean },
  ): void {
    // A client gone before its stream opened has already had its 'close'.
    if (closed.destroyed || closed.writableEnded) {
      end();
      return;
    }
    const entry: Open = { owner, end };
    this.open.add(entry);
    this.perUser.set(owner.userId, (this.perUser.get(owner.userId) ?? 0) + 1);
    closed.once('close', () => this.remove(entry));
    this.startSweeping();
  }

  count(userId?: string): number {
    return userId === undefined ? this.open.size : (this.perUser.get(userId) ?? 0);
  }

  /** Ends the streams of a session that is no longer active. */
  sweep(): void {
    for (const e of [...this.open]) if (!this.sessions.isActive(e.owner.sessionId, e.owner.userId)) this.close(e);
  }

  private endSession(sessionId: string): void {
    for (const e of [...this.open]) if (e.owner.sessionId === sessionId) this.close(e);
  }

  private close(e: Open): void {
    this.remove(e);
    e.end();
  }

  private remove(e: Open): void {
    if (!this.open.delete(e)) return;
    const left = (this.perUser.get(e.owner.userId) ?? 1) - 1;
    if (left > 0) this.perUser.set(e.owner.userId, left);
    else this.perUser.delete(e.owner.userId);
    if (this.open.size === 0) this.stopSweeping();
  }

  private startSweeping(): void {
    if (this.sweeper || this.sweepMs <= 0) return;
    this.sweeper = setInterval(() => this.sweep(), this.sweepMs);
    this.sweeper.unref();
  }

  private stopSweeping(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }
}
