// The node loop's maintenance and noout window, pure (issue #15, part 3).
//
// Maintenance (spec.maintenance): the node takes a lease of kind `maintenance` through the same
// gate as restarts (its daemons from the agent's report as stops, Ceph asked for the set), then
// `ceph osd set-group noout <host>` (when it stops OSDs), then `node.daemons-stop`; phase
// `maintenance` from the lease on. Leaving: `node.daemons-start`, the agent reports them running
// again, noout cleared, the lease given back, phase `active`. The lease is held the whole time.
//
// The noout window: a restart or shutdown that stops OSDs sets noout under its lease before its
// run is sent, and clears it before the lease goes back (a restart once the node is back, a
// shutdown once it is off: a node that stays off then has its data recovered by Ceph).
//
// Every step is tied to its lease by `lease` (when the lease was taken) in its arguments, so
// after a crash the loop finds the runs of this maintenance again and sends none twice.
import { Step } from '../../src/catalogue/index.js';
import { DisruptionLeaseKind, type DisruptionLease, type LeaseStops } from '../../src/model/disruption-kinds.js';
import { Kind, type NodeStatus, type RunState } from '../../src/model/kinds.js';
import type { DisruptionRequest } from '../shared/disruption-gate.js';
import {
  admitRequest,
  daemonsBack,
  type DaemonsRunning,
  type DaemonsWanted,
  type NodeDisruptionObserved,
  type NodeGate,
} from './disruption.js';

export const MaintenanceTask = { noout: Step.osdNoout, stop: Step.nodeDaemonsStop, start: Step.nodeDaemonsStart } as const;
export type MaintenanceTask = (typeof MaintenanceTask)[keyof typeof MaintenanceTask];

export const IN_MAINTENANCE = 'InMaintenance';
export const ENTERING = 'EnteringMaintenance';
export const LEAVING = 'LeavingMaintenance';
export { NODE_IN_MAINTENANCE } from '../shared/node-active.js';

/** A run of one of these steps, reduced to what the plan needs. */
export interface LeaseRunView {
  id: string;
  state: RunState;
  attempt: number;
  /** The lease (its `since`) the run was started under. */
  lease: string | null;
  /** ceph.osd.noout: set (true) or clear (false). */
  set?: boolean;
  completedAt: number | null;
}

export interface MaintenanceRuns {
  noout?: LeaseRunView | null;
  stop?: LeaseRunView | null;
  start?: LeaseRunView | null;
}

/** The step the plan wants started (a master script for noout, the agent for the daemons). */
export interface MaintenanceRun {
  taskName: MaintenanceTask;
  lease: string;
  attempt: number;
  /** ceph.osd.noout: set or clear. */
  set?: boolean;
  /** ceph.osd.noout: the OSDs the lease stops. */
  osds?: number[];
  request: number;
  bootId: null;
}

/** What this needs of the node and the loop's view (a slice of NodeObserved). */
export interface MaintenanceInput {
  node: { id: string; spec: { hostname: string; maintenance?: boolean }; status: { phase?: NodeStatus } };
  runs: MaintenanceRuns;
  disruption?: NodeDisruptionObserved;
  fresh: boolean;
  now: number;
  nowIso: string;
  retryBaseMs: number;
  heartbeatTimeoutMs: number;
  domain: string;
  /** The daemons the agent reports running (undefined: no report). */
  running: DaemonsRunning;
  wanted: DaemonsWanted;
  /** The daemons the node would stop now (its agent's report). */
  stops: LeaseStops;
}

/** The part of a node decision this module reads and writes. */
export interface StepDecision {
  phase: NodeStatus;
  reason: string;
  message: string;
  run?: MaintenanceRun | { taskName: string; request: number; attempt: number; bootId: string | null } | undefined;
  requeueAfterMs?: number;
  blocked?: { reason: string; message: string };
  /** A maintenance that wants its lease: gateMaintenance decides. */
  wantsLease?: DisruptionRequest;
}

export const isMaintenanceTask = (t: string): t is MaintenanceTask => Object.values<string>(MaintenanceTask).includes(t);

const maintenanceLease = (d: NodeDisruptionObserved | undefined): DisruptionLease | null =>
  d?.mine && d.mine.kind === DisruptionLeaseKind.maintenance ? d.mine : null;

export const maintenanceWanted = (spec: { maintenance?: boolean }): boolean => spec.maintenance === true;

/** The request of a maintenance lease: the node's domain, its daemons as the agent reports them. */
export function maintenanceRequest(node: { id: string; spec: { hostname: string } }, domain: string, stops: LeaseStops): DisruptionRequest {
  return {
    holder: { kind: Kind.Node, id: node.id },
    kind: DisruptionLeaseKind.maintenance,
    what: `maintenance of ${node.spec.hostname}`,
    nodes: [node.id],
    domains: [domain],
    stops,
  };
}

const ofLease = (r: LeaseRunView | null | undefined, lease: string): LeaseRunView | null => (r && r.lease === lease ? r : null);
const active = (r: LeaseRunView | null): boolean => r !== null && (r.state === 'pending' || r.state === 'running');

/** The next try of a step: none yet, failed (after a backoff, doubling up to 8× the base), or busy. */
function next(
  r: LeaseRunView | null,
  now: number,
  retryBaseMs: number,
): { kind: 'start'; attempt: number } | { kind: 'busy' } | { kind: 'wait'; ms: number } | { kind: 'done' } {
  if (!r) return { kind: 'start', attempt: 1 };
  if (active(r)) return { kind: 'busy' };
  if (r.state === 'completed') return { kind: 'done' };
  const due = (r.completedAt ?? now) + retryBaseMs * 2 ** Math.min(r.attempt - 1, 3);
  return now < due ? { kind: 'wait', ms: due - now } : { kind: 'start', attempt: r.attempt + 1 };
}

const run = (taskName: MaintenanceTask, lease: string, attempt: number, set?: boolean, osds?: readonly number[]): MaintenanceRun => ({
  taskName,
  lease,
  attempt,
  request: 0,
  bootId: null,
  ...(set === undefined ? {} : { set }),
  ...(osds === undefined ? {} : { osds: [...osds] }),
});

/** A step to take (or wait for) as a decision: `label` says what it is. */
function stepDecision(
  base: StepDecision,
  r: LeaseRunView | null,
  m: MaintenanceInput,
  make: (attempt: number) => MaintenanceRun,
  label: string,
): StepDecision | null {
  const n = next(r, m.now, m.retryBaseMs);
  if (n.kind === 'done') return null;
  if (n.kind === 'busy') return { ...base, message: `${label} (run ${r!.id} is ${r!.state})` };
  if (n.kind === 'wait') return { ...base, message: `${label} failed; retrying`, requeueAfterMs: n.ms };
  return { ...base, message: label, run: make(n.attempt) };
}

/**
 * The node's maintenance, when no restart, shutdown or power-on is pending: `s` is the phase it
 * would have otherwise. Entering waits for its lease (wantsLease: the gate decides); in the
 * lease, noout then daemons-stop; leaving, daemons-start and the daemons back (then the noout
 * window clears noout and gives the lease back: `over`).
 */
export function planMaintenance(m: MaintenanceInput, s: StepDecision): StepDecision & { over?: boolean } {
  const wanted = maintenanceWanted(m.node.spec);
  const mine = maintenanceLease(m.disruption);
  if (!mine) {
    if (!wanted) return s;
    if (!m.fresh || s.phase !== 'active') {
      const blocked = {
        reason: 'NodeOffline',
        message: `maintenance requested but the node is ${s.phase}; it begins once the node is active`,
      };
      return s.phase === 'offline' ? { ...s, blocked } : s;
    }
    const req = maintenanceRequest(m.node, m.domain, m.stops);
    // The first step goes out as the lease is taken: noout when it stops OSDs, else the stop.
    const first =
      m.stops.osds.length > 0 ? run(MaintenanceTask.noout, m.nowIso, 1, true, m.stops.osds) : run(MaintenanceTask.stop, m.nowIso, 1);
    return { phase: 'maintenance', reason: ENTERING, message: `entering maintenance: ${first.taskName}`, run: first, wantsLease: req };
  }
  const lease = mine.since;
  // A node that went off (a shutdown in maintenance) is off; it keeps its lease.
  if (s.phase === 'offline' || !m.fresh) {
    const blocked = wanted
      ? undefined
      : { reason: 'NodeOffline', message: 'leaving maintenance waits: the node is offline; its daemons start once it reports again' };
    return blocked ? { ...s, blocked } : s;
  }
  const stopRun = ofLease(m.runs.stop, lease);
  // Asked again once leaving has begun (its daemons started, or noout cleared, under this lease):
  // leaving finishes and the lease goes back, then a new lease enters afresh. Going back in
  // under this lease would take the stop done before the start, or the noout since cleared, as
  // still holding: "in maintenance" with its daemons running, or OSDs stopped without noout.
  const leavingBegun = ofLease(m.runs.start, lease) !== null || ofLease(m.runs.noout, lease)?.set === false;
  if (wanted && !leavingBegun) {
    const entering: StepDecision = { phase: 'maintenance', reason: ENTERING, message: '' };
    const noout = ofLease(m.runs.noout, lease);
    if ((mine.stops?.osds.length ?? 0) > 0 && !(noout?.set === false)) {
      const d = stepDecision(
        entering,
        noout,
        m,
        (a) => run(MaintenanceTask.noout, lease, a, true, mine.stops?.osds),
        `entering maintenance: noout for the OSDs of ${m.node.spec.hostname}`,
      );
      if (d) return d;
    }
    const d = stepDecision(
      entering,
      stopRun,
      m,
      (a) => run(MaintenanceTask.stop, lease, a),
      'entering maintenance: stopping its Ceph daemons',
    );
    if (d) return d;
    return {
      phase: 'maintenance',
      reason: IN_MAINTENANCE,
      message: `in maintenance since ${lease}: its Ceph daemons are stopped, noout holds its OSDs in`,
    };
  }
  const leaving: StepDecision = { phase: 'maintenance', reason: LEAVING, message: '' };
  const again = wanted ? '; maintenance asked again: it enters anew once this lease is given back' : '';
  // A stop under way finishes first: starting meanwhile would race it.
  if (active(stopRun)) return { ...leaving, message: `leaving maintenance: waiting for the stop (run ${stopRun!.id}) to end${again}` };
  if (stopRun) {
    const startRun = ofLease(m.runs.start, lease);
    const d = stepDecision(
      leaving,
      startRun,
      m,
      (a) => run(MaintenanceTask.start, lease, a),
      `leaving maintenance: starting its Ceph daemons${again}`,
    );
    if (d) return d;
    // As a restart's lease waits for them (keepLease): the OSDs, monitor and MDS it ran before.
    if (!daemonsBack(mine.stops, m.running, m.wanted)) {
      const until = (startRun?.completedAt ?? m.now) + 2 * m.heartbeatTimeoutMs;
      // Not all back in time: the daemon loops take over (they start what is wanted).
      if (m.now < until)
        return {
          ...leaving,
          message: `leaving maintenance: waiting for the agent to report its daemons running${again}`,
          requeueAfterMs: Math.min(until - m.now, m.heartbeatTimeoutMs),
        };
    }
  }
  return { ...s, over: true };
}

/** The budget's word on a maintenance: like a restart's (gateRun), but it always takes a lease,
 * even when the node stops nothing: a node in maintenance is a disrupted domain all the same. */
export function gateMaintenance(
  d: NodeDisruptionObserved | undefined,
  req: DisruptionRequest,
  previous: { reason: string; message: string } | null,
): NodeGate {
  return admitRequest(d, req, 'maintenance', previous, 'done');
}

/**
 * The noout window around a lease's end: before the lease goes back, the noout set under it is
 * cleared. `over`: the lease would be given back now. Returns the step to take instead (or a
 * wait), and whether the lease may go back.
 */
export function nooutRelease(
  mine: DisruptionLease,
  noout: LeaseRunView | null | undefined,
  hostname: string,
  now: number,
  retryBaseMs: number,
): { release: true } | { release: false; run?: MaintenanceRun; message: string; requeueAfterMs?: number } {
  const r = ofLease(noout, mine.since);
  if (!r) return { release: true };
  if (r.set === false) {
    const n = next(r, now, retryBaseMs);
    if (n.kind === 'done') return { release: true };
    if (n.kind === 'busy') return { release: false, message: `clearing noout for the OSDs of ${hostname} (run ${r.id})` };
    if (n.kind === 'wait') return { release: false, message: 'clearing noout failed; retrying', requeueAfterMs: n.ms };
    return {
      release: false,
      run: run(MaintenanceTask.noout, mine.since, n.attempt, false, mine.stops?.osds),
      message: `clearing noout for the OSDs of ${hostname}`,
    };
  }
  // Set (or being set) under this lease: cleared once the set is no longer under way.
  if (active(r)) return { release: false, message: `noout for ${hostname} is being set (run ${r.id}); cleared next` };
  return {
    release: false,
    run: run(MaintenanceTask.noout, mine.since, 1, false, mine.stops?.osds),
    message: `clearing noout for the OSDs of ${hostname}`,
  };
}

/**
 * Before a restart or shutdown run under a lease that stops OSDs: noout set under that lease
 * first. `lease`: the lease's since (held, or taken now: then nothing was set under it yet).
 * Null: send the run.
 */
export function nooutBefore(
  lease: string,
  osds: readonly number[],
  taking: boolean,
  noout: LeaseRunView | null | undefined,
  hostname: string,
  now: number,
  retryBaseMs: number,
): { run?: MaintenanceRun; message: string; requeueAfterMs?: number } | null {
  const r = taking ? null : ofLease(noout, lease);
  if (r?.set === false) return null; // cleared already: the request is ending
  const n = next(r, now, retryBaseMs);
  if (n.kind === 'done') return null;
  const label = `noout for the OSDs of ${hostname} before its daemons stop`;
  if (n.kind === 'busy') return { message: `${label} (run ${r!.id} is ${r!.state})` };
  if (n.kind === 'wait') return { message: `${label}: failed; retrying`, requeueAfterMs: n.ms };
  return { run: run(MaintenanceTask.noout, lease, n.attempt, true, osds), message: label };
}
