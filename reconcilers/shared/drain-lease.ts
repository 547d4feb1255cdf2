// The drain lease: an OSD's drain is a disruption of kind 'drain' in the one disruption budget
// (disruption-gate.ts, disruption-leases.ts): at most `maxDisruptions` drains at once, and the
// drain's failure domain counts against `maxUnavailable` with every other disruption. A store
// document (DisruptionBudget), so a restart of Quarry finds who holds it; taken and given back by
// compare-and-swap through the loop kit's writer.
import { DisruptionLeaseKind, type DisruptionLease } from '../../src/model/disruption-kinds.js';
import type { Store } from '../../src/store/types.js';
import {
  DEFAULT_MAX_DISRUPTIONS,
  NO_STOPS,
  budgetVerdict,
  holds,
  type BudgetLimits,
  type DisruptionRequest,
  type Holder,
} from './disruption-gate.js';
import { DISRUPTION_STATUS, giveBack, readBudget, takeLease, type Publish } from './disruption-leases.js';

/** The budget's leases are written by the one shared 'disruption' owner (docs/status-ownership.md). */
export const DRAIN_LEASE_STATUS = DISRUPTION_STATUS;

export { DEFAULT_MAX_DISRUPTIONS };

export type LeaseHolder = Holder;

/** What observe read: the drains' limit, the budget's limits and the leases (the defaults when
 * no document exists yet). */
export interface LeaseView {
  max: number;
  limits: BudgetLimits;
  leases: DisruptionLease[];
}

/** Where the drain disrupts: its OSD's node and that node's failure domain. */
export interface DrainPlace {
  nodes: string[];
  domains: string[];
}

export const isHolder = holds;

/** A disk's drain disrupts its node, in that node's failure domain (observe's `domain`). */
export const drainPlace = (o: { disk: { spec: { nodeId: string } }; domain?: string | null }): DrainPlace => ({
  nodes: [o.disk.spec.nodeId],
  domains: o.domain ? [o.domain] : [],
});

/** The lease as a plan sees it: held by me, free for me, or held by others (named). */
export type LeaseState = { kind: 'held' } | { kind: 'free' } | { kind: 'taken'; by: DisruptionLease[] };

const drainRequest = (me: Holder, what: string, place: DrainPlace = { nodes: [], domains: [] }): DisruptionRequest => ({
  holder: me,
  kind: DisruptionLeaseKind.drain,
  what,
  nodes: place.nodes,
  domains: place.domains,
  stops: NO_STOPS,
});

export function leaseState(view: LeaseView, me: LeaseHolder, stale: readonly string[] = [], place?: DrainPlace): LeaseState {
  if (view.leases.some((l) => holds(l, me))) return { kind: 'held' };
  const live = view.leases.filter((l) => !stale.includes(l.holderId));
  const verdict = budgetVerdict(view.limits, live, drainRequest(me, '', place));
  return verdict ? { kind: 'taken', by: verdict.heldBy.length > 0 ? verdict.heldBy : live } : { kind: 'free' };
}

export async function readLease(store: Store): Promise<LeaseView> {
  const b = await readBudget(store);
  return { max: b.limits.maxDisruptions, limits: b.limits, leases: b.leases };
}

/**
 * Takes a drain lease for `me` if the budget admits it (leases of `stale` holders, whose objects
 * are gone or no longer disrupt, do not count and are dropped). CAS on the stored document, so
 * two drains racing for the last lease cannot both get it. Holding it already is success.
 */
export function acquireLease(
  store: Store,
  me: LeaseHolder,
  what: string,
  nowIso: string,
  stale: readonly string[] = [],
  place?: DrainPlace,
  bus?: Publish,
): Promise<boolean> {
  return takeLease(store, drainRequest(me, what, place), nowIso, { stale, ...(bus ? { bus } : {}) });
}

/** Gives `me`'s lease back; not holding one is success. */
export function releaseLease(store: Store, me: LeaseHolder, bus?: Publish): Promise<void> {
  return giveBack(store, me, bus);
}
