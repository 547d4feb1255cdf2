// What the node loop reads of the disruption budget, and the one Ceph question per kind it asks
// for a node whose restart or shutdown waits: only while such a request waits, at most once per
// recheck (a released lease makes it due at once), about the whole set that would be down together.
import { CLUSTER_ID, CephKind, type ClusterSpec } from '../../src/model/ceph-kinds.js';
import type { DisruptionBudgetStatus } from '../../src/model/disruption-kinds.js';
import type { AnyDoc } from '../../src/model/document.js';
import { Kind } from '../../src/model/kinds.js';
import type { Store } from '../../src/store/types.js';
import type { CephApi } from '../../src/clients/ceph-api.js';
import { holds, leaseKey, needsCeph, stopSetFor } from '../shared/disruption-gate.js';
import { readBudget, staleHolders } from '../shared/disruption-leases.js';
import { failureDomainOf } from '../shared/failure-domain.js';
import type { StopAnswers, StopSet } from '../shared/stop-gate.js';
import type { NodeDisruptionObserved } from './disruption.js';
import { pendingRequest, type NodeObserved } from './plan.js';

/** The node loop's memory between passes (one per loop, never module-level). */
export interface DisruptionMemory {
  /** Nodes whose last plan waited for the budget. */
  waiting: Set<string>;
  /** When each node last asked Ceph. */
  askedAt: Map<string, number>;
  /** The leases last seen on the budget document (null: not seen yet). */
  leaseKeys: Set<string> | null;
}

export interface DisruptionObserveDeps {
  store: Store;
  ceph: Pick<CephApi, 'osdOkToStop' | 'monOkToStop' | 'mdsOkToStop'>;
  cephQueryTimeoutMs: number;
  disruptionRecheckMs?: number;
  heartbeatTimeoutMs: number;
}

/** A change of the budget document wakes the waiting nodes when a lease went away. */
export function waitingWatch(memory: DisruptionMemory, doc: AnyDoc): string[] {
  const keys = new Set(((doc.status as DisruptionBudgetStatus | undefined)?.leases ?? []).map(leaseKey));
  const before = memory.leaseKeys;
  memory.leaseKeys = keys;
  if (before && ![...before].some((k) => !keys.has(k))) return [];
  for (const id of memory.waiting) memory.askedAt.delete(id);
  return [...memory.waiting];
}

const errorOf = (err: unknown): { error: string } => ({ error: err instanceof Error ? err.message : String(err) });

/** One question per kind, about the whole set, together. */
async function askCeph(deps: DisruptionObserveDeps, set: StopSet): Promise<StopAnswers> {
  const call = { timeoutMs: deps.cephQueryTimeoutMs };
  const [osd, mon, mds] = await Promise.all([
    set.osds.length > 0 ? deps.ceph.osdOkToStop(set.osds, call).catch(errorOf) : undefined,
    set.mons.length > 0 ? deps.ceph.monOkToStop(set.mons, call).catch(errorOf) : undefined,
    set.mds.length > 0 ? deps.ceph.mdsOkToStop(set.mds, call).catch(errorOf) : undefined,
  ]);
  return { ...(osd ? { osd } : {}), ...(mon ? { mon } : {}), ...(mds ? { mds } : {}) };
}

/** Fills o.domain and o.disruption (when the node holds a lease, wants one, or said it did). */
export async function observeDisruption(deps: DisruptionObserveDeps, memory: DisruptionMemory, o: NodeObserved): Promise<void> {
  const cluster = await deps.store.get<ClusterSpec>(CephKind.Cluster, CLUSTER_ID);
  o.domain = failureDomainOf(o.node, cluster?.spec);
  o.disruptionRecheckMs = deps.disruptionRecheckMs ?? deps.heartbeatTimeoutMs;
  const budget = await readBudget(deps.store);
  const me = { kind: Kind.Node, id: o.node.id };
  const mine = budget.leases.find((l) => holds(l, me)) ?? null;
  // A restart's, a shutdown's or a maintenance's request (maintenance.ts).
  const req = pendingRequest(o);
  if (!mine && !req && !o.node.status.disruption) return;
  const stale = await staleHolders(deps.store, budget.leases, me);
  const held = budget.leases.filter((l) => !holds(l, me) && !stale.includes(l.holderId));
  const d: NodeDisruptionObserved = { limits: budget.limits, mine, held, stale };
  o.disruption = d;
  if (mine || !req) return;
  if (!needsCeph(budget.limits, held, req)) return;
  const recheck = o.disruptionRecheckMs;
  const last = memory.askedAt.get(o.node.id);
  if (last !== undefined && o.now - last < recheck) {
    d.notDue = { retryInMs: last + recheck - o.now };
    return;
  }
  memory.askedAt.set(o.node.id, o.now);
  d.answers = await askCeph(deps, stopSetFor(held, req));
}
