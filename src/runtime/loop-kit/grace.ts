// The one grace rule for "started; waiting for the agent to report": an agent tells what runs
// on its heartbeat, so a step that completed (a start, a restart, a stop, a wipe) is given
// `graceMs` to show up in the node's report before the loop acts again. Used by the osd, mon,
// daemon and wipe plans, for starts and stops alike.
import type { RunInfoLike } from './runs.js';

/**
 * The wait (ms, always > 0) while the grace that began at `since` runs; null once it is over
 * (or when nothing began: `since` null), when the loop may act again. The extra millisecond
 * makes the requeue land just after the deadline rather than on it.
 */
export function graceWait(since: number | null, now: number, graceMs: number): number | null {
  if (since === null) return null;
  const left = since + graceMs - now;
  return left > 0 ? left + 1 : null;
}

/** When a run's grace begins: its completion, for a completed run; otherwise none. */
export const completedAt = (run: RunInfoLike | null | undefined): number | null => (run?.state === 'completed' ? run.completedAt : null);
