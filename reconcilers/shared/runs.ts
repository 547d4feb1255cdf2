// The run history a loop plans from, reduced to plain data, and the one retry rule the Ceph
// loops share: back off exponentially after a failure, keep trying, say so after three.
import type { TaskRun } from '../../src/tasks/types.js';
import type { RunState } from '../../src/model/kinds.js';

export interface RunInfo {
  id: string;
  state: RunState;
  attempt: number;
  completedAt: number | null;
  error: string | null;
  args: Record<string, unknown>;
  result: Record<string, unknown> | null;
}

export function runInfo(run: TaskRun | undefined): RunInfo | null {
  if (!run) return null;
  return {
    id: run.id,
    state: run.status.state,
    attempt: run.spec.attempt,
    completedAt: run.status.completedAt ? Date.parse(run.status.completedAt) : null,
    error: run.status.error,
    args: run.spec.args,
    result: run.status.result,
  };
}

export const isActive = (r: RunInfo | null): boolean => r !== null && (r.state === 'pending' || r.state === 'running');

export const RETRY_CAP_MS = 5 * 60_000;
/** After this many failed attempts the daemon shows as failed (still retried, more slowly). */
export const FAILED_AFTER = 3;

export type RetryDecision = { kind: 'now'; attempt: number } | { kind: 'wait'; ms: number; attempt: number };

/** When to try again after `last` (null: never tried). */
export function retry(last: RunInfo | null, now: number, baseMs: number): RetryDecision {
  if (!last || last.state === 'completed') return { kind: 'now', attempt: 1 };
  const attempt = last.attempt + 1;
  const due = (last.completedAt ?? now) + Math.min(RETRY_CAP_MS, baseMs * 2 ** (last.attempt - 1));
  return now >= due ? { kind: 'now', attempt } : { kind: 'wait', ms: due - now, attempt };
}
