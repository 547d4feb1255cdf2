// Failed-login throttling: a sliding window of failure times per key (one key per username,
// one per client address). Memory is bounded: past `maxKeys`, the least recently failed key
// is forgotten first.
import { RateLimitedError } from '../../errors.js';
import type { Clock } from '../../model/clock.js';

export interface LoginLimits {
  windowMs: number;
  /** Failures per username inside the window before attempts are refused. */
  perUser: number;
  /** Failures per client address; higher, because an office or bastion shares one address. */
  perAddress: number;
  maxKeys: number;
}

export const DEFAULT_LOGIN_LIMITS: LoginLimits = Object.freeze({ windowMs: 15 * 60_000, perUser: 5, perAddress: 20, maxKeys: 10_000 });

export class LoginLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly clock: Clock,
    private readonly limits: LoginLimits = DEFAULT_LOGIN_LIMITS,
  ) {}

  /** Throws RateLimitedError (with the seconds until the oldest failure leaves the window)
   * when either key is at its limit. Called before any password work is done. */
  check(username: string, address: string): void {
    const wait = Math.max(this.waitMs(userKey(username), this.limits.perUser), this.waitMs(addressKey(address), this.limits.perAddress));
    if (wait > 0) throw new RateLimitedError(Math.ceil(wait / 1000), 'too many failed logins; try again later');
  }

  fail(username: string, address: string): void {
    this.record(userKey(username));
    this.record(addressKey(address));
  }

  /** A success clears the user's count, not the address's: a valid account must not reset
   * the throttle on guessing other accounts' passwords. */
  succeed(username: string): void {
    this.failures.delete(userKey(username));
  }

  private waitMs(key: string, limit: number): number {
    const times = this.recent(key);
    if (times.length < limit) return 0;
    const oldest = times[times.length - limit] ?? this.clock.now();
    return oldest + this.limits.windowMs - this.clock.now();
  }

  private record(key: string): void {
    const times = this.recent(key);
    times.push(this.clock.now());
    // Re-insert so the map's order is "least recently failed first".
    this.failures.delete(key);
    this.failures.set(key, times.slice(-Math.max(this.limits.perUser, this.limits.perAddress)));
    if (this.failures.size > this.limits.maxKeys) {
      const oldest = this.failures.keys().next();
      if (!oldest.done) this.failures.delete(oldest.value);
    }
  }

  private recent(key: string): number[] {
    const since = this.clock.now() - this.limits.windowMs;
    return (this.failures.get(key) ?? []).filter((t) => t > since);
  }
}

const userKey = (username: string): string => `u:${username.toLowerCase()}`;
const addressKey = (address: string): string => `a:${address}`;
