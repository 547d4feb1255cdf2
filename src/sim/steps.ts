// Node-level steps the simulated agent knows how to carry out. Later loops register theirs
// (creating an OSD, starting a monitor, ...) so the lab grows with the product.
import {
  Step as Steps,
  assertStepArgs,
  type NodeStepName,
  type PowerStepName,
  type StepArgs,
  type StepResult,
} from '../catalogue/index.js';
import type { LogLevel } from '../tasks/types.js';
import type { MachineSpec } from './machines.js';

/** `A`: the run's arguments, typed by the step's schema once checked (SimStepOf). */
export interface StepContext<A = Record<string, unknown>> {
  machine: MachineSpec;
  args: A;
  log(level: LogLevel, message: string): void;
  /** Ask the machine to reboot or power off once the step has been reported. */
  after(action: 'reboot' | 'poweroff'): void;
  /** This node's keyrings as the master hands them to its agent (GET /ceph/nodes/{id}/keyrings);
   * absent on the lab's in-process link, which carries no keys. */
  keyrings?: () => Promise<Array<{ entity: string; keyring: string }>>;
}

export type Step = (ctx: StepContext) => Promise<Record<string, unknown> | undefined>;

/** A catalogue step as the lab carries it out: typed arguments, its schema's result. */
export type SimStepOf<K extends NodeStepName> = (ctx: StepContext<StepArgs<K>>) => Promise<StepResult<K> | undefined>;

/** Any implementation, its arguments' type forgotten (they are checked before the call). */
type AnyImpl = (ctx: StepContext<never>) => Promise<object | undefined>;

/** The lab's registry from typed implementations, each behind the check of its arguments
 * (the real agent's, src/agent/steps/index.ts): a malformed run fails naming the argument
 * and nothing is simulated. */
export function checkedSteps(impls: Partial<Record<NodeStepName, AnyImpl>>): Map<string, Step> {
  const out = new Map<string, Step>();
  for (const [name, impl] of Object.entries(impls) as Array<[NodeStepName, AnyImpl | undefined]>) {
    if (!impl) continue;
    const run = impl as (ctx: StepContext<unknown>) => Promise<Record<string, unknown> | undefined>;
    out.set(name, async (ctx) => {
      assertStepArgs(name, ctx.args);
      return (await run(ctx)) ?? undefined;
    });
  }
  return out;
}

/** The steps every lab machine knows whatever else runs on it: its power. */
export const POWER_STEPS = {
  [Steps.nodeRestart]: async (ctx) => {
    ctx.log('info', 'systemctl reboot');
    ctx.after('reboot');
    return undefined;
  },
  [Steps.nodeShutdown]: async (ctx) => {
    ctx.log('info', 'systemctl poweroff');
    ctx.after('poweroff');
    return undefined;
  },
} satisfies { [K in PowerStepName]: SimStepOf<K> };

export function builtinSteps(): Map<string, Step> {
  return checkedSteps(POWER_STEPS);
}
