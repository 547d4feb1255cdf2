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
  /** The store revision of the run's last write: orders runs of different tasks (an OSD's
   * `out` and `in`) even when they finished within the same millisecond. */
  revision?: number;
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
    revision: run.metadata.resourceVersion,
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

/**
 * What to do about a step given its last run, as every Ceph plan words it: a run in progress
 * (busy), a wait for the backoff, or a new attempt; `failed` once FAILED_AFTER attempts failed
 * (retries go on), and a message that carries the last error.
 */
export type NextAttempt =
  | { kind: 'busy'; message: string }
  | {
      kind: 'wait' | 'start';
      attempt: number;
      failed: boolean;
      reason: 'RetryBackoff' | 'Retrying' | 'Starting';
      message: string;
      waitMs: number;
    };

export function nextAttempt(last: RunInfo | null, now: number, baseMs: number, what: string): NextAttempt {
  if (isActive(last)) return { kind: 'busy', message: what };
  const r = retry(last, now, baseMs);
  const failing = last !== null && last.state !== 'completed';
  const failed = failing && last.attempt >= FAILED_AFTER;
  const message = failing ? `${what}; attempt ${last.attempt} failed: ${last.error ?? 'unknown error'}` : what;
  if (r.kind === 'wait') return { kind: 'wait', attempt: r.attempt, failed, reason: 'RetryBackoff', message, waitMs: r.ms + 1 };
  return { kind: 'start', attempt: r.attempt, failed, reason: failing ? 'Retrying' : 'Starting', message, waitMs: 0 };
}

/** The outcome of a one-shot creation step (a filesystem, an RGW user), in the words of the
 * plans whose phases are `creating` / `failed`. */
export type CreateAttempt = {
  phase: 'creating' | 'failed';
  reason: string;
  message: string;
  step?: { kind: 'create'; attempt: number };
  requeueAfterMs?: number;
};

export function createAttempt(last: RunInfo | null, now: number, baseMs: number, what: string): CreateAttempt {
  const next = nextAttempt(last, now, baseMs, what);
  if (next.kind === 'busy') return { phase: 'creating', reason: 'Creating', message: `${what} (run ${last!.id})` };
  const phase = next.failed ? 'failed' : 'creating';
  if (next.kind === 'wait') return { phase, reason: next.reason, message: next.message, requeueAfterMs: next.waitMs };
  return {
    phase,
    reason: next.reason === 'Starting' ? 'Creating' : next.reason,
    message: next.message,
    step: { kind: 'create', attempt: next.attempt },
  };
}

/** `a` finished (completed) after `b` did anything: the later of two runs that undo each other. */
export const completedAfter = (a: RunInfo | null, b: RunInfo | null): boolean =>
  a?.state === 'completed' && (b === null || (a.revision ?? a.completedAt ?? 0) > (b.revision ?? b.completedAt ?? 0));
