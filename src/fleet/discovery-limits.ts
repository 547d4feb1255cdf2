// How many machines may be discovered, and how fast: GET /boot/config is public, and before
// these limits anyone could fill the store with random MACs (3,000 in 6.4 s). Discoveries (a
// MAC the master has never seen) are rate-limited per source address with a token bucket, and
// the number of unapproved nodes is capped; beyond either the answer is 429 RATE_LIMITED and
// nothing is created. Known machines asking again are not charged: their polls create nothing.
import { RateLimitedError } from '../errors.js';
import type { Clock } from '../model/clock.js';

export interface DiscoveryLimits {
  /** Unapproved nodes kept at most. */
  maxUnapproved: number;
  /** Discoveries one address may make at once ... */
  burst: number;
  /** ... and then this many per minute. */
  perMinute: number;
}

export const DEFAULT_DISCOVERY_LIMITS: DiscoveryLimits = { maxUnapproved: 256, burst: 16, perMinute: 6 };

export interface Bucket {
  tokens: number;
  at: number;
}

/** Takes one token from the bucket refilled since `at`; pure. */
export function takeToken(
  b: Bucket | undefined,
  now: number,
  burst: number,
  perMinute: number,
): { ok: boolean; bucket: Bucket; retryAfterMs: number } {
  const refill = perMinute / 60_000;
  const tokens = b ? Math.min(burst, b.tokens + Math.max(0, now - b.at) * refill) : burst;
  if (tokens >= 1) return { ok: true, bucket: { tokens: tokens - 1, at: now }, retryAfterMs: 0 };
  return { ok: false, bucket: { tokens, at: now }, retryAfterMs: refill > 0 ? Math.ceil((1 - tokens) / refill) : 60_000 };
}

/** Buckets kept at most; full ones are dropped first (they say nothing a new bucket would not). */
const MAX_BUCKETS = 10_000;

export class DiscoveryGuard {
  private readonly buckets = new Map<string, Bucket>();

  constructor(
    readonly limits: DiscoveryLimits,
    private readonly clock: Clock,
  ) {}

  /** Discoveries past the cap check whose node is not committed (or failed) yet. */
  private reserved = 0;

  /** Takes a discovery token of `address`; throws RateLimitedError when it has none left. Asked
   * before the store is searched for a MAC that is not a node's id, so a flood of random MACs
   * costs a map lookup each. */
  take(address: string): void {
    const now = this.clock.now();
    const r = takeToken(this.buckets.get(address), now, this.limits.burst, this.limits.perMinute);
    this.buckets.delete(address); // re-inserted last: the map stays in least-recent order
    this.buckets.set(address, r.bucket);
    this.prune(now);
    if (!r.ok)
      throw new RateLimitedError(Math.max(1, Math.ceil(r.retryAfterMs / 1000)), 'too many new machines from this address; ask again later');
  }

  /** The token back: the MAC was a known node's after all (one of its further NICs). */
  refund(address: string): void {
    const b = this.buckets.get(address);
    if (b) b.tokens = Math.min(this.limits.burst, b.tokens + 1);
  }

  /** A place among the MAX_UNAPPROVED_NODES for a discovery about to be committed; throws
   * RateLimitedError when they are taken. The place is held until `release` (after the commit,
   * or when the request fails), so requests made together cannot all pass on one count. */
  reserve(unapproved: number): () => void {
    if (unapproved + this.reserved >= this.limits.maxUnapproved) {
      throw new RateLimitedError(
        60,
        `${unapproved + this.reserved} discovered machines wait for approval already (MAX_UNAPPROVED_NODES); approve or remove some`,
      );
    }
    this.reserved++;
    let held = true;
    return () => {
      if (held) this.reserved--;
      held = false;
    };
  }

  private prune(now: number): void {
    if (this.buckets.size <= MAX_BUCKETS) return;
    for (const [k, b] of this.buckets) {
      if (this.buckets.size <= MAX_BUCKETS * 0.9) break;
      const full = takeToken(b, now, this.limits.burst, this.limits.perMinute).bucket.tokens >= this.limits.burst - 1;
      if (full || this.buckets.size > MAX_BUCKETS) this.buckets.delete(k);
    }
  }
}
