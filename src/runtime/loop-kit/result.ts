// The one Plan → Result mapping: a gate is `blocked` (looked at again after the plan's own wait
// or the loop's recheck delay), a wait is a requeue, and otherwise the loop is done, or polls
// again after `idleMs` for loops that watch something nobody announces (Ceph, NICs).
import { blocked, done, requeueAfter, type Result } from '../types.js';
import type { LoopPlan } from './plan.js';

export interface ResultTimings {
  /** How soon a blocked object looks at its gate again, unless the plan says otherwise. */
  recheckMs: number;
  /** Polling loops: look again after this long when the plan has nothing to wait for. */
  idleMs?: number;
}

export function resultOf(plan: Pick<LoopPlan<unknown, unknown>, 'gate' | 'requeueAfterMs'>, t: ResultTimings): Result {
  if (plan.gate) return blocked(plan.gate.reason, plan.gate.message, plan.requeueAfterMs ?? t.recheckMs);
  if (plan.requeueAfterMs !== null) return requeueAfter(plan.requeueAfterMs);
  return t.idleMs !== undefined ? requeueAfter(t.idleMs) : done();
}
