// The node loop's part in the disruption budget, pure. Before a restart or shutdown run is sent,
// the node takes a lease (admitted by reconcilers/shared/disruption-gate.ts against every lease
// held: failure domains, and Ceph's ok-to-stop for everything that would be down together). A
// node whose agent reports no Ceph daemon stops nothing Ceph cares about: it goes without a
// lease. A restart's lease is given back once the node is back from its new boot and its agent
// reports the OSDs it ran before; a shutdown's once the node is off.
import { DisruptionLeaseKind, type DisruptionLease, type LeaseStops } from '../../src/model/disruption-kinds.js';
import { Kind, type NodeDisruption } from '../../src/model/kinds.js';
import {
  admit,
  basisOf,
  describeLease,
  isStopping,
  stopsNothing,
  type Admission,
  type BudgetLimits,
  type DisruptionRequest,
} from '../shared/disruption-gate.js';
import type { StopAnswers } from '../shared/stop-gate.js';

/** What observe read of the budget for this node. */
export interface NodeDisruptionObserved {
  limits: BudgetLimits;
  /** The lease this node holds, if it does. */
  mine: DisruptionLease | null;
  /** The live leases of others (stale ones left out). */
  held: DisruptionLease[];
  /** Holders whose leases are stale: dropped by the CAS that takes this node's. */
  stale: string[];
  /** Ceph's answers for the set stopSetFor(held, request), when Ceph was asked this time. */
  answers?: StopAnswers;
  /** Ceph was due to be asked but was not (asked less than a recheck ago): keep the last verdict. */
  notDue?: { retryInMs: number };
}

/** The lease the plan wants taken as its run starts (CAS on `basis`). */
export interface LeaseTake {
  request: DisruptionRequest;
  basis: string;
  stale: string[];
  /** For the run's log: which lease admitted it, and Ceph's word. */
  notes: string[];
}

/** The daemons a node stops when it goes down, by their Ceph names (a node's monitor and MDS
 * are named by its hostname), from its agent's report. */
export function stopsOfNode(hostname: string, daemons: { mon?: boolean; mds?: boolean; osds?: readonly number[] } | undefined): LeaseStops {
  return {
    osds: [...(daemons?.osds ?? [])].sort((a, b) => a - b),
    mons: daemons?.mon ? [hostname] : [],
    mds: daemons?.mds ? [hostname] : [],
  };
}

export function nodeRequest(
  node: { id: string; spec: { hostname: string } },
  verb: 'restart' | 'shutdown',
  domain: string,
  stops: LeaseStops,
): DisruptionRequest {
  return {
    holder: { kind: Kind.Node, id: node.id },
    kind: verb === 'restart' ? DisruptionLeaseKind.restart : DisruptionLeaseKind.shutdown,
    what: `${verb} of ${node.spec.hostname}`,
    nodes: [node.id],
    domains: [domain],
    stops,
  };
}

export const stopNames = (s: LeaseStops): string =>
  [...s.osds.map((id) => `osd.${id}`), ...s.mons.map((n) => `mon.${n}`), ...s.mds.map((n) => `mds.${n}`)].join(', ');

/** Ceph's answers in a line of the run's log. */
export function cephNote(a: StopAnswers | undefined): string {
  const parts: string[] = [];
  if (a?.osd)
    parts.push(
      'error' in a.osd
        ? `osd: ${a.osd.error}`
        : `osd ok-to-stop ${a.osd.osds.map((i) => `osd.${i}`).join(' ')}: ${a.osd.ok ? 'ok' : (a.osd.reason ?? 'no')} (${a.osd.okPgs} PGs stay available, ${a.osd.becomeDegraded.length + a.osd.becomeMoreDegraded.length} degraded)`,
    );
  if (a?.mon) parts.push('error' in a.mon ? `mon: ${a.mon.error}` : `mon ok-to-stop ${a.mon.mons.join(' ')}: ${a.mon.message}`);
  if (a?.mds) parts.push('error' in a.mds ? `mds: ${a.mds.error}` : `mds ok-to-stop ${a.mds.mds.join(' ')}: ${a.mds.message}`);
  return parts.length > 0 ? `Ceph: ${parts.join('; ')}` : 'Ceph was not asked: the set stops no Ceph daemon';
}

export type NodeGate =
  | { go: true; take: LeaseTake | null; note: string | null }
  | { go: false; blocked: { reason: string; message: string }; heldBy: string[]; retryInMs?: number };

/**
 * Whether the node's run may go: with the lease it holds; with one to take (admitted now); without
 * one (it stops no Ceph daemon); or not (the budget or Ceph holds it).
 */
export function gateRun(
  d: NodeDisruptionObserved | undefined,
  req: DisruptionRequest,
  verb: string,
  previous: { reason: string; message: string } | null,
): NodeGate {
  // Held already (taken before a failed attempt, or before Quarry restarted): it goes on that lease.
  if (d?.mine) return { go: true, take: null, note: `sent under the disruption lease it holds: ${describeLease(d.mine)}` };
  // A kind that asks no Ceph (a fence) counts its failure domain whatever runs on the node.
  if (stopsNothing(req.stops) && isStopping(req.kind)) {
    return { go: true, take: null, note: `${req.what} stops no Ceph daemon: sent without a disruption lease` };
  }
  return admitRequest(d, req, verb, previous, 'sent');
}

/**
 * The budget's admission of `req` with no lease held: admitted (the lease to take, with the run
 * log's notes), or held back saying why. `outcome` words what did not happen ("nothing was sent"
 * for a run, "done" for a maintenance's steps). Shared by runs and maintenance (maintenance.ts).
 */
export function admitRequest(
  d: NodeDisruptionObserved | undefined,
  req: DisruptionRequest,
  verb: string,
  previous: { reason: string; message: string } | null,
  outcome: 'sent' | 'done',
): NodeGate {
  if (!d)
    return {
      go: false,
      blocked: { reason: 'DisruptionBudget', message: `${verb} waits: the disruption budget has not been read; nothing was ${outcome}` },
      heldBy: [],
    };
  const a: Admission = admit(d.limits, d.held, req, d.answers);
  if (a.ok) {
    const held = d.held.length === 0 ? 'no other lease held' : `held with ${d.held.map(describeLease).join(', ')}`;
    const notes = [`admitted by the disruption budget: lease "${req.what}" on ${req.domains.join(', ')} (${held})`, cephNote(d.answers)];
    return { go: true, take: { request: req, basis: basisOf(d.held), stale: d.stale, notes }, note: null };
  }
  const heldBy = a.heldBy.map(describeLease);
  // Ceph not asked this time (asked less than a recheck ago): its last verdict stands until then.
  if (d.notDue && a.ceph !== undefined && previous?.reason === 'DisruptionBudget') {
    return { go: false, blocked: previous, heldBy, retryInMs: d.notDue.retryInMs };
  }
  return {
    go: false,
    blocked: {
      reason: a.reason,
      message: `${verb} would stop ${stopNames(req.stops) || 'no Ceph daemon'}: ${a.message}; nothing was ${outcome}`,
    },
    heldBy,
  };
}

/** The daemons an agent reports running. */
export type DaemonsRunning = { osds?: readonly number[]; mon?: boolean; mds?: boolean } | undefined;
/** What is still wanted on the node: a daemon removed meanwhile is not waited for. */
export type DaemonsWanted = { osds: readonly number[]; mon: boolean; mds: boolean };

/** A restart's lease is kept until the node reports from its new boot with the daemons it ran
 * before running again (its OSDs, its monitor, its MDS); a shutdown's until the node is off
 * (its request acknowledged). A request that failed for good gives it back. */
export function keepLease(
  mine: DisruptionLease,
  s: {
    pending: boolean;
    error: boolean;
    offline: boolean;
    backFromBoot: boolean;
    running: DaemonsRunning;
    wanted: DaemonsWanted;
  },
): boolean {
  if (s.error) return false;
  if (s.pending) return true;
  if (mine.kind !== DisruptionLeaseKind.restart || s.offline) return false;
  return !(s.backFromBoot && daemonsBack(mine.stops, s.running, s.wanted));
}

/** The daemons a lease stopped run again (those still wanted). */
export function daemonsBack(before: LeaseStops | undefined, r: DaemonsRunning, w: DaemonsWanted): boolean {
  const b = before ?? { osds: [], mons: [], mds: [] };
  return (
    b.osds.every((id) => !w.osds.includes(id) || r?.osds?.includes(id) === true) &&
    (b.mons.length === 0 || !w.mon || r?.mon === true) &&
    (b.mds.length === 0 || !w.mds || r?.mds === true)
  );
}

/** The node's `disruption` status field. */
export function disruptionStatus(
  prev: NodeDisruption | undefined,
  nowIso: string,
  held: { kind: string; since: string } | null,
  waiting: { kind: string; heldBy: string[]; reason: string } | null,
): NodeDisruption | undefined {
  if (held) return { state: 'held', kind: held.kind, since: held.since };
  if (!waiting) return undefined;
  const since = prev?.state === 'waiting' && prev.kind === waiting.kind ? prev.since : nowIso;
  return { state: 'waiting', kind: waiting.kind, since, heldBy: waiting.heldBy, reason: waiting.reason };
}
