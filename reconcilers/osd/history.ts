// A disk's history: the events of its OSDs' lives (created, adopted, destroyed, replaced-by,
// replaces, removed, zapped), newest last, at most DISK_HISTORY_MAX kept. A plan names the
// entries a transition adds; the writer appends them once, because the plan that adds them is
// the one that moves the phase on, and the next plan starts from the new phase.
import { DISK_HISTORY_MAX, type DiskHistoryEntry } from '../../src/model/kinds.js';

export type HistoryEvent = DiskHistoryEntry['event'];

export const entry = (at: string, event: HistoryEvent, osdId: number | null, message: string, otherSerial?: string): DiskHistoryEntry =>
  otherSerial === undefined ? { at, event, osdId, message } : { at, event, osdId, otherSerial, message };

/** The history with `added` appended, the oldest dropped beyond the bound. */
export function appendHistory(
  cur: readonly DiskHistoryEntry[] | undefined,
  added: readonly DiskHistoryEntry[],
): DiskHistoryEntry[] | undefined {
  if (added.length === 0) return cur ? [...cur] : undefined;
  return [...(cur ?? []), ...added].slice(-DISK_HISTORY_MAX);
}
