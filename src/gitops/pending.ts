// What a file waits for, followed over time: each pending entry keeps the time it first
// appeared, a node declared but not seen for longer than the grace becomes `NotSeen`, and an
// entry that appears, changes reason or goes is an event, once — the folder re-applies every
// file on each world change, so the events are the difference with the last apply, never a
// repeat (docs/api-conventions.md, "Pending"). trackPending is pure: the folder hands in the clock.
import type { Pending } from './types.js';

export const PendingReason = {
  /** No machine with the file's MAC or hostname has booted yet. */
  NodeNotDiscovered: 'NodeNotDiscovered',
  /** The same, for longer than the grace (NODE_UNSEEN_GRACE_MS): a mistyped MAC, a machine off. */
  NotSeen: 'NotSeen',
  /** An `all` selector takes no disk of its node. */
  SelectorMatchesNothing: 'SelectorMatchesNothing',
  /** An `all` selector's node has not reported its disks yet. */
  DisksNotReported: 'DisksNotReported',
  /** New OSDs wait for a removed monitor to stop: its store is on one of the disks. */
  MonitorStopping: 'MonitorStopping',
} as const;

/** Reasons that resolve by themselves in the normal course (a machine booting, a monitor
 * stopping): said at info. Any other pending reason needs an operator's look: a warning. */
const EXPECTED = new Set<string>([PendingReason.NodeNotDiscovered, PendingReason.DisksNotReported, PendingReason.MonitorStopping]);

export type PendingSeverity = 'info' | 'warning';
export const pendingSeverity = (reason: string): PendingSeverity => (EXPECTED.has(reason) ? 'info' : 'warning');

/** The payload of `specs.pending` (an entry appeared or its reason changed) and of
 * `specs.pending.cleared` (it went: resolved, or no longer declared; the entry as it was). */
export interface PendingEventPayload extends Pending {
  file: string;
  since: string;
  severity: PendingSeverity;
}

export type PendingEventType = 'specs.pending' | 'specs.pending.cleared';

interface Tracked {
  since: string;
  shown: Pending;
}

/** A file's pending entries as last recorded, by the identity of what resolve said. */
export type PendingTrack = ReadonlyMap<string, Tracked>;

export interface Tracking {
  /** The entries to show, each with `since` (and NotSeen past the grace). */
  pending: Pending[];
  track: PendingTrack;
  events: Array<{ type: PendingEventType; payload: PendingEventPayload }>;
  /** When a NodeNotDiscovered entry passes the grace (ms), for the folder to look again; null: none. */
  recheckAt: number | null;
}

/** The identity of an entry as resolve said it: the same object waiting for the same thing (a
 * node's MAC is in its message, so a corrected MAC is a new entry, with a new `since`). */
const keyOf = (p: Pending): string => JSON.stringify([p.kind, p.name, p.id ?? '', p.reason, p.message]);

/** `raw`: this apply's entries as resolve said them; `prev`: the last apply's track. */
export function trackPending(file: string, prev: PendingTrack, raw: readonly Pending[], nowMs: number, graceMs: number): Tracking {
  const track = new Map<string, Tracked>();
  const events: Tracking['events'] = [];
  let recheckAt: number | null = null;
  for (const p of raw) {
    const key = keyOf(p);
    if (track.has(key)) continue;
    const old = prev.get(key);
    const since = old?.since ?? new Date(nowMs).toISOString();
    let shown: Pending = { ...p, since };
    if (p.reason === PendingReason.NodeNotDiscovered) {
      const due = Date.parse(since) + graceMs;
      if (nowMs >= due) shown = { ...shown, reason: PendingReason.NotSeen, message: notSeenMessage(p.message, since, graceMs) };
      else recheckAt = Math.min(recheckAt ?? due, due);
    }
    track.set(key, { since, shown });
    if (!old || old.shown.reason !== shown.reason) events.push({ type: 'specs.pending', payload: payload(file, shown, since) });
  }
  for (const [key, old] of prev)
    if (!track.has(key)) events.push({ type: 'specs.pending.cleared', payload: payload(file, old.shown, old.since) });
  return { pending: [...track.values()].map((x) => x.shown), track, events, recheckAt };
}

const payload = (file: string, p: Pending, since: string): PendingEventPayload => ({
  file,
  ...p,
  since,
  severity: pendingSeverity(p.reason),
});

function notSeenMessage(raw: string, since: string, graceMs: number): string {
  return `not seen since ${since} (longer than ${duration(graceMs)}): ${raw}; check the MAC or hostname in the file, and that the machine is powered on and boots from the network`;
}

/** 300000 → "5 min", 1500 → "1.5 s". */
export function duration(ms: number): string {
  if (ms >= 3_600_000 && ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms >= 60_000) return `${+(ms / 60_000).toFixed(1)} min`;
  return `${+(ms / 1000).toFixed(1)} s`;
}

/** One timer for every file's next recheck (a node passing the grace): `due(file)` is called
 * once that file's time has come. */
export class Rechecks {
  private readonly at = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly nowMs: () => number,
    private readonly due: (file: string) => void,
  ) {}

  /** `at` null: nothing to look at again for this file. */
  set(file: string, at: number | null): void {
    if (at === null) this.at.delete(file);
    else this.at.set(file, at);
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  private schedule(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.stopped || this.at.size === 0) return;
    const next = Math.min(...this.at.values());
    this.timer = setTimeout(() => this.fire(), Math.max(0, next - this.nowMs()));
    this.timer.unref();
  }

  private fire(): void {
    this.timer = null;
    const now = this.nowMs();
    for (const [file, at] of this.at) {
      if (at > now) continue;
      this.at.delete(file);
      this.due(file);
    }
    this.schedule();
  }
}
