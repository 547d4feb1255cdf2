// A data-bearing deletion (a filesystem, an RGW user), pure: a file's `state: absent` sets
// spec.absent, which bumps the object's generation; the loop then asks an operator (a question
// run naming what goes) and deletes only after "yes". "no" keeps the object, says who declined
// and when, and nothing more is done for that generation: declaring it present and then absent
// again (or any other change of its spec) asks again. Runs carry the generation they act for.
import { nextAttempt, isActive, type RunInfo } from './runs.js';

export const DELETE_OPTIONS = ['yes', 'no'] as const;

/** The question run with who answered it (from its question), and the deletion run. */
export interface DeletionObserved {
  generation: number;
  confirmRun: (RunInfo & { answeredBy?: string; answeredAt?: string }) | null;
  deleteRun: RunInfo | null;
  now: number;
  retryBaseMs: number;
}

export const NO_DELETION: Pick<DeletionObserved, 'confirmRun' | 'deleteRun'> = { confirmRun: null, deleteRun: null };

export type DeletionStep = { kind: 'confirm'; attempt: number } | { kind: 'delete'; attempt: number };

export interface DeletionOutcome {
  /** asking/deleting: in progress; declined/canceled: kept, nothing more to do; deleted: the
   * loop removes the document. */
  state: 'asking' | 'deleting' | 'declined' | 'canceled' | 'deleted';
  reason: string;
  message: string;
  step?: DeletionStep;
  requeueAfterMs?: number;
}

/** `what`: the object in words ("filesystem cephfs"). */
export function planDeletion(o: DeletionObserved, what: string): DeletionOutcome {
  const mine = <R extends RunInfo>(r: R | null): R | null => (r && r.args.generation === o.generation ? r : null);
  const del = mine(o.deleteRun);
  if (del?.state === 'completed') return { state: 'deleted', reason: 'Deleted', message: `${what} was deleted` };
  if (del?.state === 'canceled')
    return { state: 'canceled', reason: 'DeletionCanceled', message: `the deletion run of ${what} was canceled; it may be partly deleted` };
  if (del) return attempt(o, del, 'delete', `deleting ${what}`);
  const confirm = mine(o.confirmRun);
  if (isActive(confirm))
    return { state: 'asking', reason: 'AwaitingAnswer', message: `waiting for an operator to answer the question of run ${confirm!.id}` };
  if (confirm?.state === 'completed') {
    if (confirm.result?.answer === 'yes') return attempt(o, null, 'delete', `deleting ${what}`);
    const when = confirm.answeredAt ?? (confirm.completedAt === null ? null : new Date(confirm.completedAt).toISOString());
    const who = [confirm.answeredBy, when && `at ${when}`].filter(Boolean).join(', ');
    return {
      state: 'declined',
      reason: 'DeletionDeclined',
      message:
        `the operator${who ? ` (${who})` : ''} declined to delete ${what}; it is kept with its data. ` +
        'To ask again, declare it present and then absent again',
    };
  }
  if (confirm?.state === 'canceled')
    return { state: 'canceled', reason: 'DeletionCanceled', message: `the question about deleting ${what} was canceled; it is kept` };
  return attempt(o, confirm, 'confirm', `asking before deleting ${what}`);
}

function attempt(o: DeletionObserved, last: RunInfo | null, kind: DeletionStep['kind'], what: string): DeletionOutcome {
  const state = kind === 'confirm' ? 'asking' : 'deleting';
  const next = nextAttempt(last, o.now, o.retryBaseMs, what);
  if (next.kind === 'busy') return { state, reason: kind === 'confirm' ? 'Asking' : 'Deleting', message: `${what} (run ${last!.id})` };
  if (next.kind === 'wait') return { state, reason: 'RetryBackoff', message: next.message, requeueAfterMs: next.waitMs };
  return { state, reason: kind === 'confirm' ? 'Asking' : 'Deleting', message: next.message, step: { kind, attempt: next.attempt } };
}

/** A question or deletion run of this generation is pending or running. */
export const deletionActive = (o: Pick<DeletionObserved, 'confirmRun' | 'deleteRun'>, generation: number): boolean =>
  [o.confirmRun, o.deleteRun].some((r) => r !== null && r.args.generation === generation && isActive(r));
