// The drain lease: at most `maxDisruptions` (one, today) OSD drains under way at once,
// cluster-wide. A store document (DisruptionBudget), so a restart of Quarry finds who holds it;
// taken and given back by compare-and-swap through the loop kit's writer. Issue #15 makes this
// document the disruption budget every disruptive step takes its turn in.
import { Daemon } from '../../src/catalogue/index.js';
import { ConflictError } from '../../src/errors.js';
import {
  DISRUPTION_BUDGET_ID,
  DisruptionKind,
  type DisruptionBudgetSpec,
  type DisruptionBudgetStatus,
  type DisruptionLease,
} from '../../src/model/disruption-kinds.js';
import type { Store } from '../../src/store/types.js';
import { writeStatus, type StatusOwner } from '../../src/runtime/loop-kit/index.js';

/** The osd loop writes the budget's leases (docs/status-ownership.md). */
export const DRAIN_LEASE_STATUS: StatusOwner = { loop: Daemon.osd, kind: DisruptionKind.DisruptionBudget, fields: ['leases'] };

/** One disruption at a time until #15 gives the budget its own settings. */
export const DEFAULT_MAX_DISRUPTIONS = 1;

export interface LeaseHolder {
  kind: string;
  id: string;
}

/** What observe read: the leases and the limit (the defaults when no document exists yet). */
export interface LeaseView {
  max: number;
  leases: DisruptionLease[];
}

export const isHolder = (l: DisruptionLease, h: LeaseHolder): boolean => l.holderKind === h.kind && l.holderId === h.id;

/** The lease as a plan sees it: held by me, free for me, or held by others (named). */
export type LeaseState = { kind: 'held' } | { kind: 'free' } | { kind: 'taken'; by: DisruptionLease[] };

export function leaseState(view: LeaseView, me: LeaseHolder, stale: readonly string[] = []): LeaseState {
  if (view.leases.some((l) => isHolder(l, me))) return { kind: 'held' };
  const live = view.leases.filter((l) => !stale.includes(l.holderId));
  return live.length < view.max ? { kind: 'free' } : { kind: 'taken', by: live };
}

export async function readLease(store: Store): Promise<LeaseView> {
  const doc = await store.get<DisruptionBudgetSpec, DisruptionBudgetStatus>(DisruptionKind.DisruptionBudget, DISRUPTION_BUDGET_ID);
  return { max: doc?.spec.maxDisruptions ?? DEFAULT_MAX_DISRUPTIONS, leases: doc?.status.leases ?? [] };
}

/**
 * Takes a lease for `me` if one is free (leases of `stale` holders, whose objects are gone or no
 * longer drain, do not count and are dropped). CAS on the stored document, so two drains racing
 * for the last lease cannot both get it. Holding it already is success.
 */
export async function acquireLease(
  store: Store,
  me: LeaseHolder,
  what: string,
  nowIso: string,
  stale: readonly string[] = [],
): Promise<boolean> {
  const mine: DisruptionLease = { holderKind: me.kind, holderId: me.id, what, since: nowIso };
  for (let i = 0; i < 4; i++) {
    const doc = await store.get<DisruptionBudgetSpec, DisruptionBudgetStatus>(DisruptionKind.DisruptionBudget, DISRUPTION_BUDGET_ID);
    if (!doc) {
      try {
        await store.create<DisruptionBudgetSpec>({
          kind: DisruptionKind.DisruptionBudget,
          id: DISRUPTION_BUDGET_ID,
          name: 'disruption-budget',
          spec: { maxDisruptions: DEFAULT_MAX_DISRUPTIONS },
          status: { leases: [mine] },
        });
        return true;
      } catch (err) {
        if (!(err instanceof ConflictError)) throw err;
        continue; // created meanwhile: take it the ordinary way
      }
    }
    let granted = false;
    await writeStatus<DisruptionBudgetStatus>(store, DRAIN_LEASE_STATUS, DISRUPTION_BUDGET_ID, (cur) => {
      const leases = cur.leases ?? [];
      granted = leases.some((l) => isHolder(l, me));
      if (granted) return cur;
      const live = leases.filter((l) => !stale.includes(l.holderId));
      if (live.length >= doc.spec.maxDisruptions) return live.length === leases.length ? cur : { ...cur, leases: live };
      granted = true;
      return { ...cur, leases: [...live, mine] };
    });
    return granted;
  }
  throw new ConflictError('the disruption budget kept changing while a lease was taken');
}

/** Gives `me`'s lease back; not holding one is success. */
export async function releaseLease(store: Store, me: LeaseHolder): Promise<void> {
  await writeStatus<DisruptionBudgetStatus>(store, DRAIN_LEASE_STATUS, DISRUPTION_BUDGET_ID, (cur) => {
    const leases = cur.leases ?? [];
    return leases.some((l) => isHolder(l, me)) ? { ...cur, leases: leases.filter((l) => !isHolder(l, me)) } : cur;
  });
}
