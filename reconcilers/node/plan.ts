// The node loop's pure half: from a node's desired state and what its agent, its boots and
// its runs say, decide its status and the one next step. No I/O, no clock: `now` is input.
import { NODE_DAEMON_TYPES, Step } from '../../src/catalogue/index.js';
import type { Doc } from '../../src/model/document.js';
import type { Condition } from '../../src/model/conditions.js';
import type { DiskSpec, DiskStatusFields, NodeSpec, NodeStatus, NodeStatusFields, RunState } from '../../src/model/kinds.js';
import type { Observation } from '../../src/fleet/types.js';
import { diskIdsOf, planDisks, type DiskWrite } from './disks.js';

export type { DiskWrite };
import { setCondition } from '../../src/runtime/conditions.js';
import type { LoopPlan } from '../../src/runtime/loop-kit/index.js';
import {
  disruptionStatus,
  gateRun,
  keepLease,
  nodeRequest,
  stopsOfNode,
  type LeaseTake,
  type NodeDisruptionObserved,
} from './disruption.js';
import { bootLoop, defaultBootLoopLimits, type BootLoopLimits } from './boot-loop.js';
import { BOOT_LOOP } from '../../src/fleet/boot-decision.js';
import { isNodeApproved } from '../../src/model/operations.js';
import { planPowerOff, planPowerOn, powerOnRequest, type PowerInput, type PowerRunView, type PowerTask } from './power.js';
import { DEFAULT_FENCE_AFTER_MS, FenceTask, fenceRequest, keepFenceLease, planFence } from './fencing.js';
import { DEFAULT_ROLLOUT_BACK_MS, RolloutTask, planRollout, rolloutRequest, type RolloutDaemon, type RolloutRunView } from './rollout.js';
import type { ConfigHashes } from '../../src/model/daemon-config.js';
import { DisruptionLeaseKind } from '../../src/model/disruption-kinds.js';
import type { DisruptionRequest } from '../shared/disruption-gate.js';
import {
  ENTERING,
  LEAVING,
  gateMaintenance,
  nooutBefore,
  nooutRelease,
  planMaintenance,
  type MaintenanceInput,
  type MaintenanceRuns,
  type MaintenanceTask,
} from './maintenance.js';

export const NodeTask = { restart: Step.nodeRestart, shutdown: Step.nodeShutdown } as const;
export type NodeTask = (typeof NodeTask)[keyof typeof NodeTask];

export const MAX_ATTEMPTS = 3;

/** The recheck at the end of the restart grace is pushed back by up to this fraction of the
 * heartbeat timeout, so nodes that share that deadline (every node after a master restart or an
 * election) are not looked at in one burst. */
export const STALE_JITTER = 0.2;

/** The latest run of one node task, reduced to what the plan needs. */
export interface RunView {
  id: string;
  state: RunState;
  attempt: number;
  /** The request counter value the run was started for. */
  request: number;
  /** The boot the node was in when the run started. */
  bootId: string | null;
  completedAt: number | null;
}

export interface NodeObserved {
  node: Doc<NodeSpec, NodeStatusFields>;
  obs: Observation;
  disks: Map<string, Doc<DiskSpec, DiskStatusFields> | undefined>;
  /** powerOn/powerOff: the latest BMC runs, looked up only when the node may need them. */
  runs: {
    restart: RunView | null;
    shutdown: RunView | null;
    powerOn?: PowerRunView | null;
    powerOff?: PowerRunView | null;
    /** Fencing's BMC runs (bmc.power-status, bmc.power-cycle), read for a node with `fencing: bmc`. */
    fenceStatus?: PowerRunView | null;
    fenceCycle?: PowerRunView | null;
    /** The latest ceph.config.restart run (rollout.ts). */
    rollout?: RolloutRunView | null;
  } & MaintenanceRuns;
  now: number;
  nowIso: string;
  /** When this Quarry began to lead (its start, or its election): agents get one heartbeat
   * timeout to report again before their nodes are called offline, so a master restart or a
   * failover does not flap the fleet. */
  startedAt: number;
  heartbeatTimeoutMs: number;
  retryBaseMs: number;
  /** A random draw in [0, 1) taken by observe: spreads the end-of-grace recheck (STALE_JITTER). */
  staleJitter?: number;
  /** The disruption budget as it concerns this node (the lease it holds, those of others, Ceph's
   * ok-to-stop for the set); read by observe, absent when the node neither holds nor wants one. */
  disruption?: NodeDisruptionObserved;
  /** The node's failure domain (its hostname unless the Cluster spec's failureDomain says). */
  domain?: string;
  /** How soon a node the budget holds back looks again (a released lease wakes it sooner). */
  disruptionRecheckMs?: number;
  /** When repeated network boots make a boot loop; the defaults when absent. */
  bootLoop?: BootLoopLimits;
  /** Why the node's credential was revoked (a second party used it), when it was. */
  credentialConflict?: string | null;
  /** An unapproved node not seen booting for this long is forgotten; never when absent. */
  unapprovedTtlMs?: number;
  /** How long a soft power-off may take before the BMC cuts the power (BMC_SOFT_OFF_GRACE_MS). */
  softOffGraceMs?: number;
  /** How long a machine powered on through its BMC has to boot and report before another try. */
  powerOnBootMs?: number;
  /** How long an agent is silent before its node (with `fencing: bmc`) is fenced (FENCE_AFTER_MS). */
  fenceAfterMs?: number;
  /** The restart-relevant config of the Cluster spec, per daemon kind (shared/daemon-config.ts);
   * absent or null: no cluster, nothing to roll out. */
  configHashes?: ConfigHashes | null;
  /** How long daemons restarted for a config change have to run again before the lease goes back. */
  rolloutBackMs?: number;
}

export const DEFAULT_SOFT_OFF_GRACE_MS = 120_000;
export const DEFAULT_POWER_ON_BOOT_MS = 600_000;

export interface StartRun {
  /** A node task goes to the agent; a power task is the master's, through the node's BMC. */
  taskName: NodeTask | PowerTask | FenceTask | RolloutTask | MaintenanceTask;
  request: number;
  attempt: number;
  bootId: string | null;
  /** bmc.power-off: how long the soft power-off may take. */
  graceMs?: number;
  /** ceph.config.restart: the config key and the daemons to restart. */
  config?: string;
  daemons?: RolloutDaemon[];
  /** Maintenance's steps and noout: the lease (its since) they are taken under. */
  lease?: string;
  /** ceph.osd.noout: set or clear, and the OSDs the lease stops. */
  set?: boolean;
  osds?: number[];
}

const isNodeTask = (r: StartRun): boolean => r.taskName === NodeTask.restart || r.taskName === NodeTask.shutdown;
/** Runs that stop a node's daemons: they go under a lease of the disruption budget. */
const isGated = (r: StartRun): boolean => isNodeTask(r) || r.taskName === FenceTask.cycle || r.taskName === RolloutTask.restart;

/** The node's status (the fields the node loop owns; docs/status-ownership.md), the restart or
 * shutdown run to start, a wait (staleness, backoff), a gate; and the node loop's extras. */
export interface NodePlan extends LoopPlan<NodeStatusFields, StartRun> {
  /** Disk documents to create or update (their hardware fields). */
  disks: DiskWrite[];
  /** Delete the node: unapproved, never reported, not declared by a spec, unseen for long. */
  forget: boolean;
  /** The node just started waiting for approval: say so (node.approval.required). */
  announce: boolean;
  /** The disruption lease to take as the run starts (CAS), or to give back before the status
   * says so; the run log's notes. */
  lease: { take: LeaseTake | null; release: boolean; notes: string[] };
}

export const APPROVED = 'Approved';
export const CREDENTIAL_CONFLICT = 'CredentialConflict';

interface Decision {
  phase: NodeStatus;
  reason: string;
  message: string;
  run?: StartRun;
  requeueAfterMs?: number;
  blocked?: { reason: string; message: string };
  ack?: Partial<Pick<NodeStatusFields, 'observedRestartGeneration' | 'observedShutdownGeneration' | 'observedPowerOnGeneration'>>;
  /** on: the node is in a boot loop; reset: an operator's restart request just ended one. */
  bootLoop?: 'on' | 'reset';
  take?: LeaseTake | null;
  notes?: string[];
  /** The budget holds the run back: who is in its way. */
  waiting?: { kind: string; heldBy: string[] };
  /** A fence is under way: its lease stays (fencing.ts). */
  fencing?: boolean;
  /** A rolling restart for a config change is under way: its lease stays (rollout.ts). */
  rolling?: boolean;
  /** The config the node's daemons run with, to record (rollout.ts). */
  daemonConfig?: NodeStatusFields['daemonConfig'];
  /** A maintenance that wants its lease (maintenance.ts); the gate decides. */
  wantsLease?: DisruptionRequest;
  /** The maintenance is over: its lease may go back (once noout is cleared). */
  over?: boolean;
}

export function planNode(o: NodeObserved): NodePlan {
  const gated = gateDisruption(o, enrollment(o) ?? withRollout(o, withFence(o, decide(o))));
  const mine = o.disruption?.mine;
  // A maintenance lease is held until the maintenance is over (maintenance.ts), whatever
  // restart or shutdown went on it meanwhile; the others as leaseKept says.
  const over = mine ? (mine.kind === DisruptionLeaseKind.maintenance ? gated.over === true : !leaseKept(o, mine, gated)) : false;
  const { d, release } = nooutWindow(o, gated, over);
  const status = buildStatus(o, d, release);
  const wasWaiting = (o.node.status.conditions ?? []).some((c) => c.type === APPROVED && c.status === 'False');
  const forget = forgettable(o);
  return {
    status,
    disks: planDisks(o.node.id, o.node.status.diskIds ?? [], o.obs.report, o.disks),
    step: d.run ?? null,
    requeueAfterMs:
      d.requeueAfterMs ?? untilGraceEnds(o) ?? (isNodeApproved(o.node) || o.unapprovedTtlMs === undefined ? null : o.unapprovedTtlMs),
    gate: d.blocked ?? null,
    forget,
    announce: !forget && !wasWaiting && !isNodeApproved(o.node) && !o.credentialConflict,
    lease: { take: d.take ?? null, release, notes: d.notes ?? [] },
  };
}

/** A conflict over the node's credential, or a node nobody approved yet: nothing else is
 * decided for it (its agent, if any, is cut off with the revoked credential). */
function enrollment(o: NodeObserved): Decision | null {
  if (o.credentialConflict)
    return {
      phase: 'error',
      reason: CREDENTIAL_CONFLICT,
      message: `${o.credentialConflict}; approve the node again (node.approve) to reinstall it with a new credential`,
    };
  if (isNodeApproved(o.node) || isFresh(o)) return null;
  return {
    phase: 'discovered',
    reason: 'AwaitingApproval',
    message: 'found by network boot; waiting for an admin to approve it (node.approve)',
  };
}

function forgettable(o: NodeObserved): boolean {
  const n = o.node;
  if (o.unapprovedTtlMs === undefined || isNodeApproved(n) || o.credentialConflict || n.status.bootId !== undefined || o.obs.report)
    return false;
  if (n.metadata.source) return false;
  const last = Math.max(o.obs.seenAt ?? 0, Date.parse(n.metadata.createdAt) || 0, o.startedAt);
  return o.now - last > o.unapprovedTtlMs;
}

/** What the node would ask the disruption budget for now (a restart's, a shutdown's or a
 * maintenance's lease): observe asks Ceph only then. */
export function pendingRequest(o: NodeObserved): DisruptionRequest | null {
  const d = withRollout(o, withFence(o, decide(o)));
  if (d.run && isGated(d.run)) return runRequest(o, d.run);
  return d.wantsLease ?? null;
}

/** The run the plan would start if the disruption budget let it: observe asks Ceph only then. */
export const pendingRun = (o: NodeObserved): StartRun | null => {
  const run = withRollout(o, withFence(o, decide(o))).run;
  return run && isGated(run) ? run : null;
};

/** The OSDs the node's agent reports running: the only ids worth asking Ceph about (it
 * answers "ok" for ids it does not know). */
export const runningOsds = (o: NodeObserved): number[] => [...(o.obs.report?.daemons.osds ?? [])].sort((a, b) => a - b);

/** What the node's run would disrupt: its daemons as its agent reports them, in its domain. */
export function runRequest(o: NodeObserved, run: StartRun) {
  const domain = o.domain ?? o.node.spec.hostname;
  // A hung node's agent says nothing: its daemons as it last reported them.
  if (run.taskName === FenceTask.cycle) return fenceRequest(o.node, domain, stopsOfNode(o.node.spec.hostname, o.node.status.daemons));
  if (run.taskName === RolloutTask.restart) return rolloutRequest(o.node, domain, run.daemons ?? []);
  const verb = run.taskName === NodeTask.restart ? 'restart' : 'shutdown';
  return nodeRequest(o.node, verb, domain, stopsOfNode(o.node.spec.hostname, o.obs.report?.daemons));
}

/** A restart or shutdown stops the node's daemons: it goes with a lease of the disruption
 * budget (held, or taken as the run starts), or not at all. */
function gateDisruption(o: NodeObserved, d: Decision): Decision {
  const prev = (o.node.status.conditions ?? []).find((c) => c.type === 'Blocked' && c.status === 'True');
  // What a restart, shutdown or maintenance stops is what the agent reports running. A report
  // from before this controller led (loaded from the store at its election) may predate a daemon
  // the old leader started just before it died, and a node that seems to run nothing goes
  // without a lease: so they wait for the agent's next report (seconds) rather than stop two
  // monitors at once.
  if ((d.wantsLease || (d.run && reportStops(d.run))) && heardOnlyBefore(o)) {
    return {
      ...steady(o),
      blocked: {
        reason: 'AwaitingReport',
        message: 'waiting for a report of its agent since this controller leads: the daemons it would stop are not known yet',
      },
      requeueAfterMs: o.heartbeatTimeoutMs,
    };
  }
  if (d.wantsLease) {
    const g = gateMaintenance(o.disruption, d.wantsLease, prev ? { reason: prev.reason, message: prev.message } : null);
    if (g.go) return { ...d, take: g.take, notes: g.take?.notes ?? (g.note ? [g.note] : []) };
    return {
      ...steady(o),
      blocked: g.blocked,
      waiting: { kind: DisruptionLeaseKind.maintenance, heldBy: g.heldBy },
      requeueAfterMs: g.retryInMs ?? o.disruptionRecheckMs ?? o.heartbeatTimeoutMs,
    };
  }
  // The BMC's steps stop no daemon: power-on starts them, and the power-off follows a soft
  // shutdown the budget let through.
  if (!d.run || !isGated(d.run)) return d;
  const verbs: Record<string, string> = {
    [NodeTask.restart]: 'restart',
    [NodeTask.shutdown]: 'shutdown',
    [FenceTask.cycle]: 'fence',
    [RolloutTask.restart]: 'daemon restart',
  };
  const verb = verbs[d.run.taskName] ?? d.run.taskName;
  const req = runRequest(o, d.run);
  const g = gateRun(o.disruption, req, verb, prev ? { reason: prev.reason, message: prev.message } : null);
  if (g.go) return { ...d, take: g.take, notes: [...(d.notes ?? []), ...(g.take?.notes ?? (g.note ? [g.note] : []))] };
  return {
    ...steady(o),
    blocked: g.blocked,
    waiting: { kind: req.kind, heldBy: g.heldBy },
    requeueAfterMs: g.retryInMs ?? o.disruptionRecheckMs ?? o.heartbeatTimeoutMs,
  };
}

/** Runs whose lease request is the daemons of the agent's report (runRequest). */
const reportStops = (run: { taskName: string }): boolean => run.taskName === NodeTask.restart || run.taskName === NodeTask.shutdown;

/** Fencing (fencing.ts) acts on a hung node with `fencing: bmc` when nothing else is asked of it. */
function withFence(o: NodeObserved, d: Decision): Decision {
  const { spec, status } = o.node;
  const f = planFence({
    spec,
    status,
    steady: d,
    // A node in maintenance is the operator's: a silent agent there may be their work (firmware).
    requestPending:
      d.run !== undefined ||
      spec.maintenance === true ||
      d.phase === 'maintenance' ||
      spec.restartGeneration > (status.observedRestartGeneration ?? 0) ||
      spec.shutdownGeneration > (status.observedShutdownGeneration ?? 0) ||
      powerOnRequest(spec, status) !== null,
    approved: isNodeApproved(o.node),
    fresh: isFresh(o),
    // Silence counts from this leadership's start at the earliest: a report loaded from the
    // store says when the node last spoke, not that anyone listened since.
    silentSince: !heardOnlyBefore(o) ? o.obs.lastReportAt : status.phase ? o.startedAt : null,
    now: o.now,
    fenceAfterMs: o.fenceAfterMs ?? DEFAULT_FENCE_AFTER_MS,
    bootWaitMs: o.powerOnBootMs ?? DEFAULT_POWER_ON_BOOT_MS,
    retryBaseMs: o.retryBaseMs,
    maxAttempts: MAX_ATTEMPTS,
    statusRun: o.runs.fenceStatus,
    cycleRun: o.runs.fenceCycle,
  });
  if (!f) return d;
  if ('wait' in f) return { ...d, requeueAfterMs: Math.min(d.requeueAfterMs ?? f.wait, f.wait) };
  const { holdsLease, ...rest } = f.decision;
  return { ...rest, fencing: holdsLease };
}

/** A rolling restart for a config change (rollout.ts), on an active node nothing else is asked of. */
function withRollout(o: NodeObserved, d: Decision): Decision {
  const { spec, status } = o.node;
  if (d.run || d.blocked || d.fencing || d.phase !== 'active' || !o.configHashes) return d;
  if (
    spec.restartGeneration > (status.observedRestartGeneration ?? 0) ||
    spec.shutdownGeneration > (status.observedShutdownGeneration ?? 0) ||
    powerOnRequest(spec, status) !== null
  )
    return d;
  const report = isFresh(o) ? o.obs.report : null;
  const r = planRollout({
    hostname: spec.hostname,
    want: o.configHashes,
    recorded: status.daemonConfig,
    bootId: report?.bootId ?? null,
    running: report?.daemons ?? {},
    run: o.runs.rollout,
    now: o.now,
    retryBaseMs: o.retryBaseMs,
    maxAttempts: MAX_ATTEMPTS,
    backWaitMs: o.rolloutBackMs ?? DEFAULT_ROLLOUT_BACK_MS,
  });
  if (!r) return d;
  if ('record' in r) return { ...d, daemonConfig: r.record };
  if ('blocked' in r) return { ...d, blocked: r.blocked };
  return {
    ...d,
    reason: r.reason,
    message: r.message,
    rolling: true,
    ...(r.run ? { run: r.run } : {}),
    ...(r.requeueAfterMs !== undefined ? { requeueAfterMs: r.requeueAfterMs } : {}),
  };
}

/** Whether the lease the node holds stays after this pass. */
function leaseKept(o: NodeObserved, mine: NonNullable<NodeObserved['disruption']>['mine'] & object, d: Decision): boolean {
  // A restart or shutdown asked meanwhile went on the lease held: it keeps it until done.
  if (mine.kind === DisruptionLeaseKind.fence) return keepFenceLease(d.fencing === true) || keepLease(mine, leaseFacts(o, d));
  if (mine.kind === DisruptionLeaseKind.daemonRestart) return d.rolling === true || keepLease(mine, leaseFacts(o, d));
  return keepLease(mine, leaseFacts(o, d));
}

/** The noout window (maintenance.ts): a restart or shutdown that stops OSDs sets noout under its
 * lease before its run goes; a lease that would go back clears the noout set under it first. */
function nooutWindow(o: NodeObserved, d: Decision, over: boolean): { d: Decision; release: boolean } {
  const mine = o.disruption?.mine ?? null;
  const host = o.node.spec.hostname;
  if (d.run && isNodeTask(d.run)) {
    const stops = mine?.stops ?? d.take?.request.stops;
    const lease = mine?.since ?? (d.take ? o.nowIso : null);
    if (lease === null || !stops || stops.osds.length === 0) return { d, release: false };
    const n = nooutBefore(lease, stops.osds, !mine, o.runs.noout, host, o.now, o.retryBaseMs);
    if (!n) return { d, release: false };
    const { run: _, ...rest } = d;
    const wait = n.requeueAfterMs === undefined ? {} : { requeueAfterMs: n.requeueAfterMs };
    return { d: { ...rest, reason: 'SettingNoout', message: n.message, ...(n.run ? { run: n.run } : {}), ...wait }, release: false };
  }
  if (!mine || !over || d.run) return { d, release: false };
  const n = nooutRelease(mine, o.runs.noout, host, o.now, o.retryBaseMs);
  if (n.release) return { d, release: true };
  const maintenance = mine.kind === DisruptionLeaseKind.maintenance;
  return {
    d: {
      ...d,
      ...(maintenance ? { phase: 'maintenance' as const, reason: LEAVING } : { reason: 'ClearingNoout' }),
      message: n.message,
      ...(n.run ? { run: n.run } : {}),
      ...(n.requeueAfterMs === undefined ? {} : { requeueAfterMs: n.requeueAfterMs }),
    },
    release: false,
  };
}

/** What is still wanted on the node: a daemon removed meanwhile is not waited for. */
function wantedDaemons(o: NodeObserved): { osds: number[]; mon: boolean; mds: boolean } {
  return {
    osds: [...o.disks.values()].flatMap((x) => (x?.spec.osd && typeof x.status.osdId === 'number' ? [x.status.osdId] : [])),
    mon: o.node.spec.daemons.mon !== undefined,
    mds: o.node.spec.daemons.mds !== undefined,
  };
}

/** What maintenance.ts needs of the node. */
function maintenanceInput(o: NodeObserved): MaintenanceInput {
  const hostname = o.node.spec.hostname;
  return {
    node: o.node,
    runs: o.runs,
    ...(o.disruption ? { disruption: o.disruption } : {}),
    fresh: isFresh(o),
    now: o.now,
    nowIso: o.nowIso,
    retryBaseMs: o.retryBaseMs,
    heartbeatTimeoutMs: o.heartbeatTimeoutMs,
    domain: o.domain ?? hostname,
    running: o.obs.report?.daemons,
    wanted: wantedDaemons(o),
    stops: stopsOfNode(hostname, o.obs.report?.daemons),
  };
}

/** What keepLease needs to know of the node. */
function leaseFacts(o: NodeObserved, d: Decision) {
  const { spec, status } = o.node;
  const ack = { ...status, ...d.ack };
  const pending =
    spec.restartGeneration > (ack.observedRestartGeneration ?? 0) || spec.shutdownGeneration > (ack.observedShutdownGeneration ?? 0);
  const sent = o.runs.restart?.bootId ?? null;
  const report = o.obs.report;
  return {
    pending,
    error: d.phase === 'error',
    offline: d.phase === 'offline',
    backFromBoot: isFresh(o) && report !== null && report.bootId !== sent,
    running: report?.daemons,
    wanted: wantedDaemons(o),
  };
}

/** When the restart grace of a node not heard from since this controller began to lead ends:
 * the loop must look again then, or a little later (never earlier: before it there is nothing
 * new to see). A node heard from since needs no timer: the Fleet's staleness sweep wakes it
 * when its last report goes stale (src/fleet/fleet.ts). */
function untilGraceEnds(o: NodeObserved): number | null {
  if (!o.node.status.phase || !heardOnlyBefore(o) || isFresh(o)) return null;
  const left = o.startedAt + o.heartbeatTimeoutMs - o.now;
  const jitter = Math.floor(Math.min(Math.max(o.staleJitter ?? 0, 0), 1) * STALE_JITTER * o.heartbeatTimeoutMs);
  return left >= 0 ? left + 1 + jitter : null;
}

/** No report since this controller leads: none at all, or only the one a previous leader
 * recorded in the store (its heartbeat record, loaded at the election). Its silence since may
 * be nobody's having listened, so it gets the restart grace. */
function heardOnlyBefore(o: Pick<NodeObserved, 'obs' | 'startedAt'>): boolean {
  return o.obs.lastReportAt === null || o.obs.lastReportAt < o.startedAt;
}

export function isFresh(o: Pick<NodeObserved, 'obs' | 'now' | 'heartbeatTimeoutMs'>): boolean {
  return o.obs.lastReportAt !== null && o.now - o.obs.lastReportAt <= o.heartbeatTimeoutMs;
}

function decide(o: NodeObserved): Decision {
  const { spec, status } = o.node;
  // Before any request: a looping machine has no agent to send a run to, and the restart
  // request that resets the loop is acknowledged here without one.
  const loop = bootLoop(spec, status, o.obs, o.now, o.bootLoop ?? defaultBootLoopLimits);
  if (loop.state === 'detected' || loop.state === 'held')
    return { phase: 'error', reason: BOOT_LOOP, message: loop.message, bootLoop: 'on' };
  if (loop.state === 'reset') return { ...steady(o), ack: { observedRestartGeneration: loop.restartGeneration }, bootLoop: 'reset' };
  if (spec.shutdownGeneration > (status.observedShutdownGeneration ?? 0)) {
    const d = request(o, NodeTask.shutdown, spec.shutdownGeneration);
    // A restart asked for before the shutdown is moot once the node is off.
    return d.ack ? { ...d, ack: { ...d.ack, observedRestartGeneration: spec.restartGeneration } } : d;
  }
  const powerOn = powerOnRequest(spec, status);
  if (powerOn !== null) return planPowerOn(powerInput(o, o.runs.powerOn), powerOn, steady(o));
  if (spec.restartGeneration > (status.observedRestartGeneration ?? 0)) {
    const d = request(o, NodeTask.restart, spec.restartGeneration);
    if (!d.ack) return d;
    return maintenance(o, { ...steady(o), ack: d.ack });
  }
  return maintenance(o, steady(o));
}

/** Maintenance (maintenance.ts) when no other request is pending; `s` is the phase otherwise.
 * Its decisions carry maintenance's own steps, which are StartRuns. */
const maintenance = (o: NodeObserved, s: Decision): Decision => {
  const m = planMaintenance(maintenanceInput(o), s) as Decision;
  // A restart just confirmed (its ack) is acknowledged whatever maintenance decides.
  return s.ack && m.ack === undefined ? { ...m, ack: s.ack } : m;
};

/** The phase when no restart or shutdown is pending. */
function steady(o: NodeObserved): Decision {
  const lastPxe = lastBoot(o.obs, 'pxe');
  const reportedSinceBoot = o.obs.lastReportAt !== null && (lastPxe === null || o.obs.lastReportAt >= lastPxe);
  if (lastPxe !== null && !reportedSinceBoot) {
    const imageFetched = (lastBoot(o.obs, 'image') ?? -1) >= lastPxe;
    const firstInstall = o.node.status.phase === undefined || o.node.status.phase === 'discovered';
    if (firstInstall && !imageFetched) {
      return { phase: 'discovered', reason: 'NetworkBooted', message: 'seen at network boot; waiting for it to fetch its image' };
    }
    return { phase: 'booting', reason: 'Booting', message: 'booting its image; waiting for the agent to report' };
  }
  // Checked before freshness: the agent may still report for a moment after it acknowledged.
  if (poweredOff(o)) return { phase: 'offline', reason: 'PoweredOff', message: 'shut down on request' };
  if (isFresh(o)) return { phase: 'active', reason: 'AgentReporting', message: 'the agent reports' };
  const cur = o.node.status.phase;
  if (heardOnlyBefore(o) && cur && cur !== 'discovered' && o.now - o.startedAt <= o.heartbeatTimeoutMs) {
    return { phase: cur, reason: 'AwaitingReport', message: 'Quarry restarted; waiting for the agent to report again' };
  }
  if (o.obs.lastReportAt === null && (o.node.status.phase === undefined || o.node.status.phase === 'discovered')) {
    return { phase: 'discovered', reason: 'Registered', message: 'registered; waiting for it to network-boot' };
  }
  return { phase: 'offline', reason: 'AgentSilent', message: `no agent report for more than ${o.heartbeatTimeoutMs} ms` };
}

/** Shut down on request and not booted since: the agent's last words came from the boot the
 * shutdown was sent to. */
function poweredOff(o: NodeObserved): boolean {
  const sd = o.runs.shutdown;
  if (!sd || sd.state !== 'completed' || sd.request > (o.node.status.observedShutdownGeneration ?? 0)) return false;
  return !o.obs.report || o.obs.report.bootId === sd.bootId;
}

function request(o: NodeObserved, task: NodeTask, gen: number): Decision {
  const busy: NodeStatus = task === NodeTask.restart ? 'rebooting' : 'shutting-down';
  const verb = task === NodeTask.restart ? 'restart' : 'shutdown';
  const r = task === NodeTask.restart ? o.runs.restart : o.runs.shutdown;
  const run = r && r.request === gen ? r : null;
  if (run && (run.state === 'pending' || run.state === 'running')) {
    return { phase: busy, reason: 'RunInProgress', message: `${verb} run ${run.id} is ${run.state}` };
  }
  if (run && run.state === 'completed') return confirm(o, task, gen, run, busy);
  if (!isFresh(o)) {
    const blocked = {
      reason: 'NodeOffline',
      message: `${verb} requested but the node is offline; nothing is done to it until it reports again`,
    };
    return { ...steady(o), blocked };
  }
  const attempt = run ? run.attempt + 1 : 1;
  if (run && run.attempt >= MAX_ATTEMPTS) {
    return { phase: 'error', reason: `${cap(verb)}Failed`, message: `${verb} failed ${run.attempt} times; request it again to retry` };
  }
  if (run && run.completedAt !== null) {
    const due = run.completedAt + o.retryBaseMs * 2 ** (run.attempt - 1);
    if (o.now < due) return { phase: busy, reason: 'RetryBackoff', message: `${verb} failed; retrying`, requeueAfterMs: due - o.now };
  }
  return {
    phase: busy,
    reason: 'RunStarted',
    message: `${verb} requested`,
    run: { taskName: task, request: gen, attempt, bootId: o.obs.report?.bootId ?? null },
  };
}

/** A completed run means the command was accepted; the node has restarted only when its
 * agent reports from a new boot, and is off only when it falls silent. */
function confirm(o: NodeObserved, task: NodeTask, gen: number, run: RunView, busy: NodeStatus): Decision {
  const report = o.obs.report;
  if (task === NodeTask.restart) {
    if (isFresh(o) && report && report.bootId !== run.bootId) {
      return { phase: 'active', reason: 'Restarted', message: 'restarted', ack: { observedRestartGeneration: gen } };
    }
    return {
      phase: busy,
      reason: 'WaitingForAgent',
      message: 'restart sent; waiting for the agent to report from the new boot',
      requeueAfterMs: o.heartbeatTimeoutMs,
    };
  }
  // With a BMC the power itself must read off (forced after the grace).
  if (o.node.spec.bmc)
    return planPowerOff(powerInput(o, o.runs.powerOff), gen, o.softOffGraceMs ?? DEFAULT_SOFT_OFF_GRACE_MS, () =>
      agentOff(o, gen, run, busy),
    );
  return agentOff(o, gen, run, busy);
}

/** A node without a BMC (or whose BMC failed every try) is off when its agent falls silent. */
function agentOff(o: NodeObserved, gen: number, run: RunView, busy: NodeStatus): Decision {
  const report = o.obs.report;
  if (isFresh(o) && (o.obs.lastReportAt ?? 0) > (run.completedAt ?? 0) && report?.bootId === run.bootId) {
    return {
      phase: busy,
      reason: 'WaitingForPowerOff',
      message: 'shutdown sent; the agent still reports',
      requeueAfterMs: o.heartbeatTimeoutMs,
    };
  }
  return { phase: 'offline', reason: 'PoweredOff', message: 'shut down on request', ack: { observedShutdownGeneration: gen } };
}

function powerInput(o: NodeObserved, run: PowerRunView | null | undefined): PowerInput {
  return {
    spec: o.node.spec,
    status: o.node.status,
    // The agent's last words before a shutdown are not a machine that is on.
    fresh: isFresh(o) && !poweredOff(o),
    now: o.now,
    run,
    maxAttempts: MAX_ATTEMPTS,
    retryBaseMs: o.retryBaseMs,
    bootWaitMs: o.powerOnBootMs ?? DEFAULT_POWER_ON_BOOT_MS,
  };
}

function buildStatus(o: NodeObserved, d: Decision, release: boolean): NodeStatusFields {
  const cur = o.node.status;
  const gen = o.node.metadata.generation;
  let conditions: Condition[] = cur.conditions ?? [];
  const set = (type: string, on: boolean, reason: string, message: string) => {
    conditions = setCondition(conditions, { type, status: on ? 'True' : 'False', reason, message }, gen, o.nowIso);
  };
  set('Ready', d.phase === 'active', d.reason, d.message);
  const moving =
    d.phase === 'discovered' ||
    d.phase === 'booting' ||
    d.phase === 'rebooting' ||
    d.phase === 'shutting-down' ||
    (d.phase === 'maintenance' && (d.reason === ENTERING || d.reason === LEAVING));
  set('Progressing', moving, moving ? d.reason : 'Idle', moving ? d.message : '');
  set('Blocked', d.blocked !== undefined, d.blocked?.reason ?? 'NotBlocked', d.blocked?.message ?? '');
  set('Degraded', d.phase === 'error', d.phase === 'error' ? d.reason : 'Healthy', d.phase === 'error' ? d.message : '');
  // Only nodes that ever looped carry the condition.
  if (d.bootLoop === 'on') set(BOOT_LOOP, true, 'TooManyBoots', d.message);
  else if (d.bootLoop === 'reset') set(BOOT_LOOP, false, 'ResetByRestart', 'reset by a restart request');
  const approved = isNodeApproved(o.node);
  set(
    APPROVED,
    approved,
    approved ? 'Approved' : 'AwaitingApproval',
    approved ? '' : 'found by network boot; waiting for an admin to approve it (node.approve)',
  );
  // Only nodes that ever had a conflict carry the condition.
  if (o.credentialConflict) set(CREDENTIAL_CONFLICT, true, 'SecondParty', o.credentialConflict);
  else if (conditions.some((c) => c.type === CREDENTIAL_CONFLICT && c.status === 'True'))
    set(CREDENTIAL_CONFLICT, false, 'Reapproved', 'approved again by an admin');
  const report = o.obs.report;
  const next: NodeStatusFields = {
    ...cur,
    ...d.ack,
    phase: d.phase,
    conditions,
    observedGeneration: gen,
    diskIds: diskIdsOf(o.node.id, o.node.status.diskIds ?? [], o.obs.report),
    ...(d.bootLoop === 'reset' ? { bootLoopResetAt: o.nowIso } : {}),
    ...(d.daemonConfig ? { daemonConfig: d.daemonConfig } : {}),
    ...(o.obs.bootAddress !== undefined ? { bootAddress: o.obs.bootAddress } : {}),
  };
  const mine = o.disruption?.mine;
  const held =
    mine && !release ? { kind: mine.kind ?? 'drain', since: mine.since } : d.take ? { kind: d.take.request.kind, since: o.nowIso } : null;
  const waiting = d.waiting && d.blocked ? { ...d.waiting, reason: d.blocked.message } : null;
  const disruption = disruptionStatus(cur.disruption, o.nowIso, held, waiting);
  if (disruption) next.disruption = disruption;
  else delete next.disruption;
  if (report) {
    next.ip = report.ip;
    next.bootId = report.bootId;
    next.nics = report.nics.map((n) => ({ name: n.name, mac: n.mac.toLowerCase(), ip: n.ip, connected: n.connected, mtu: n.mtu }));
    // Every node daemon of the catalogue, absent from the report meaning not running.
    const flags = Object.fromEntries(NODE_DAEMON_TYPES.map((t) => [t, report.daemons[t] === true]));
    next.daemons = { ...flags, osds: [...report.daemons.osds].sort((a, b) => a - b) };
  }
  return next;
}

function lastBoot(obs: Observation, stage: 'pxe' | 'image'): number | null {
  for (let i = obs.boots.length - 1; i >= 0; i--) {
    const b = obs.boots[i];
    if (b && b.stage === stage) return b.at;
  }
  return null;
}

const cap = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1);
