// The reconciler contract. A reconciler is level-triggered and keyed by object id: it reads
// everything it needs each time and never branches on what woke it.
import type { AnyDoc } from '../model/document.js';

export type Result =
  | { type: 'done' }
  | { type: 'requeue'; afterMs: number }
  /** A gate or a prerequisite is not met; the reconciler has already written a Blocked
   * condition. The manager looks again after retryAfterMs, or earlier when a watch fires. */
  | { type: 'blocked'; reason: string; message: string; retryAfterMs: number };

export const done = (): Result => ({ type: 'done' });
export const requeueAfter = (afterMs: number): Result => ({ type: 'requeue', afterMs });
export const blocked = (reason: string, message: string, retryAfterMs = 30_000): Result => ({
  type: 'blocked',
  reason,
  message,
  retryAfterMs,
});

/** A change to a document of `kind` wakes the ids this returns, in the watching loop. */
export interface WatchMapping {
  kind: string;
  map(doc: AnyDoc): string[];
}

export interface ReconcileContext {
  signal: AbortSignal;
}

/**
 * observe → plan → apply. Errors thrown by observe or apply are retried with per-key backoff,
 * except TerminalError, which stops retries until the object changes.
 */
export interface Reconciler<Observed = unknown, Plan = unknown> {
  /** Loop name: 'node', 'mon', ... Keys in the queue are `${name}/${id}`. */
  readonly name: string;
  /** The kind whose ids this loop reconciles; a change to one wakes that id. */
  readonly kind: string;
  /** Other kinds whose changes wake ids of this loop. */
  readonly watches?: WatchMapping[];
  /** Which changes of its own kind wake an id: 'any' (the default), or 'spec' — a created,
   * deleted or re-specified object, not a status-only write (Kubernetes' GenerationChanged
   * predicate). For a loop that polls and is the only writer of its kind's status: otherwise
   * each write of what it polled wakes it again, as fast as its turns come, for as long as what
   * it polls keeps moving (the cluster loop during an OSD burst). */
  readonly wakesOn?: 'any' | 'spec';
  /** Loops that must have converged first (documentation and ordering in the README). */
  readonly dependsOn?: string[];
  /** undefined: the object is gone and there is nothing to do. */
  observe(id: string, ctx: ReconcileContext): Promise<Observed | undefined>;
  /** Pure: no I/O, no clock, no randomness beyond what observe captured. */
  plan(observed: Observed): Plan;
  apply(observed: Observed, plan: Plan, ctx: ReconcileContext): Promise<Result>;
}

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
/** The manager's only output besides the queue: structured log lines for the composition root
 * to route wherever it likes. */
export type Logger = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => void;
