// Every node-level step a real agent carries out, keyed by the catalogue's names (src/catalogue/
// steps.ts): a step without an implementation is a type error here, and each implementation
// gets its arguments typed by the step's schema. The lab's simulated agents implement the same
// names (src/sim/ceph/steps.ts). Every run's arguments are checked against the schema before
// the step does anything: a malformed run fails naming the argument, nothing executed.
import { DAEMONS, Step, assertStepArgs, type NodeStepName } from '../../catalogue/index.js';
import type { AgentStep, AgentStepContext, AgentStepOf } from './context.js';
import { restartDaemon, restartForConfig, startMds, startMgr, startRgw, stopMds, stopMgr, stopRgw } from './daemons.js';
import { bootstrapMon, joinMon, removeMon } from './mon.js';
import { startDaemons, stopDaemons } from './maintenance.js';
import { startNfs, stopNfs } from './nfs.js';
import { createOsd, stopOsd, wipeDisk, zapOsd } from './osd.js';
import { restartNode, shutdownNode } from './power.js';

export type { AgentStep, AgentStepContext, AgentStepOf } from './context.js';

/** Every node step, those that take the machine down (STEPS' `power`) included: the agent runs
 * their command once the run is reported (agent.ts). */
export type AgentSteps = { [K in NodeStepName]: AgentStepOf<K> };

const IMPLEMENTED = {
  [Step.monBootstrap]: bootstrapMon,
  [Step.monJoin]: joinMon,
  [Step.monRemove]: removeMon,
  [DAEMONS.mgr.steps.start]: startMgr,
  [DAEMONS.mgr.steps.stop]: stopMgr,
  [DAEMONS.mds.steps.start]: startMds,
  [DAEMONS.mds.steps.stop]: stopMds,
  [DAEMONS.rgw.steps.start]: startRgw,
  [DAEMONS.rgw.steps.stop]: stopRgw,
  [DAEMONS.nfs.steps.start]: startNfs,
  [DAEMONS.nfs.steps.stop]: stopNfs,
  [Step.osdCreate]: createOsd,
  [Step.daemonRestart]: restartDaemon,
  [Step.configRestart]: restartForConfig,
  [Step.osdStop]: stopOsd,
  [Step.osdZap]: zapOsd,
  [Step.wipe]: wipeDisk,
  [Step.nodeRestart]: restartNode,
  [Step.nodeShutdown]: shutdownNode,
  [Step.nodeDaemonsStop]: stopDaemons,
  [Step.nodeDaemonsStart]: startDaemons,
} satisfies AgentSteps;

/** Any implementation, its arguments' type forgotten (they are checked before the call). */
type AnyImpl = (ctx: AgentStepContext<never>) => Promise<object | undefined>;

/** A catalogue step behind its argument check. */
export function checked(name: NodeStepName, impl: AnyImpl): AgentStep {
  const run = impl as (ctx: AgentStepContext<unknown>) => Promise<Record<string, unknown> | undefined>;
  return async (ctx) => {
    assertStepArgs(name, ctx.args);
    return (await run(ctx)) ?? undefined;
  };
}

export function agentSteps(): Map<string, AgentStep> {
  const all: Partial<Record<NodeStepName, AnyImpl>> = IMPLEMENTED;
  const out = new Map<string, AgentStep>();
  for (const [name, impl] of Object.entries(all) as Array<[NodeStepName, AnyImpl | undefined]>)
    if (impl) out.set(name, checked(name, impl));
  return out;
}
