// The disruption budget's leases in the store: one document (DisruptionBudget/default), so a
// restart of Quarry finds who holds what. Every loop that disrupts (the node loop's restarts and
// shutdowns, the osd loop's drains) takes and gives back leases through these functions, by
// compare-and-swap through the loop kit's writer under one shared owner ('disruption'). Leases
// whose holders' requests are gone are stale: they do not count, and the next write drops them.
import { ConflictError } from '../../src/errors.js';
import {
  DISRUPTION_BUDGET_ID,
  DisruptionKind,
  DisruptionLeaseKind,
  type DisruptionBudgetSpec,
  type DisruptionBudgetStatus,
  type DisruptionLease,
} from '../../src/model/disruption-kinds.js';
import { Kind, type DiskStatusFields, type NodeSpec, type NodeStatusFields, type OsdPhase } from '../../src/model/kinds.js';
import { namesOf } from '../../src/model/object-names.js';
import type { Store } from '../../src/store/types.js';
import type { EventBus } from '../../src/tasks/bus.js';
import { writeStatus, type StatusOwner } from '../../src/runtime/loop-kit/index.js';
import {
  DEFAULT_MAX_DISRUPTIONS,
  DEFAULT_MAX_UNAVAILABLE,
  DRAIN_LEASE_PHASES,
  basisOf,
  budgetVerdict,
  domainsOf,
  holds,
  kindOf,
  leaseOf,
  limitsOf,
  nodesOf,
  type BudgetLimits,
  type DisruptionRequest,
  type Holder,
} from './disruption-gate.js';

/** The budget's leases have one writer, shared by every loop that disrupts
 * (docs/status-ownership.md). */
export const DISRUPTION_STATUS: StatusOwner = { loop: 'disruption', kind: DisruptionKind.DisruptionBudget, fields: ['leases'] };

export type Publish = Pick<EventBus, 'publish'>;

export interface BudgetView {
  limits: BudgetLimits;
  leases: DisruptionLease[];
}

export async function readBudget(store: Store): Promise<BudgetView> {
  const doc = await store.get<DisruptionBudgetSpec, DisruptionBudgetStatus>(DisruptionKind.DisruptionBudget, DISRUPTION_BUDGET_ID);
  return { limits: limitsOf(doc?.spec), leases: doc?.status.leases ?? [] };
}

/** The event names the holder (a node's hostname, a disk's device path and serial, YAML names)
 * and each node's hostname beside the ids: a lease's few documents, read once per event. */
async function announce(
  store: Store,
  bus: Publish | undefined,
  type: 'disruption.lease.taken' | 'disruption.lease.released',
  l: DisruptionLease,
): Promise<void> {
  if (!bus) return;
  const nodes = nodesOf(l);
  const [holder, hosts] = await Promise.all([
    store.get(l.holderKind, l.holderId),
    Promise.all(nodes.map((id) => store.get<NodeSpec>(Kind.Node, id))),
  ]);
  bus.publish(type, {
    holderKind: l.holderKind,
    holderId: l.holderId,
    ...(holder ? { holder: namesOf(holder) } : {}),
    kind: kindOf(l),
    what: l.what,
    nodes,
    hostnames: hosts.map((n, i) => n?.spec.hostname ?? nodes[i]!),
    domains: domainsOf(l),
  });
}

export interface TakeOptions {
  /** Holder ids whose leases are stale: left out, and dropped by this write. */
  stale?: readonly string[];
  /** The held leases (basisOf) Ceph was asked against: taken only if they are still the ones
   * held. Absent: the request did not need Ceph. */
  basis?: string;
  bus?: Publish;
}

/**
 * Takes a lease for `req` if the budget admits it against the live leases (CAS on the stored
 * document, so two requests racing for the last place cannot both get it). Holding one already
 * is success. Ceph's part of the admission was decided by the caller against `basis`.
 */
export async function takeLease(store: Store, req: DisruptionRequest, nowIso: string, opts: TakeOptions = {}): Promise<boolean> {
  const mine = leaseOf(req, nowIso);
  const stale = opts.stale ?? [];
  for (let i = 0; i < 4; i++) {
    const doc = await store.get<DisruptionBudgetSpec, DisruptionBudgetStatus>(DisruptionKind.DisruptionBudget, DISRUPTION_BUDGET_ID);
    if (!doc) {
      if (opts.basis !== undefined && opts.basis !== '') return false;
      try {
        await store.create<DisruptionBudgetSpec>({
          kind: DisruptionKind.DisruptionBudget,
          id: DISRUPTION_BUDGET_ID,
          name: 'disruption-budget',
          spec: { maxDisruptions: DEFAULT_MAX_DISRUPTIONS, maxUnavailable: DEFAULT_MAX_UNAVAILABLE },
          status: { leases: [mine] },
        });
        await announce(store, opts.bus, 'disruption.lease.taken', mine);
        return true;
      } catch (err) {
        if (!(err instanceof ConflictError)) throw err;
        continue; // created meanwhile: take it the ordinary way
      }
    }
    // Set by the change function, which may run more than once (a conflict): the last run counts.
    const out = { granted: false, held: false, dropped: [] as DisruptionLease[] };
    await writeStatus<DisruptionBudgetStatus>(store, DISRUPTION_STATUS, DISRUPTION_BUDGET_ID, (cur) => {
      const leases = cur.leases ?? [];
      out.held = out.granted = leases.some((l) => holds(l, req.holder));
      out.dropped = [];
      if (out.granted) return cur;
      const live = leases.filter((l) => !stale.includes(l.holderId));
      out.dropped = leases.filter((l) => stale.includes(l.holderId));
      const keep = live.length === leases.length ? cur : { ...cur, leases: live };
      if (opts.basis !== undefined && basisOf(live) !== opts.basis) return keep;
      if (budgetVerdict(limitsOf(doc.spec), live, req)) return keep;
      out.granted = true;
      return { ...cur, leases: [...live, mine] };
    });
    for (const l of out.dropped) await announce(store, opts.bus, 'disruption.lease.released', l);
    if (out.granted && !out.held) await announce(store, opts.bus, 'disruption.lease.taken', mine);
    return out.granted;
  }
  throw new ConflictError('the disruption budget kept changing while a lease was taken');
}

/** Gives `holder`'s lease back; not holding one is success. */
export async function giveBack(store: Store, holder: Holder, bus?: Publish): Promise<void> {
  let gone: DisruptionLease | undefined;
  await writeStatus<DisruptionBudgetStatus>(store, DISRUPTION_STATUS, DISRUPTION_BUDGET_ID, (cur) => {
    const leases = cur.leases ?? [];
    gone = leases.find((l) => holds(l, holder));
    return gone ? { ...cur, leases: leases.filter((l) => !holds(l, holder)) } : cur;
  });
  if (gone) await announce(store, bus, 'disruption.lease.released', gone);
}

/** A node's request of a lease's kind is still asked for (its counter not acknowledged). */
function nodeAsks(n: { spec: NodeSpec; status: NodeStatusFields }, kind: DisruptionLeaseKind): boolean {
  if (kind === DisruptionLeaseKind.restart) return n.spec.restartGeneration > (n.status.observedRestartGeneration ?? 0);
  if (kind === DisruptionLeaseKind.shutdown) return n.spec.shutdownGeneration > (n.status.observedShutdownGeneration ?? 0);
  return true;
}

/**
 * Holders of `leases` (other than `me`) whose leases nobody will give back: a node deleted, or
 * whose request was acknowledged and that no longer says it holds a lease; a disk gone or no
 * longer in one of `drainPhases`. Holders of kinds this does not know are kept.
 */
export async function staleHolders(
  store: Store,
  leases: readonly DisruptionLease[],
  me: Holder | null,
  drainPhases: readonly OsdPhase[] = DRAIN_LEASE_PHASES,
): Promise<string[]> {
  const stale: string[] = [];
  for (const l of leases) {
    if (me && holds(l, me)) continue;
    if (l.holderKind === Kind.Disk) {
      const d = await store.get<unknown, DiskStatusFields>(Kind.Disk, l.holderId);
      const phase = d?.status.osd?.phase;
      if (!d || !phase || !drainPhases.includes(phase)) stale.push(l.holderId);
    } else if (l.holderKind === Kind.Node) {
      const n = await store.get<NodeSpec, NodeStatusFields>(Kind.Node, l.holderId);
      if (!n || (!nodeAsks(n, kindOf(l)) && n.status.disruption?.state !== 'held')) stale.push(l.holderId);
    }
  }
  return stale;
}
