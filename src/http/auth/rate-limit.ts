// Failed-login throttling that slows guessing without letting anyone lock a user out.
//
// - (username, source address): the pair's own failures make that pair wait, with a delay that
//   doubles with each failure past a free allowance, up to a cap. Another source is not affected,
//   so an attacker's failures never keep the real user out from the real user's address.
// - source address, across usernames: a sliding-window budget against spraying one password
//   over many accounts.
// - username, across sources: a sliding-window ceiling far above what one source can reach
//   (the two limits above hold one source to about a dozen failures per window), against a
//   guess spread over many addresses. It makes new sources wait; it never applies to a source
//   that has logged in as that user before, and it ends on its own.
//
// Memory is bounded: past `maxKeys`, the least recently failed key is forgotten first.
import { RateLimitedError } from '../../errors.js';
import type { Clock } from '../../model/clock.js';

export interface LoginLimits {
  windowMs: number;
  /** Failures for one username from all sources inside the window before sources that have
   * never logged in as that user wait. Far above what one source can do. */
  perUser: number;
  /** Failures per client address across usernames; higher than a pair's allowance, because an
   * office or bastion shares one address. */
  perAddress: number;
  maxKeys: number;
  /** Failures of one (username, address) pair before it waits. */
  perPair?: number;
  /** The pair's first wait; each further failure doubles it, up to maxDelayMs. */
  pairDelayMs?: number;
  maxDelayMs?: number;
  /** How long an address that logged in as a user stays exempt from the user's ceiling and
   * its own address budget (it still has its pair's allowance). */
  knownSourceMs?: number;
}

export const DEFAULT_LOGIN_LIMITS: Required<LoginLimits> = Object.freeze({
  windowMs: 15 * 60_000,
  perUser: 100,
  perAddress: 20,
  maxKeys: 10_000,
  perPair: 5,
  pairDelayMs: 10_000,
  maxDelayMs: 15 * 60_000,
  knownSourceMs: 30 * 24 * 3600_000,
});

/**
 * Node agents: a 256-bit secret cannot be guessed, so there is no ceiling per agent at all (it
 * would only let anyone who computes `agent:<id>` from a MAC lock the agent out); the pair and
 * address limits just bound the work a source can cause.
 */
export const AGENT_LOGIN_LIMITS: Required<LoginLimits> = Object.freeze({
  windowMs: 15 * 60_000,
  perUser: Number.POSITIVE_INFINITY,
  perAddress: 100,
  maxKeys: 10_000,
  perPair: 5,
  pairDelayMs: 1_000,
  maxDelayMs: 60_000,
  knownSourceMs: 30 * 24 * 3600_000,
});

interface Entry {
  /** Failure times inside the window (user and address keys). */
  times?: number[];
  /** Pair keys: failures in a row, the last one, and the end of the current wait. */
  failures?: number;
  last?: number;
  until?: number;
}

export class LoginLimiter {
  private readonly entries = new Map<string, Entry>();
  /** (username, address) pairs that logged in, and until when they count as known. Apart from
   * the failures, so a flood of failures cannot push the real user's address out. */
  private readonly knownSources = new Map<string, number>();
  private readonly limits: Required<LoginLimits>;

  constructor(
    private readonly clock: Clock,
    limits: LoginLimits = DEFAULT_LOGIN_LIMITS,
  ) {
    this.limits = { ...DEFAULT_LOGIN_LIMITS, ...definedOnly(limits) };
  }

  /** Throws RateLimitedError (with the seconds until the attempt would be allowed) when the
   * pair waits, or a budget is spent. Called before any password work is done. */
  check(username: string, address: string): void {
    const wait = this.waitMs(username, address);
    if (wait > 0) throw new RateLimitedError(Math.max(1, Math.ceil(wait / 1000)), 'too many failed logins; try again later');
  }

  /** Milliseconds until an attempt of `username` from `address` is allowed; 0: now. */
  waitMs(username: string, address: string): number {
    const now = this.clock.now();
    const pair = this.entries.get(pairKey(username, address));
    let wait = pair?.until !== undefined ? pair.until - now : 0;
    if (!this.known(username, address)) {
      wait = Math.max(
        wait,
        this.windowWait(userKey(username), this.limits.perUser),
        this.windowWait(addressKey(address), this.limits.perAddress),
      );
    }
    return Math.max(0, wait);
  }

  fail(username: string, address: string): void {
    const now = this.clock.now();
    const l = this.limits;
    const key = pairKey(username, address);
    const pair = this.entries.get(key);
    // A pair quiet for a whole window after its last failure, or after its last wait ended,
    // starts over.
    const quietSince = Math.max(pair?.last ?? -Infinity, pair?.until ?? -Infinity);
    const failures = (now - quietSince > l.windowMs ? 0 : (pair?.failures ?? 0)) + 1;
    const next: Entry = { failures, last: now };
    if (failures >= l.perPair) next.until = now + Math.min(l.maxDelayMs, l.pairDelayMs * 2 ** Math.min(30, failures - l.perPair));
    this.put(key, next);
    if (Number.isFinite(l.perUser)) this.record(userKey(username), l.perUser);
    if (Number.isFinite(l.perAddress)) this.record(addressKey(address), l.perAddress);
  }

  /** A success ends the pair's wait, marks the address as one this user logs in from, and
   * clears the user's count; not the address's: a valid account must not reset the throttle
   * on guessing other accounts' passwords. */
  succeed(username: string, address?: string): void {
    this.entries.delete(userKey(username));
    if (address === undefined) return;
    const key = pairKey(username, address);
    this.entries.delete(key);
    this.knownSources.delete(key);
    this.knownSources.set(key, this.clock.now() + this.limits.knownSourceMs);
    const oldest = this.knownSources.size > this.limits.maxKeys ? this.knownSources.keys().next() : null;
    if (oldest && !oldest.done) this.knownSources.delete(oldest.value);
  }

  /** Failure keys held (pairs, users, addresses): bounded by maxKeys. */
  get size(): number {
    return this.entries.size;
  }

  private known(username: string, address: string): boolean {
    return (this.knownSources.get(pairKey(username, address)) ?? 0) > this.clock.now();
  }

  private windowWait(key: string, limit: number): number {
    if (!Number.isFinite(limit)) return 0;
    const times = this.recent(key);
    if (times.length < limit) return 0;
    const oldest = times[times.length - limit] ?? this.clock.now();
    return oldest + this.limits.windowMs - this.clock.now();
  }

  private record(key: string, limit: number): void {
    const times = this.recent(key);
    times.push(this.clock.now());
    this.put(key, { times: times.slice(-limit) });
  }

  private put(key: string, entry: Entry): void {
    // Re-insert so the map's order is "least recently written first".
    this.entries.delete(key);
    this.entries.set(key, entry);
    while (this.entries.size > this.limits.maxKeys) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
  }

  private recent(key: string): number[] {
    const since = this.clock.now() - this.limits.windowMs;
    return (this.entries.get(key)?.times ?? []).filter((t) => t > since);
  }
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

const name = (username: string): string => username.toLowerCase();
const userKey = (username: string): string => `u:${name(username)}`;
const addressKey = (address: string): string => `a:${address}`;
// The address goes first and never holds a newline, so no username can make two pairs collide.
const pairKey = (username: string, address: string): string => `p:${address}\n${name(username)}`;
