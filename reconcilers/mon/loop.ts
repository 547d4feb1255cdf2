// The monitor loop's effectful half: gathers the monitor nodes, the cluster, the keys and the
// run history; creates the bootstrap keys itself (random bytes, no Ceph needed yet); hands
// bootstrap, join and restart to the node's agent as node-level runs.
import { randomBytes } from 'node:crypto';
import { CLUSTER_ID, CephKind, type ClusterSpec, type ClusterStatus } from '../../src/model/ceph-kinds.js';
import { newCephxKey } from '../../src/model/keyring.js';
import { Kind, type DiskSpec, type DiskStatusFields, type NodeSpec, type NodeStatusFields } from '../../src/model/kinds.js';
import type { TaskRun } from '../../src/tasks/types.js';
import { blocked, done, requeueAfter, type Reconciler, type Result } from '../../src/runtime/types.js';
import { hasQuorum, type CephLoopDeps } from '../daemon/loop.js';
import { writeDaemonState } from '../shared/daemon-state.js';
import { hasKey, saveKey } from '../shared/keys.js';
import { runInfo } from '../shared/runs.js';
import { MonTask, planMon, type MonObserved, type MonPlan } from './plan.js';

export const BOOTSTRAP_KEYS = [
  { entity: 'mon.', caps: { mon: 'allow *' } },
  { entity: 'client.admin', caps: { mon: 'allow *', osd: 'allow *', mds: 'allow *', mgr: 'allow *' } },
] as const;

const newer = (a: TaskRun | undefined, b: TaskRun | undefined): TaskRun | undefined =>
  !a ? b : !b ? a : a.metadata.createdAt >= b.metadata.createdAt ? a : b;

export function monLoop(deps: CephLoopDeps): Reconciler<MonObserved, MonPlan> {
  return {
    name: 'mon',
    kind: Kind.Node,
    dependsOn: ['node', 'cluster'],
    observe: (id) => observe(deps, id),
    plan: planMon,
    apply: (o, p) => apply(deps, o, p),
  };
}

async function observe(deps: CephLoopDeps, id: string): Promise<MonObserved | undefined> {
  const node = await deps.store.get<NodeSpec, NodeStatusFields>(Kind.Node, id);
  const cluster = await deps.store.get<ClusterSpec, ClusterStatus>(CephKind.Cluster, CLUSTER_ID);
  if (!node || !cluster) return undefined;
  // Most nodes have no monitor: they need nothing below, least of all a list of every node.
  if (!node.spec.daemons.mon && !node.status.daemons?.mon) {
    return { ...quiet(deps), node, cluster, monNodes: [], bootstrapOwner: null, monDisk: undefined, quorum: false, bootstrapKeys: false, createRun: null, restartRun: null };
  }
  const nodes = await deps.store.list<NodeSpec, NodeStatusFields>(Kind.Node);
  const diskId = node.spec.daemons.mon?.diskId;
  const [bootstrap, join, restart] = await Promise.all([
    deps.tasks.latestFor(Kind.Node, id, MonTask.bootstrap),
    deps.tasks.latestFor(Kind.Node, id, MonTask.join),
    deps.tasks.latestFor(Kind.Node, id, MonTask.restart),
  ]);
  const monNodes = nodes.filter((n) => n.spec.daemons.mon !== undefined);
  return {
    node,
    cluster,
    monNodes,
    bootstrapOwner: await bootstrapOwner(deps, monNodes),
    monDisk: diskId ? await deps.store.get<DiskSpec, DiskStatusFields>(Kind.Disk, diskId) : undefined,
    quorum: hasQuorum(cluster),
    bootstrapKeys: (await Promise.all(BOOTSTRAP_KEYS.map((k) => hasKey(deps.store, k.entity)))).every(Boolean),
    createRun: runInfo(newer(bootstrap, join)),
    restartRun: runInfo(restart?.spec.args.daemon === 'mon' ? restart : undefined),
    now: deps.clock.now(),
    retryBaseMs: deps.retryBaseMs,
    startGraceMs: deps.startGraceMs,
  };
}

const quiet = (deps: CephLoopDeps) => ({ now: deps.clock.now(), retryBaseMs: deps.retryBaseMs, startGraceMs: deps.startGraceMs });

/** The first node to have started a bootstrap that has not failed. */
async function bootstrapOwner(deps: CephLoopDeps, monNodes: MonObserved['monNodes']): Promise<MonObserved['bootstrapOwner']> {
  let owner: { node: MonObserved['monNodes'][number]; at: string } | null = null;
  for (const n of monNodes) {
    const run = await deps.tasks.latestFor(Kind.Node, n.id, MonTask.bootstrap);
    if (!run || run.status.state === 'failed' || run.status.state === 'canceled') continue;
    if (!owner || run.metadata.createdAt < owner.at) owner = { node: n, at: run.metadata.createdAt };
  }
  return owner?.node ?? null;
}

async function apply(deps: CephLoopDeps, o: MonObserved, p: MonPlan): Promise<Result> {
  await writeDaemonState(deps.store, o.node.id, 'mon', p.state);
  if (p.step?.kind === 'bootstrap-keys') {
    for (const k of BOOTSTRAP_KEYS) {
      if (await hasKey(deps.store, k.entity)) continue;
      await saveKey(deps.store, { entity: k.entity, nodeId: null, caps: { ...k.caps } }, newCephxKey(deps.clock.now(), randomBytes));
    }
    return requeueAfter(0);
  }
  if (p.step) {
    const taskName = MonTask[p.step.kind];
    await deps.tasks.start({
      taskName,
      target: { kind: Kind.Node, id: o.node.id, generation: o.node.metadata.generation },
      node: { id: o.node.id, hostname: o.node.spec.hostname },
      attempt: p.step.attempt,
      timeoutMs: deps.runTimeoutMs,
      args: p.step.args,
    });
  }
  if (p.blocked) return blocked(p.state?.reason ?? 'Blocked', p.state?.message ?? '', deps.blockedRecheckMs);
  return p.requeueAfterMs !== null ? requeueAfter(p.requeueAfterMs) : done();
}
