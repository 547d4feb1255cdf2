// The node loop's power decisions through a node's BMC, pure: powering an offline node on when
// asked (`node.power-on`), and making sure a shutdown ended with the power off. What the plan
// decides otherwise comes in as `steady` (the node's phase with no request pending).
import { Step } from '../../src/catalogue/index.js';
import type { NodeSpec, NodeStatus, NodeStatusFields, RunState } from '../../src/model/kinds.js';

export const PowerTask = { on: Step.bmcPowerOn, off: Step.bmcPowerOff } as const;
export type PowerTask = (typeof PowerTask)[keyof typeof PowerTask];

export const NO_POWER_CONTROL = 'NoPowerControl';
export const NO_POWER_CONTROL_MESSAGE = 'no BMC is declared for this node: declare a BMC or power the machine on by hand';

/** A BMC run reduced to what the plan needs. */
export interface PowerRunView {
  id: string;
  state: RunState;
  attempt: number;
  request: number;
  completedAt: number | null;
  error?: string | null;
  /** The chassis power before the step acted, as the BMC said. */
  was?: 'on' | 'off' | null;
}

export interface PowerDecision {
  phase: NodeStatus;
  reason: string;
  message: string;
  run?: { taskName: PowerTask; request: number; attempt: number; bootId: null; graceMs?: number };
  requeueAfterMs?: number;
  blocked?: { reason: string; message: string };
  ack?: Partial<Pick<NodeStatusFields, 'observedPowerOnGeneration' | 'observedShutdownGeneration'>>;
}

/** The plan's decision with no request pending (it starts no run). */
type Steady = Omit<PowerDecision, 'run'>;

export interface PowerInput {
  spec: NodeSpec;
  status: NodeStatusFields;
  fresh: boolean;
  now: number;
  run: PowerRunView | null | undefined;
  maxAttempts: number;
  retryBaseMs: number;
  /** After a completed power-on, how long the machine has to boot and report before another try. */
  bootWaitMs: number;
}

/** The power-on request not yet carried out, if any. One a later shutdown request passed
 * (shutdownGeneration higher: the shutdown came after it) is moot: the node stays off. */
export const powerOnRequest = (spec: NodeSpec, status: NodeStatusFields): number | null => {
  const gen = spec.powerOnGeneration ?? 0;
  return gen > (status.observedPowerOnGeneration ?? 0) && gen >= spec.shutdownGeneration ? gen : null;
};

/**
 * A pending `node.power-on`: acknowledged as soon as the agent reports (the machine is on,
 * however it got there); otherwise the BMC powers it on and the plan waits for it to boot.
 * Without a BMC the node says so and stays as it is.
 */
export function planPowerOn(p: PowerInput, gen: number, steady: Steady): PowerDecision {
  if (p.fresh) return { ...steady, ack: { observedPowerOnGeneration: gen } };
  if (p.spec.power === 'off')
    return {
      ...steady,
      blocked: { reason: 'PowerDeclaredOff', message: "power-on requested, but the node's spec declares power: off" },
    };
  if (!p.spec.bmc) return { ...steady, blocked: { reason: NO_POWER_CONTROL, message: NO_POWER_CONTROL_MESSAGE } };
  const run = p.run && p.run.request === gen ? p.run : null;
  if (run && (run.state === 'pending' || run.state === 'running'))
    return { phase: 'booting', reason: 'PoweringOn', message: `power-on run ${run.id} is ${run.state}` };
  if (run?.state === 'completed') {
    // On a first try only: a retry after a crash of Quarry may find the power its first try
    // turned on, and then waits for the boot like any other.
    if (run.was === 'on' && run.attempt === 1)
      return {
        ...steady,
        blocked: {
          reason: 'Unresponsive',
          message:
            'the BMC says the power is on, yet the agent is silent: a hung machine, which a power-on does not power-cycle (do it by hand; fencing: bmc does it for a silent node with no power request pending)',
        },
      };
    const due = (run.completedAt ?? p.now) + p.bootWaitMs;
    if (p.now < due || run.attempt >= p.maxAttempts) {
      if (p.now >= due)
        return failed(steady, `powered on ${run.attempt} times through its BMC, and the agent never reported; request it again to retry`);
      return {
        phase: 'booting',
        reason: 'PoweredOn',
        message: 'powered on through its BMC; waiting for it to boot and its agent to report',
        requeueAfterMs: due - p.now,
      };
    }
    return start(gen, run.attempt + 1);
  }
  if (run?.state === 'failed' || run?.state === 'canceled') {
    if (run.attempt >= p.maxAttempts)
      return failed(steady, `power-on failed ${run.attempt} times: ${run.error ?? 'no reason given'}; request it again to retry`);
    const due = (run.completedAt ?? p.now) + p.retryBaseMs * 2 ** (run.attempt - 1);
    if (p.now < due)
      return {
        ...steady,
        reason: 'RetryBackoff',
        message: `power-on failed (${run.error ?? 'no reason given'}); retrying`,
        requeueAfterMs: due - p.now,
      };
    return start(gen, run.attempt + 1);
  }
  return start(gen, 1);
}

/** Given up on this request: the node stays as it is (offline, so node.power-on is offered
 * again) and says why. */
const failed = (steady: Steady, message: string): PowerDecision => ({ ...steady, blocked: { reason: 'PowerOnFailed', message } });

const start = (gen: number, attempt: number): PowerDecision => ({
  phase: 'booting',
  reason: 'PoweringOn',
  message: 'powering on through its BMC',
  run: { taskName: PowerTask.on, request: gen, attempt, bootId: null },
});

/**
 * The agent's soft power-off completed on a node with a BMC: the BMC must read off within the
 * grace, else the power is cut (the `bmc.power-off` step does both and logs them). The shutdown
 * is acknowledged when that step completed; should the BMC fail every try, the agent's silence
 * confirms it as on a node without one (`fallback`).
 */
export function planPowerOff(p: PowerInput, gen: number, graceMs: number, fallback: () => Steady): PowerDecision {
  const run = p.run && p.run.request === gen ? p.run : null;
  if (!run) return offRun(gen, 1, graceMs);
  if (run.state === 'pending' || run.state === 'running')
    return { phase: 'shutting-down', reason: 'WaitingForPowerOff', message: `soft power-off sent; BMC run ${run.id} checks the power` };
  if (run.state === 'completed')
    return {
      phase: 'offline',
      reason: 'PoweredOff',
      message: 'shut down on request; its BMC reads the power off',
      ack: { observedShutdownGeneration: gen },
    };
  if (run.attempt >= p.maxAttempts) return fallback();
  const due = (run.completedAt ?? p.now) + p.retryBaseMs * 2 ** (run.attempt - 1);
  if (p.now < due)
    return {
      phase: 'shutting-down',
      reason: 'RetryBackoff',
      message: `the BMC check failed (${run.error ?? 'no reason given'}); retrying`,
      requeueAfterMs: due - p.now,
    };
  return offRun(gen, run.attempt + 1, graceMs);
}

const offRun = (gen: number, attempt: number, graceMs: number): PowerDecision => ({
  phase: 'shutting-down',
  reason: 'WaitingForPowerOff',
  message: 'soft power-off sent; its BMC checks the power goes off (forced after the grace)',
  run: { taskName: PowerTask.off, request: gen, attempt, bootId: null, graceMs },
});
