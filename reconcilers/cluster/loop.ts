// The cluster loop: polls Ceph (status, mon dump, and the monmap when its epoch moved) and
// writes what it saw into the Cluster's status. The one thing it changes in Ceph is cluster-wide
// CRUSH: hosts placed under their labels' buckets, Quarry's pools on the failure domain's rule
// (crush-plan.ts, crush-runs.ts).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CephApi } from '../../src/clients/ceph-api.js';
import { CephKind, type ClusterSpec, type ClusterStatus } from '../../src/model/ceph-kinds.js';
import type { Clock } from '../../src/model/clock.js';
import { Kind, type DiskSpec, type DiskStatusFields, type NodeSpec, type NodeStatusFields } from '../../src/model/kinds.js';
import type { AnyDoc, Doc } from '../../src/model/document.js';
import type { Store } from '../../src/store/types.js';
import type { Reconciler } from '../../src/runtime/types.js';
import { applyPlan, writeOwned, type StatusOwner } from '../../src/runtime/loop-kit/index.js';
import { planCluster, type ClusterObserved, type ClusterPlan } from './plan.js';
import { crushRun, observeCrush } from './crush-runs.js';
import type { LoopTasks } from '../shared/ceph-deps.js';

export interface ClusterLoopDeps {
  store: Store;
  ceph: CephApi;
  clock: Clock;
  pollMs: number;
  /** Deadline of each Ceph query: without quorum the CLI waits for its connect timeout. */
  queryTimeoutMs: number;
  /** The CRUSH runs: started, and the last one found. */
  tasks: LoopTasks;
  retryBaseMs: number;
  runTimeoutMs: number;
}

/** The whole status of the Cluster: this loop is its only writer. */
export const CLUSTER_STATUS: StatusOwner = { loop: 'cluster', kind: CephKind.Cluster, fields: 'all' };

export function clusterLoop(deps: ClusterLoopDeps): Reconciler<ClusterObserved, ClusterPlan> {
  return {
    name: 'cluster',
    kind: CephKind.Cluster,
    // It polls, and it alone writes the Cluster's status: its own writes must not wake it.
    wakesOn: 'spec',
    // A monitor declared or started changes what there is to observe, and so does a node with
    // labels (its CRUSH place); other node changes do not.
    watches: [{ kind: Kind.Node, map: (doc) => (monitorNode(doc) || Object.keys(doc.metadata.labels).length > 0 ? ['default'] : []) }],
    observe: (id) => observe(deps, id),
    plan: planCluster,
    apply: (o, plan) =>
      applyPlan(
        {
          write: (obs: ClusterObserved, status: ClusterStatus) =>
            writeOwned(deps.store, CLUSTER_STATUS, obs.cluster.id, status).then(() => undefined),
          act: (obs, step) => crushRun(deps, obs, step),
          start: (req) => deps.tasks.start(req),
          recheckMs: deps.pollMs,
        },
        o,
        plan,
      ),
  };
}

function monitorNode(doc: AnyDoc): boolean {
  const n = doc as Doc<NodeSpec, NodeStatusFields>;
  return n.spec.daemons.mon !== undefined || n.status.daemons?.mon === true;
}

async function observe(deps: ClusterLoopDeps, id: string): Promise<ClusterObserved | undefined> {
  const cluster = await deps.store.get<ClusterSpec, ClusterStatus>(CephKind.Cluster, id);
  if (!cluster) return undefined;
  const nodes = await deps.store.list<NodeSpec>(Kind.Node);
  const monitorsDesired = nodes.filter((n) => n.spec.daemons.mon).length;
  const base = { cluster, monitorsDesired, nowIso: deps.clock.iso(), pollMs: deps.pollMs };
  if (monitorsDesired === 0) return { ...base, ceph: null, monmap: null };
  const call = { timeoutMs: deps.queryTimeoutMs };
  try {
    const [status, monDump] = await Promise.all([deps.ceph.status(call), deps.ceph.monDump(call)]);
    // health detail is only what names the objects of status's checks: none when it has none (a
    // healthy cluster's every poll). Its failure alone leaves status's summary.
    const health = status.healthChecks.length === 0 ? null : await deps.ceph.health(call).catch(() => null);
    const monmap = monDump.epoch !== cluster.status.monmapEpoch || !cluster.status.monmap ? await fetchMonmap(deps.ceph, call) : null;
    return {
      ...base,
      ceph: { status, monDump, health },
      monmap,
      crush: await observeCrush(deps, cluster, nodes, () => osdIdsByNode(deps.store)),
    };
  } catch (err) {
    return { ...base, ceph: { error: err instanceof Error ? err.message : String(err) }, monmap: null };
  }
}

/** Each node's OSD ids, from its disks (what the OSD loop recorded). */
async function osdIdsByNode(store: Store): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>();
  for (const d of await store.list<DiskSpec, DiskStatusFields>(Kind.Disk)) {
    const id = d.status.osdId ?? null;
    if (id === null) continue;
    const ids = out.get(d.spec.nodeId);
    if (ids) ids.push(id);
    else out.set(d.spec.nodeId, [id]);
  }
  return out;
}

/** `ceph mon getmap` writes a file; it lives in a private temporary folder for a moment. */
async function fetchMonmap(ceph: CephApi, call: { timeoutMs: number }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'quarry-monmap-'));
  try {
    const file = join(dir, 'monmap');
    await ceph.monGetmap(file, call);
    return (await readFile(file)).toString('base64');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
