// Retry delays and the timer seam of the work queue. Both are injected so tests decide when
// time passes and what "random" is.

export interface BackoffOptions {
  /** Delay after the first failure. */
  baseMs: number;
  /** No delay ever exceeds this, jitter included. */
  capMs: number;
  /** Fraction (0..1) of the delay that is randomised downwards, so keys that failed together
   * do not all retry in the same tick. 0 gives exact powers of two. */
  jitter?: number;
}

/** controller-runtime's item limiter: 5 ms doubling to a 5 minute ceiling. */
export const defaultBackoff: Required<BackoffOptions> = { baseMs: 5, capMs: 300_000, jitter: 0.2 };

/**
 * The delay before retry number `failures + 1`: min(cap, base·2^failures), then scaled into
 * [(1 − jitter)·d, d] by `random()` ∈ [0, 1). Scaling downwards keeps the cap a hard bound.
 */
export function backoffDelay(failures: number, opts: BackoffOptions = defaultBackoff, random: () => number = Math.random): number {
  const jitter = clamp(opts.jitter ?? defaultBackoff.jitter, 0, 1);
  // 2 ** 1100 is Infinity, which min() handles; a negative count is treated as a first failure.
  const exp = Math.min(opts.capMs, opts.baseMs * 2 ** Math.max(0, failures));
  const r = clamp(random(), 0, 1);
  return Math.round(exp * (1 - jitter * r));
}

function clamp(x: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, x));
}

/** What the queue needs of time: a reading and a cancellable one-shot timer. */
export interface Timers {
  now(): number;
  /** Runs fn once after ms; the returned function cancels it. */
  schedule(fn: () => void, ms: number): () => void;
}

/** Real timers, unref'd: a pending retry or resync must never keep the process alive. */
export const realTimers: Timers = {
  now: () => Date.now(),
  schedule(fn, ms) {
    const t = setTimeout(fn, ms);
    t.unref();
    return () => clearTimeout(t);
  },
};

/** Timers that only move when a test says so. */
export class ManualTimers implements Timers {
  private current = 0;
  private seq = 0;
  private readonly pending = new Map<number, { at: number; fn: () => void }>();

  now(): number {
    return this.current;
  }

  schedule(fn: () => void, ms: number): () => void {
    const id = this.seq++;
    this.pending.set(id, { at: this.current + Math.max(0, ms), fn });
    return () => this.pending.delete(id);
  }

  /** Delays (from now) of every scheduled timer, soonest first. */
  delays(): number[] {
    return [...this.pending.values()].map((p) => p.at - this.current).sort((a, b) => a - b);
  }

  /** Moves time forward, firing due timers in time order (ties in scheduling order). */
  advance(ms: number): void {
    const target = this.current + ms;
    for (;;) {
      const next = this.nextDue(target);
      if (!next) break;
      this.pending.delete(next[0]);
      this.current = next[1].at;
      next[1].fn();
    }
    this.current = target;
  }

  private nextDue(limit: number): [number, { at: number; fn: () => void }] | undefined {
    let best: [number, { at: number; fn: () => void }] | undefined;
    for (const entry of this.pending) {
      if (entry[1].at <= limit && (!best || entry[1].at < best[1].at)) best = entry;
    }
    return best;
  }
}
