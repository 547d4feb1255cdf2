// Time and identity are injected so tests control them.
import { randomUUID } from 'node:crypto';

export interface Clock {
  now(): number;
  iso(): string;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  iso: () => new Date().toISOString(),
};

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
