// Which finished task runs may go. Without this the run history and its log files grow for as
// long as Quarry runs (and a distributed store has a quota). A run goes when it is older than
// the age limit, or when the history is over its count limit (oldest first) — but never:
// - a run that has not finished (its loop, its agent or its question still needs it);
// - one of the newest `keepPerStep` runs of an object and step: loops decide from the newest
//   run of a (target, step) (retry, back off, wait), and an operator asking "why is this disk
//   failed?" finds its last runs whatever their age. Objects that no longer exist keep
//   nothing: their runs age out like any other.
import { isFinished } from '../model/kinds.js';
import type { TaskRun } from './types.js';

export interface RetentionPolicy {
  /** Finished runs older than this (by completion) go; 0 keeps them whatever their age. */
  maxAgeMs: number;
  /** The history's size above which the oldest prunable runs go; 0: no count limit. */
  maxRuns: number;
  /** Newest runs kept per (object, step) of an object that exists, whatever the limits say. */
  keepPerStep: number;
}

export const DEFAULT_RETENTION: RetentionPolicy = Object.freeze({
  maxAgeMs: 30 * 24 * 3600_000,
  maxRuns: 50_000,
  keepPerStep: 3,
});

/**
 * The ids of the runs to delete, oldest first. `runs` is the whole history, oldest first;
 * `exists` says whether a run's target object is still in the store.
 */
export function prunable(
  runs: readonly TaskRun[],
  policy: RetentionPolicy,
  now: number,
  exists: (kind: string, id: string) => boolean,
): string[] {
  const protectedIds = newestPerStep(runs, policy.keepPerStep, exists);
  const candidates = runs.filter((r) => isFinished(r.status.state) && !protectedIds.has(r.id));
  const out = new Set<string>();
  if (policy.maxAgeMs > 0) {
    for (const r of candidates) if (now - finishedAt(r) > policy.maxAgeMs) out.add(r.id);
  }
  if (policy.maxRuns > 0) {
    let over = runs.length - out.size - policy.maxRuns;
    for (const r of candidates) {
      if (over <= 0) break;
      if (out.has(r.id)) continue;
      out.add(r.id);
      over -= 1;
    }
  }
  return candidates.filter((r) => out.has(r.id)).map((r) => r.id);
}

function newestPerStep(runs: readonly TaskRun[], keep: number, exists: (kind: string, id: string) => boolean): Set<string> {
  const kept = new Set<string>();
  const seen = new Map<string, number>();
  const live = new Map<string, boolean>();
  for (let i = runs.length - 1; i >= 0; i -= 1) {
    const r = runs[i] as TaskRun;
    const { targetKind, targetId, taskName } = r.spec;
    const target = `${targetKind}\u0000${targetId}`;
    let alive = live.get(target);
    if (alive === undefined) live.set(target, (alive = exists(targetKind, targetId)));
    if (!alive) continue;
    const key = `${target}\u0000${taskName}`;
    const n = seen.get(key) ?? 0;
    if (n >= keep) continue;
    seen.set(key, n + 1);
    kept.add(r.id);
  }
  return kept;
}

/** A finished run's end, or its creation when it has none recorded (an old record). */
function finishedAt(run: TaskRun): number {
  const at = Date.parse(run.status.completedAt ?? run.metadata.createdAt);
  return Number.isNaN(at) ? 0 : at;
}
