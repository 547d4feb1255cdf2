// Fencing's runs on the master (fencing.ts decides them): the BMC read and the power-cycle of a
// hung node, through the node's BMC as its spec says now.
import type { Script, StartRequest } from '../../src/tasks/types.js';
import type { BmcApi } from '../../src/clients/bmc.js';
import type { NodeObserved } from './plan.js';
import { FenceTask } from './fencing.js';
import { bmcTarget, powerCycleScript, powerStatusScript } from './power-scripts.js';

export function fenceRun(
  deps: { bmc?: BmcApi; runTimeoutMs: number },
  o: NodeObserved,
  step: { taskName: FenceTask; request: number; attempt: number },
  target: StartRequest['target'],
): StartRequest {
  const bmcSpec = o.node.spec.bmc;
  const script: Script =
    !bmcSpec || !deps.bmc
      ? () => Promise.reject(new Error(!bmcSpec ? 'the node has no BMC declared' : 'this Quarry has no BMC client'))
      : step.taskName === FenceTask.status
        ? powerStatusScript(deps.bmc, bmcTarget(bmcSpec))
        : powerCycleScript(deps.bmc, bmcTarget(bmcSpec));
  return {
    taskName: step.taskName,
    target,
    node: null,
    args: { request: step.request },
    attempt: step.attempt,
    timeoutMs: deps.runTimeoutMs,
    script,
  };
}
