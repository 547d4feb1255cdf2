// The one apply: write the loop's status part (the writer skips an unchanged one), carry out
// the step (start its run, or the loop's own effect), map the plan to a Result. A loop keeps
// only observe, its pure plan, and `act`: the step → StartRequest translation it alone knows.
import type { StartRequest, TaskRun } from '../../tasks/types.js';
import type { Result } from '../types.js';
import type { LoopPlan } from './plan.js';
import { resultOf, type ResultTimings } from './result.js';

export interface LoopEffects<O, Status, Step> extends ResultTimings {
  /** Writes the plan's status part, scoped to the loop's fields (writeOwned). A Result ends
   * the apply there (the node loop: its observation went stale, look again at once); a write
   * with nothing to say resolves to undefined (`writeOwned(...).then(() => undefined)`). */
  write(o: O, status: Status): Promise<Result | undefined>;
  /** The step as runs to start; or a Result when the loop did something of its own instead
   * (a uuid stored, keys made) and wants that Result; or null for nothing more to do. */
  act(o: O, step: Step): Promise<Act> | Act;
  /** Starts a run (the task service); absent for a loop that has no steps (the cluster loop). */
  start?(req: StartRequest): Promise<TaskRun>;
  /** Start the step before writing status: for a loop whose status acknowledges a request
   * (the node loop), so a crash in between repeats the run rather than losing the request. */
  stepFirst?: boolean;
  /** Whether this step's runs are independent of each other (the disk loop's purge and zap):
   * then they are recorded at once, in one commit of the store, rather than each after the one
   * before it. Each is still recorded before it acts, and they are asked for in their order. A
   * question about the step, not the loop: the same loop's other pairs (an OSD step and a wipe
   * step) keep their order. */
  startTogether?: (step: Step) => boolean;
}

/** What a step comes to: runs to start (usually one), a Result of the loop's own, or nothing. */
export type Act = StartRequest | StartRequest[] | Result | null;

const isResult = (x: NonNullable<Act>): x is Result => !Array.isArray(x) && 'type' in x;

export async function applyPlan<O, Status, Step>(fx: LoopEffects<O, Status, Step>, o: O, plan: LoopPlan<Status, Step>): Promise<Result> {
  const step = async (): Promise<Result | undefined> => {
    if (plan.step === null) return undefined;
    const out = await fx.act(o, plan.step);
    if (out && isResult(out)) return out;
    const reqs = out === null ? [] : Array.isArray(out) ? out : [out];
    const start = (req: StartRequest): Promise<TaskRun> => {
      if (!fx.start) throw new Error(`no task service to start ${req.taskName}`);
      return fx.start(req);
    };
    if (reqs.length > 1 && fx.startTogether?.(plan.step)) {
      // Asked for in order, in the same tick: the store's group commit writes them together.
      await Promise.all(reqs.map(start));
      return undefined;
    }
    // In order: a loop that starts two runs (the disk's OSD and wipe steps) gets them in its order.
    for (const req of reqs) await start(req);
  };
  const first = fx.stepFirst ? step : () => fx.write(o, plan.status);
  const second = fx.stepFirst ? () => fx.write(o, plan.status) : step;
  return (await first()) ?? (await second()) ?? resultOf(plan, fx);
}
