// Time and identity are injected so tests control them.
import { randomUUID } from 'node:crypto';

export interface Clock {
  now(): number;
  iso(): string;
}

/** Calls within one millisecond get the same string, not equal copies: timestamps end up in
 * stored conditions, and a burst of reconciles at 10k nodes left 166,000 of them in the heap
 * with 11,700 distinct values (6 MB). A cache of a function of the time, so safe to share. */
function wallClock(): Clock {
  let lastMs = Number.NaN;
  let lastIso = '';
  return {
    now: () => Date.now(),
    iso: () => {
      const ms = Date.now();
      if (ms !== lastMs) {
        lastIso = new Date(ms).toISOString();
        lastMs = ms;
      }
      return lastIso;
    },
  };
}

export const systemClock: Clock = wallClock();

/** A clock tests move by hand. */
export class ManualClock implements Clock {
  constructor(private ms = Date.parse('2026-01-01T00:00:00Z')) {}
  now(): number {
    return this.ms;
  }
  iso(): string {
    return new Date(this.ms).toISOString();
  }
  advance(ms: number): void {
    this.ms += ms;
  }
}

export type IdGen = () => string;
export const uuid: IdGen = () => randomUUID();
