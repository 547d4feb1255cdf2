// The disruption budget's admission, pure. A request (a holder, a kind, its nodes, their failure
// domains, the daemons it stops) is admitted against the leases already held only if, for the
// whole set together:
//  (a) the failure domains of every held lease plus the request's number at most maxUnavailable;
//  (b) for a kind that stops daemons, Ceph agrees to stop everything every held stopping lease
//      stops plus the request's: ONE osd ok-to-stop over the union, one mon, one mds
//      (stopVerdict over the answers observe gathered for exactly that set);
//  (c) for a drain, fewer than maxDisruptions drains are held.
// Each answer about Ceph is tied to the held leases it was asked against (`basisOf`): the lease
// is taken by CAS only if those are still the held leases (disruption-leases.ts).
import { DisruptionLeaseKind, type DisruptionBudgetSpec, type DisruptionLease, type LeaseStops } from '../../src/model/disruption-kinds.js';
import type { OsdPhase } from '../../src/model/kinds.js';
import { stopVerdict, type StopAnswers, type StopSet } from './stop-gate.js';

/** One failure domain disrupted at once, one drain at once, unless the budget says otherwise. */
export const DEFAULT_MAX_UNAVAILABLE = 1;
export const DEFAULT_MAX_DISRUPTIONS = 1;

export interface BudgetLimits {
  maxUnavailable: number;
  maxDisruptions: number;
}

export const limitsOf = (spec: Partial<DisruptionBudgetSpec> | undefined): BudgetLimits => ({
  maxUnavailable: spec?.maxUnavailable ?? DEFAULT_MAX_UNAVAILABLE,
  maxDisruptions: spec?.maxDisruptions ?? DEFAULT_MAX_DISRUPTIONS,
});

/** Phases in which an OSD's drain holds its lease (given back once the purge or destroy is done):
 * a disk holding a drain lease in none of them is a stale holder. */
export const DRAIN_LEASE_PHASES: readonly OsdPhase[] = ['draining', 'stopping', 'purging', 'destroying'];

/** Kinds that stop daemons: Ceph is asked before they are admitted. */
export const STOPPING_KINDS: readonly DisruptionLeaseKind[] = [
  DisruptionLeaseKind.restart,
  DisruptionLeaseKind.shutdown,
  DisruptionLeaseKind.maintenance,
  DisruptionLeaseKind.daemonRestart,
];

// A lease of an older document (no kind, nodes, domains) is a drain of no node.
export const kindOf = (l: DisruptionLease): DisruptionLeaseKind => l.kind ?? DisruptionLeaseKind.drain;
export const domainsOf = (l: DisruptionLease): string[] => l.domains ?? [];
export const nodesOf = (l: DisruptionLease): string[] => l.nodes ?? [];
export const NO_STOPS: LeaseStops = { osds: [], mons: [], mds: [] };
export const stopsOf = (l: DisruptionLease): LeaseStops => l.stops ?? NO_STOPS;
export const isStopping = (k: DisruptionLeaseKind): boolean => STOPPING_KINDS.includes(k);
export const stopsNothing = (s: LeaseStops): boolean => s.osds.length + s.mons.length + s.mds.length === 0;

export interface Holder {
  kind: string;
  id: string;
}
export const leaseKey = (l: Pick<DisruptionLease, 'holderKind' | 'holderId'>): string => `${l.holderKind}/${l.holderId}`;
export const holds = (l: DisruptionLease, h: Holder): boolean => l.holderKind === h.kind && l.holderId === h.id;

/** What asks for a lease. */
export interface DisruptionRequest {
  holder: Holder;
  kind: DisruptionLeaseKind;
  /** For an operator: `restart of node-1`. */
  what: string;
  nodes: string[];
  domains: string[];
  stops: LeaseStops;
}

export function leaseOf(req: DisruptionRequest, since: string): DisruptionLease {
  return {
    holderKind: req.holder.kind,
    holderId: req.holder.id,
    what: req.what,
    since,
    kind: req.kind,
    nodes: [...req.nodes],
    domains: [...req.domains],
    ...(isStopping(req.kind) ? { stops: req.stops } : {}),
  };
}

const uniq = <T>(xs: Iterable<T>): T[] => [...new Set(xs)];

/** The held leases an admission was decided against, as a comparable key. */
export const basisOf = (held: readonly DisruptionLease[]): string => held.map(leaseKey).sort().join('\n');

/** Everything that would be down at once if the request went too: its daemons and those of
 * every held lease that stops daemons. */
export function stopSetFor(held: readonly DisruptionLease[], req: DisruptionRequest): StopSet {
  const all = [...held.filter((l) => isStopping(kindOf(l))).map(stopsOf), req.stops];
  return {
    osds: uniq(all.flatMap((s) => s.osds)).sort((a, b) => a - b),
    mons: uniq(all.flatMap((s) => s.mons)).sort(),
    mds: uniq(all.flatMap((s) => s.mds)).sort(),
  };
}

export type Admission =
  | { ok: true; set: StopSet }
  | {
      ok: false;
      /** Always DisruptionBudget: the operator's one word for "waits its turn". */
      reason: 'DisruptionBudget';
      /** The leases that hold it (may be empty when Ceph alone says no). */
      heldBy: DisruptionLease[];
      /** Ceph's reason when Ceph said no (OsdNotOkToStop...). */
      ceph?: string;
      message: string;
    };

export type Refusal = Extract<Admission, { ok: false }>;

export const describeLease = (l: DisruptionLease): string => `${l.what} since ${l.since}`;
const heldByText = (ls: DisruptionLease[]): string => (ls.length === 0 ? '' : `; held by ${ls.map(describeLease).join(', ')}`);

/** (a): the domains the request adds to those already disrupted stay within the budget. */
export function domainVerdict(limits: BudgetLimits, held: readonly DisruptionLease[], req: DisruptionRequest): Refusal | null {
  const heldDomains = uniq(held.flatMap(domainsOf));
  const union = uniq([...heldDomains, ...req.domains]);
  if (union.length <= limits.maxUnavailable) return null;
  // The leases that hold it: those on a domain other than the request's.
  const heldBy = held.filter((l) => domainsOf(l).some((d) => !req.domains.includes(d)));
  const n = limits.maxUnavailable;
  return {
    ok: false,
    reason: 'DisruptionBudget',
    heldBy,
    message:
      `at most ${n} failure domain${n === 1 ? '' : 's'} may be disrupted at once; ` +
      `${[...heldDomains].sort().join(', ') || 'none'} ${heldDomains.length === 1 ? 'is' : 'are'} already` +
      heldByText(heldBy),
  };
}

/** (c): drains at once. */
function drainVerdict(limits: BudgetLimits, held: readonly DisruptionLease[]): Refusal | null {
  const drains = held.filter((l) => kindOf(l) === DisruptionLeaseKind.drain);
  if (drains.length < limits.maxDisruptions) return null;
  return {
    ok: false,
    reason: 'DisruptionBudget',
    heldBy: drains,
    message: `at most ${limits.maxDisruptions} OSD drain${limits.maxDisruptions === 1 ? '' : 's'} at once` + heldByText(drains),
  };
}

/** (a) and (c): the budget's own rules, without Ceph; null when they admit. The CAS that takes a
 * lease checks them again on the stored leases. */
export function budgetVerdict(limits: BudgetLimits, held: readonly DisruptionLease[], req: DisruptionRequest): Refusal | null {
  return domainVerdict(limits, held, req) ?? (req.kind === DisruptionLeaseKind.drain ? drainVerdict(limits, held) : null);
}

/**
 * Admits `req` against `held` (the live leases of others: stale ones already left out, the
 * requester's own not among them). `answers` are Ceph's for exactly stopSetFor(held, req); a
 * kind that stops nothing needs none.
 */
export function admit(
  limits: BudgetLimits,
  held: readonly DisruptionLease[],
  req: DisruptionRequest,
  answers: StopAnswers = {},
): Admission {
  const budget = budgetVerdict(limits, held, req);
  if (budget) return budget;
  const set = stopSetFor(held, req);
  if (!isStopping(req.kind)) return { ok: true, set };
  const verdict = stopVerdict(set, answers);
  if (verdict.ok) return { ok: true, set };
  const heldBy = held.filter((l) => isStopping(kindOf(l)) && !stopsNothing(stopsOf(l)));
  return {
    ok: false,
    reason: 'DisruptionBudget',
    heldBy,
    ceph: verdict.reason,
    message: `${verdict.reason}: ${verdict.message}${heldByText(heldBy)}`,
  };
}

/** Whether Ceph must be asked for `req` at all: only when (a) and (c) let it through and it
 * stops daemons. */
export function needsCeph(limits: BudgetLimits, held: readonly DisruptionLease[], req: DisruptionRequest): boolean {
  if (!isStopping(req.kind) || budgetVerdict(limits, held, req)) return false;
  const set = stopSetFor(held, req);
  return set.osds.length + set.mons.length + set.mds.length > 0;
}
