// Fencing a hung node through its BMC (`fencing: bmc`, issue #15 part 4), pure. A node whose
// agent has been silent past the fencing grace while it is supposed to be on is asked about at
// its BMC first (`bmc.power-status`): off, it is not touched (powering it on is the operator's
// call, `node.power-on`); on, it is a hung machine, power-cycled (`bmc.power-cycle`) under a
// `fence` lease of the disruption budget, and the lease is kept until its agent reports from a
// new boot, or the cycles ran out (FenceFailed).
//
// A silent agent is also what a network partition between Quarry and a healthy node looks like.
// The grace (FENCE_AFTER_MS, several heartbeat timeouts) keeps a short blip from cycling anyone,
// and the lease keeps a longer partition to at most maxUnavailable failure domains cycled at once.
import { Step } from '../../src/catalogue/index.js';
import { DisruptionLeaseKind, type LeaseStops } from '../../src/model/disruption-kinds.js';
import { Kind, type NodeSpec, type NodeStatus, type NodeStatusFields } from '../../src/model/kinds.js';
import type { DisruptionRequest } from '../shared/disruption-gate.js';
import type { PowerRunView } from './power.js';

export const FenceTask = { status: Step.bmcPowerStatus, cycle: Step.bmcPowerCycle } as const;
export type FenceTask = (typeof FenceTask)[keyof typeof FenceTask];
export const isFenceTask = (s: string): s is FenceTask => s === FenceTask.status || s === FenceTask.cycle;

/** Five heartbeat timeouts of the defaults: a stalled master or a short blip fences nobody. */
export const DEFAULT_FENCE_AFTER_MS = 300_000;

export const FENCE_FAILED = 'FenceFailed';

export interface FenceInput {
  spec: NodeSpec;
  status: NodeStatusFields;
  /** The phase the node would have without fencing (offline and AgentSilent for a hung node). */
  steady: { phase: NodeStatus; reason: string };
  /** Some restart, shutdown or power-on request is pending: the node is theirs, not fencing's. */
  requestPending: boolean;
  approved: boolean;
  fresh: boolean;
  /** When the agent last reported (this process's memory; when it started if it has heard
   * nothing since): the silence that fencing acts on, and the key of its runs (`request`). */
  silentSince: number | null;
  now: number;
  fenceAfterMs: number;
  bootWaitMs: number;
  retryBaseMs: number;
  maxAttempts: number;
  /** The latest bmc.power-status and bmc.power-cycle runs of this node. */
  statusRun: PowerRunView | null | undefined;
  cycleRun: PowerRunView | null | undefined;
}

export interface FenceDecision {
  phase: NodeStatus;
  reason: string;
  message: string;
  run?: { taskName: FenceTask; request: number; attempt: number; bootId: null };
  requeueAfterMs?: number;
  blocked?: { reason: string; message: string };
  /** For the run's log: why the machine is power-cycled. */
  notes?: string[];
  /** The fence is under way (a cycle about to be sent, sent, or its boot awaited): its lease stays. */
  holdsLease: boolean;
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** Whether the node is one fencing may act on at all (declared so, not off or busy on request). */
function eligible(f: FenceInput): boolean {
  return (
    f.spec.fencing === 'bmc' &&
    f.spec.bmc !== undefined &&
    f.spec.power !== 'off' &&
    f.approved &&
    !f.requestPending &&
    // It reported once: a machine that never booted into its agent is not hung, it is new.
    f.status.bootId !== undefined &&
    f.silentSince !== null
  );
}

/**
 * What fencing decides for the node, or null when it has nothing to do (the plan's decision
 * stands). `requeueAfterMs` alone (no phase change) comes back as `wait` while the grace runs.
 */
export function planFence(f: FenceInput): { decision: FenceDecision } | { wait: number } | null {
  if (f.fresh || !eligible(f)) return null;
  const since = f.silentSince!;
  const cycle = f.cycleRun && f.cycleRun.request === since ? f.cycleRun : null;
  // Before any cycle of this silence, only a node the plan calls silent is fenced (not one
  // booting, shut down on request, or waiting for Quarry's restart grace).
  if (!cycle) {
    if (f.steady.phase !== 'offline' || f.steady.reason !== 'AgentSilent') return null;
    const left = since + f.fenceAfterMs - f.now;
    if (left > 0) return { wait: left + 1 };
  }
  const silence = `the agent has been silent since ${iso(since)} (more than ${f.fenceAfterMs} ms)`;
  if (cycle) return afterCycle(f, since, cycle, silence);
  const check = f.statusRun && f.statusRun.request === since ? f.statusRun : null;
  if (!check) return statusRun(since, 1, silence);
  if (check.state === 'pending' || check.state === 'running')
    return decision('offline', 'FenceCheck', `${silence}; BMC run ${check.id} reads the power`, false);
  if (check.state === 'completed') {
    if (check.was === 'off')
      return blocked(
        'MachineOff',
        `${silence} and its BMC says the power is off: it is not power-cycled; powering it on (node.power-on) is the operator's call`,
        false,
      );
    return cycleRun(since, 1, silence, `its BMC said the power is on (run ${check.id}): a hung machine`);
  }
  if (check.attempt >= f.maxAttempts)
    return blocked(
      FENCE_FAILED,
      `${silence}, and its BMC could not be read ${check.attempt} times (${check.error ?? 'no reason given'}): not power-cycled`,
      false,
    );
  const due = (check.completedAt ?? f.now) + f.retryBaseMs * 2 ** (check.attempt - 1);
  if (f.now < due)
    return {
      decision: {
        phase: 'offline',
        reason: 'RetryBackoff',
        message: `reading the power through its BMC failed (${check.error ?? 'no reason given'}); retrying`,
        requeueAfterMs: due - f.now,
        holdsLease: false,
      },
    };
  return statusRun(since, check.attempt + 1, silence);
}

/** A cycle of this silence was sent: wait for its boot (POWER_ON_BOOT_MS), cycle again, or give up. */
function afterCycle(f: FenceInput, since: number, run: PowerRunView, silence: string): { decision: FenceDecision } {
  if (run.state === 'pending' || run.state === 'running')
    return decision('offline', 'Fencing', `${silence}; power-cycle run ${run.id} is ${run.state}`, true);
  const completed = run.state === 'completed';
  const due = (run.completedAt ?? f.now) + (completed ? f.bootWaitMs : f.retryBaseMs * 2 ** (run.attempt - 1));
  if (f.now < due) {
    const d = completed
      ? decision(
          f.steady.phase === 'booting' ? 'booting' : 'offline',
          'Fenced',
          `power-cycled through its BMC (${silence}); waiting for its agent to report from a new boot`,
          true,
        )
      : decision('offline', 'RetryBackoff', `the power-cycle failed (${run.error ?? 'no reason given'}); retrying`, true);
    return { decision: { ...d.decision, requeueAfterMs: due - f.now } };
  }
  if (run.attempt >= f.maxAttempts)
    return blocked(
      FENCE_FAILED,
      completed
        ? `power-cycled ${run.attempt} times through its BMC and its agent never reported; the lease is given back`
        : `the power-cycle failed ${run.attempt} times (${run.error ?? 'no reason given'}); the lease is given back`,
      false,
    );
  return cycleRun(
    since,
    run.attempt + 1,
    silence,
    `attempt ${run.attempt + 1}: the last ${completed ? 'cycle brought no report' : 'cycle failed'}`,
  );
}

const decision = (phase: NodeStatus, reason: string, message: string, holdsLease: boolean): { decision: FenceDecision } => ({
  decision: { phase, reason, message, holdsLease },
});

const blocked = (reason: string, message: string, holdsLease: boolean): { decision: FenceDecision } => ({
  decision: { phase: 'offline', reason, message, blocked: { reason, message }, holdsLease },
});

const statusRun = (since: number, attempt: number, silence: string): { decision: FenceDecision } => ({
  decision: {
    phase: 'offline',
    reason: 'FenceCheck',
    message: `${silence}; asking its BMC whether the power is on`,
    run: { taskName: FenceTask.status, request: since, attempt, bootId: null },
    holdsLease: false,
  },
});

const cycleRun = (since: number, attempt: number, silence: string, why: string): { decision: FenceDecision } => ({
  decision: {
    phase: 'offline',
    reason: 'Fencing',
    message: `${silence}; power-cycling it through its BMC`,
    run: { taskName: FenceTask.cycle, request: since, attempt, bootId: null },
    notes: [`fencing: ${silence}; ${why}; power-cycling it through its BMC`],
    holdsLease: true,
  },
});

/**
 * The fence's lease request: it counts the node's failure domain against maxUnavailable, and
 * does not wait for Ceph (a `fence` is not a stopping kind: disruption-gate.ts asks Ceph nothing
 * for it, and its lease adds nothing to what others ask Ceph about). Why: after FENCE_AFTER_MS
 * (minutes) a hung node's daemons are down in Ceph's view already (peers mark its OSDs down
 * within osd_heartbeat_grace, its monitor has left the quorum): a power-cycle takes nothing more
 * away and is the only way back. Asking Ceph could only deadlock when it matters most: two hung
 * nodes holding PGs below min_size would each be refused ok-to-stop forever. The one case where
 * the node still serves, a partition between Quarry and a healthy node, is bounded by the grace
 * and by the budget: at most maxUnavailable domains disrupted at once, counting every other
 * restart, shutdown or drain, so a partition never cycles the whole cluster, and the pools'
 * failure domain is made to survive one domain lost. The daemons the node last reported are in
 * the request for its messages only. A node without Ceph daemons takes the lease too: cutting
 * the power of many machines at once (Quarry cut off from all of them) is what it prevents.
 */
export function fenceRequest(node: { id: string; spec: { hostname: string } }, domain: string, stops: LeaseStops): DisruptionRequest {
  return {
    holder: { kind: Kind.Node, id: node.id },
    kind: DisruptionLeaseKind.fence,
    what: `fence (power-cycle) of ${node.spec.hostname}`,
    nodes: [node.id],
    domains: [domain],
    stops,
  };
}

/** A fence's lease stays while the fence is under way (a cycle about to go, sent, or its boot
 * awaited); it goes back once the agent reports again, the cycles ran out, or fencing was
 * turned off. */
export const keepFenceLease = (underWay: boolean): boolean => underWay;
