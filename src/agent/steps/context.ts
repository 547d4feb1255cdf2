// What a node-level step gets on a real node: its arguments, a log that streams into the run,
// the node's Ceph daemons, the master's files, and the Runner (every command goes through it).
import type { NodeStepName, StepArgs, StepResult } from '../../catalogue/index.js';
import type { Runner } from '../../exec/runner.js';
import type { LogLevel } from '../../tasks/types.js';
import type { CephHost } from '../ceph-host.js';
import type { MasterFiles } from '../master.js';

/** `A`: the run's arguments, typed by the step's schema once checked (AgentStepOf). */
export interface AgentStepContext<A = Record<string, unknown>> {
  args: A;
  signal: AbortSignal;
  log(level: LogLevel, message: string): void;
  /** The run's Runner: each output line of a command goes into the run's log (secrets masked). */
  runner: Runner;
  host: CephHost;
  master: MasterFiles;
}

/** A step as the agent calls it: arguments not yet checked. */
export type AgentStep = (ctx: AgentStepContext) => Promise<Record<string, unknown> | undefined>;

/** The implementation of a catalogue step: typed arguments (checked before it is called) and
 * the result its schema describes. */
export type AgentStepOf<K extends NodeStepName> = (ctx: AgentStepContext<StepArgs<K>>) => Promise<StepResult<K> | undefined>;

/** Short commands (mkfs of a monitor, monmaptool, wipefs) get this deadline. */
export const TOOL_TIMEOUT_MS = 120_000;

/** The master's ceph.conf, refreshed before each step so daemons see the current monitors. */
export async function refreshConf<A>(ctx: AgentStepContext<A>): Promise<string> {
  const conf = await ctx.master.config();
  await ctx.host.writeConf(conf);
  return conf;
}

/** Runs a command of a step with the step's deadline and abort signal. */
export function tool<A>(ctx: AgentStepContext<A>, cmd: string, args: string[], timeoutMs = TOOL_TIMEOUT_MS) {
  return ctx.runner.run(cmd, args, { timeoutMs, signal: ctx.signal });
}
