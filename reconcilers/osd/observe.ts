// What the disk loop reads beyond the disk, its node and its own OSD runs, each only when the
// plan needs it: at 1,000 nodes × 4 disks a running OSD must cost no Ceph call and no look at
// other disks. A removal reads its runs and the drain lease; Ceph (`osd df`, `safe-to-destroy`)
// only while it drains, at most once per recheck; `osd dump` only while its stop waits for a
// node that is not active. A disk that still needs its OSD id reads its node's other disks (a
// replacement claims a destroyed id); the old disk of a replacement reads the new one.
import { Kind, type DiskSpec, type DiskStatusFields } from '../../src/model/kinds.js';
import type { DiskDoc } from '../../src/model/operations.js';
import type { CephLoopDeps } from '../shared/ceph-deps.js';
import { drainPlace, leaseState, readLease } from '../shared/drain-lease.js';
import { staleHolders } from '../shared/disruption-leases.js';
import { runInfo } from '../shared/runs.js';
import { LEASE_PHASES, LIFECYCLE_PHASES, drainRecheckMs, lifecycleFacts, removalIntent } from './remove.js';
import { OsdTask, osdIdOf, type LifecycleObserved, type OsdObserved } from './plan.js';

export interface OsdLoopDeps extends CephLoopDeps {
  /** A disk gone from its active node this long is dead (DISK_GONE_GRACE_MS). */
  diskGoneGraceMs: number;
  /** Deadline of each Ceph query made while observing. */
  queryTimeoutMs?: number;
}

type Observed = OsdObserved & { nowIso: string };

/** A removal asked, under way or being withdrawn; or an OSD disk gone (perhaps dead). */
export function mayBeInLifecycle(o: Pick<OsdObserved, 'disk'>): boolean {
  const { disk } = o;
  const phase = disk.status.osd?.phase;
  if (phase && LIFECYCLE_PHASES.includes(phase)) return true;
  const hasOsd = (disk.status.osdId ?? null) !== null || disk.status.osdUuid !== undefined;
  if (!hasOsd) return false;
  return (!disk.spec.osd && disk.spec.osdRemoval !== undefined) || (disk.spec.osd && disk.status.present === false);
}

const errorOf = (err: unknown): { error: string } => ({ error: err instanceof Error ? err.message : String(err) });

export async function observeLifecycle(deps: OsdLoopDeps, o: Observed): Promise<LifecycleObserved | null> {
  const id = osdIdOf(o);
  if (id === null || !mayBeInLifecycle(o) || o.disk.status.osd?.phase === 'destroyed') return null;
  const latest = (task: string) => deps.tasks.latestFor(Kind.Disk, o.disk.id, task).then(runInfo);
  const [outRun, inRun, stopRun, purgeRun, destroyRun, zapRun] = await Promise.all([
    latest(OsdTask.out),
    latest(OsdTask.in),
    latest(OsdTask.stop),
    latest(OsdTask.purge),
    latest(OsdTask.destroy),
    latest(OsdTask.zap),
  ]);
  const l: LifecycleObserved = {
    outRun,
    inRun,
    stopRun,
    purgeRun,
    destroyRun,
    zapRun,
    lease: null,
    staleHolders: [],
    df: null,
    safe: null,
    down: null,
  };
  const facts = lifecycleFacts({ ...o, lifecycle: l }, id);
  const intent = removalIntent({ ...o, lifecycle: l }, facts);
  const phase = o.disk.status.osd?.phase;
  const me = { kind: Kind.Disk, id: o.disk.id };
  // The lease: whenever it may be held (to give it back) or is wanted.
  if (intent !== null || (phase !== undefined && LEASE_PHASES.includes(phase))) {
    const view = await readLease(deps.store);
    l.staleHolders = await staleHolders(deps.store, view.leases, me, LEASE_PHASES);
    l.lease = leaseState(view, me, l.staleHolders, drainPlace(o));
  }
  if (intent === null || facts.committed !== null) return l;
  const call = { timeoutMs: deps.queryTimeoutMs ?? deps.blockedRecheckMs };
  if (!facts.outDone) {
    // Once, before the out: what is on the OSD when its drain begins (an out OSD reports no bytes).
    const starting = (intent === 'dead' || l.lease?.kind !== 'taken') && o.disk.status.drain?.osdId !== id;
    if (starting) l.df = await deps.ceph.osdDfOf(id, call).catch(errorOf);
    return l;
  }
  const passed = facts.stopped || facts.stop !== null || phase === 'stopping';
  if (!passed && dueToAsk(o, facts.out?.completedAt ?? null, deps.blockedRecheckMs)) {
    const [df, safe] = await Promise.all([deps.ceph.osdDfOf(id, call).catch(errorOf), deps.ceph.safeToDestroy([id], call).catch(errorOf)]);
    l.df = df;
    l.safe = safe;
  }
  const active = o.node?.status.phase === 'active';
  if (passed && !active && !facts.stopped && intent !== 'dead') {
    l.down = await deps.ceph.osdDump(call).then(
      (d) => d.osds.some((x) => x.id === id && !x.up),
      () => null,
    );
  }
  return l;
}

/** Ceph is asked about a drain once per recheck (the drain's own, drainRecheckMs, as the plan
 * made it when it was last asked): each answer is written (status.drain), and a write wakes the
 * loop, which must not ask again at once. */
function dueToAsk(o: Observed, outDoneAt: number | null, recheckMs: number): boolean {
  const at = o.disk.status.drain ? Date.parse(o.disk.status.drain.observedAt) : NaN;
  const blocked = o.disk.status.conditions?.find((c) => c.type === 'Blocked' && c.status === 'True' && c.reason === 'OsdNotSafeToDestroy');
  if (!blocked || !Number.isFinite(at)) return true;
  return o.now - at >= drainRecheckMs(outDoneAt, at, recheckMs);
}

/** The node's other disks, for a disk that is to hold an OSD and has no id yet. */
export async function observePeers(deps: OsdLoopDeps, o: Observed): Promise<DiskDoc[] | null> {
  const { disk, node } = o;
  if (!disk.spec.osd || (disk.status.osdId ?? null) !== null || disk.status.replacedBy || !node) return null;
  const ids = (node.status.diskIds ?? []).filter((id) => id !== disk.id);
  const docs = await Promise.all(ids.map((id) => deps.store.get<DiskSpec, DiskStatusFields>(Kind.Disk, id)));
  return docs.filter((d): d is DiskDoc => d !== undefined);
}

/** The disk that claimed this one's destroyed OSD, until it shows `replaced`. */
export async function observeReplacer(deps: OsdLoopDeps, o: Observed): Promise<DiskDoc | null> {
  const by = o.disk.status.replacedBy;
  if (!by || o.disk.status.osd?.phase === 'replaced') return null;
  return (await deps.store.get<DiskSpec, DiskStatusFields>(Kind.Disk, by)) ?? null;
}
