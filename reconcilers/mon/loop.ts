// The monitor loop's effectful half: gathers the monitor nodes, the cluster, the keys and the
// run history; creates the bootstrap keys itself (random bytes, no Ceph needed yet); hands
// bootstrap, join and restart to the node's agent as node-level runs.
import { randomBytes } from 'node:crypto';
import { Daemon } from '../../src/catalogue/index.js';
import { CLUSTER_ID, CephKind, type ClusterSpec, type ClusterStatus } from '../../src/model/ceph-kinds.js';
import { newCephxKey } from '../../src/model/keyring.js';
import {
  Kind,
  type DaemonState,
  type DiskSpec,
  type DiskStatusFields,
  type NodeSpec,
  type NodeStatusFields,
} from '../../src/model/kinds.js';
import type { StartRequest, TaskRun } from '../../src/tasks/types.js';
import { requeueAfter, type Reconciler, type Result } from '../../src/runtime/types.js';
import { applyPlan, gateOf, writeOwned, type LoopEffects } from '../../src/runtime/loop-kit/index.js';
import { TASK_RUN_KIND } from '../../src/runtime/routing.js';
import type { AnyDoc } from '../../src/model/document.js';
import { hasQuorum, type CephLoopDeps } from '../shared/ceph-deps.js';
import { daemonStateOwner, state } from '../shared/daemon-state.js';
import { hasKey, isImported, saveKey } from '../shared/keys.js';
import { importAdminKeyScript } from './admin-key.js';
import { runInfo } from '../shared/runs.js';
import { initialMembers, MonTask, planMon, type BootstrapView, type MonObserved, type MonPlan, type MonStep } from './plan.js';
import { REMOVING_FROM_MONMAP, type MonmapView, type RemovalObserved } from './removal.js';
import type { NodeDoc } from '../../src/model/operations.js';
import { runTarget } from '../../src/model/object-names.js';

export const BOOTSTRAP_KEYS = [
  { entity: 'mon.', caps: { mon: 'allow *' } },
  { entity: 'client.admin', caps: { mon: 'allow *', osd: 'allow *', mds: 'allow *', mgr: 'allow *' } },
] as const;

const newer = (a: TaskRun | undefined, b: TaskRun | undefined): TaskRun | undefined =>
  !a ? b : !b ? a : a.metadata.createdAt >= b.metadata.createdAt ? a : b;

export type MonLoopDeps = CephLoopDeps & {
  /** Deadline of the quorum question asked before a removal; default 20 s. */
  queryTimeoutMs?: number;
  /** How long after the bootstrap keys exist the other monitors declared with the first are
   * awaited, to create the cluster with all of them (plan.ts says why). */
  monGatherMs: number;
};

export function monLoop(deps: MonLoopDeps): Reconciler<MonObserved, MonPlan> {
  // The node whose monitor is being taken out of the monmap, as this process knows it. The
  // store says the same (REMOVING_FROM_MONMAP) once the state is written; this closes the gap
  // between two reconciles of different nodes that both observed "nobody is removing".
  const slot = { holder: null as string | null };
  // When the first monitors stop being gathered. Kept in memory: after a restart the gathering
  // starts again, which only delays a cluster that no bootstrap run has started yet.
  const gather = { endsAt: null as number | null };
  return {
    name: Daemon.mon,
    kind: Kind.Node,
    dependsOn: ['node', 'cluster'],
    // The first monitors other than the opener start once its monitor runs: its run's end
    // wakes them, rather than their next blocked recheck.
    watches: [{ kind: TASK_RUN_KIND, map: followersOf }],
    observe: async (id) => {
      const o = await observe(deps, id);
      if (!o && slot.holder === id) slot.holder = null;
      if (o?.bootstrapKeys) {
        gather.endsAt ??= o.now + deps.monGatherMs;
        o.gatherEndsAt = gather.endsAt;
      }
      return o;
    },
    plan: planMon,
    apply: (o, p) => apply(deps, o, p, slot),
  };
}

function followersOf(doc: AnyDoc): string[] {
  const run = doc as TaskRun;
  if (run.spec.taskName !== MonTask.bootstrap || run.status.state !== 'completed') return [];
  return (initialMembers(run.spec.args) ?? []).map((m) => m.nodeId).filter((id) => id !== run.spec.targetId);
}

async function observe(deps: MonLoopDeps, id: string): Promise<MonObserved | undefined> {
  const node = await deps.store.get<NodeSpec, NodeStatusFields>(Kind.Node, id);
  const cluster = await deps.store.get<ClusterSpec, ClusterStatus>(CephKind.Cluster, CLUSTER_ID);
  if (!node || !cluster) return undefined;
  // Most nodes have no monitor: they need nothing below, least of all a list of every node.
  if (!node.spec.daemons.mon && !node.status.daemons?.mon && !node.status.ceph?.mon) {
    return {
      ...quiet(deps),
      node,
      cluster,
      monNodes: [],
      bootstrap: null,
      monDisk: undefined,
      quorum: false,
      bootstrapKeys: false,
      adminKeyImported: false,
      importRun: null,
      gatherEndsAt: null,
      createRun: null,
      restartRun: null,
      removal: NO_REMOVAL,
    };
  }
  const nodes = await deps.store.list<NodeSpec, NodeStatusFields>(Kind.Node);
  const diskId = node.spec.daemons.mon?.diskId;
  const [join, restart, imported] = await Promise.all([
    deps.tasks.latestFor(Kind.Node, id, MonTask.join),
    deps.tasks.latestFor(Kind.Node, id, MonTask.restart),
    deps.tasks.latestFor(Kind.Node, id, MonTask['import-admin-key']),
  ]);
  const monNodes = nodes.filter((n) => n.spec.daemons.mon !== undefined);
  const bootstraps = await bootstrapRuns(
    deps,
    nodes.filter((n) => n.id === id || n.spec.daemons.mon || n.status.ceph?.mon),
  );
  const bootstrap = bootstraps.find((b) => b.node.id === id)?.run;
  // A monitor desired asks Ceph nothing, but its removal runs say whether it was declared again
  // after a removal (plan.ts creates it afresh then).
  const removal = node.spec.daemons.mon ? await removalRuns(deps, node) : await observeRemoval(deps, node, nodes, bootstraps);
  return {
    removal,
    node,
    cluster,
    monNodes,
    bootstrap: bootstrapView(bootstraps.filter((b) => b.node.spec.daemons.mon !== undefined)),
    monDisk: diskId ? await deps.store.get<DiskSpec, DiskStatusFields>(Kind.Disk, diskId) : undefined,
    quorum: hasQuorum(cluster),
    bootstrapKeys: (await Promise.all(BOOTSTRAP_KEYS.map((k) => hasKey(deps.store, k.entity)))).every(Boolean),
    adminKeyImported: await isImported(deps.store, 'client.admin'),
    importRun: runInfo(imported),
    openedCluster: openedBy(bootstraps)?.node.id === id && bootstrap?.status.state === 'completed',
    gatherEndsAt: null,
    createRun: runInfo(newer(bootstrap, join)),
    createdBy: join && newer(bootstrap, join) === join ? 'join' : 'bootstrap',
    restartRun: runInfo(restart?.spec.args.daemon === Daemon.mon ? restart : undefined),
    now: deps.clock.now(),
    retryBaseMs: deps.retryBaseMs,
    startGraceMs: deps.startGraceMs,
  };
}

const NO_REMOVAL: RemovalObserved = { monmap: null, othersRemoving: [], monmapRun: null, nodeRun: null };

async function removalRuns(deps: MonLoopDeps, node: NodeDoc): Promise<RemovalObserved> {
  const [monmapRun, nodeRun] = await Promise.all([
    deps.tasks.latestFor(Kind.Node, node.id, MonTask['monmap-remove']),
    deps.tasks.latestFor(Kind.Node, node.id, MonTask.remove),
  ]);
  return { ...NO_REMOVAL, monmapRun: runInfo(monmapRun), nodeRun: runInfo(nodeRun) };
}

/** Ceph is asked who is in the monmap and in quorum only for a monitor being removed. */
async function observeRemoval(deps: MonLoopDeps, node: NodeDoc, nodes: NodeDoc[], bootstraps: NodeBootstrap[]): Promise<RemovalObserved> {
  const { monmapRun, nodeRun } = await removalRuns(deps, node);
  let monmap: MonmapView;
  try {
    const q = await deps.ceph.quorumStatus({ timeoutMs: deps.queryTimeoutMs ?? 20_000 });
    monmap = { names: q.monmap.mons.map((m) => m.name), quorum: q.quorumNames };
  } catch (err) {
    monmap = { error: err instanceof Error ? err.message : String(err) };
  }
  const othersRemoving = nodes
    .filter((n) => n.id !== node.id && n.status.ceph?.mon?.reason === REMOVING_FROM_MONMAP)
    .map((n) => n.spec.hostname);
  // Another node's bootstrap run named this one in the first monmap.
  const inFirstMonmap = bootstraps.some(
    (b) => b.node.id !== node.id && b.run.status.state !== 'canceled' && initialMembers(b.run.spec.args)?.some((m) => m.nodeId === node.id),
  );
  return { monmap, othersRemoving, monmapRun, nodeRun, inFirstMonmap };
}

interface NodeBootstrap {
  node: NodeDoc;
  run: TaskRun;
}

/** The newest bootstrap run of each of these nodes that has one. */
async function bootstrapRuns(deps: CephLoopDeps, nodes: NodeDoc[]): Promise<NodeBootstrap[]> {
  const runs = await Promise.all(nodes.map((n) => deps.tasks.latestFor(Kind.Node, n.id, MonTask.bootstrap)));
  return nodes.flatMap((node, i) => (runs[i] ? [{ node, run: runs[i] }] : []));
}

/** The bootstrap run that opened the cluster: the first created that neither failed nor was
 * canceled, among every node that has one (a node no longer wanting its monitor included). */
function openedBy(bootstraps: NodeBootstrap[]): NodeBootstrap | undefined {
  const live = bootstraps.filter((b) => b.run.status.state !== 'failed' && b.run.status.state !== 'canceled');
  return live.sort((a, b) => a.run.metadata.createdAt.localeCompare(b.run.metadata.createdAt))[0];
}

const quiet = (deps: MonLoopDeps) => ({ now: deps.clock.now(), retryBaseMs: deps.retryBaseMs, startGraceMs: deps.startGraceMs });

/** Of the monitor nodes' bootstrap runs, the first started that has not failed, with its node. */
function bootstrapView(bootstraps: NodeBootstrap[]): BootstrapView | null {
  let owner: NodeBootstrap | null = null;
  for (const b of bootstraps) {
    if (b.run.status.state === 'failed' || b.run.status.state === 'canceled') continue;
    if (!owner || b.run.metadata.createdAt < owner.run.metadata.createdAt) owner = b;
  }
  if (!owner) return null;
  const info = runInfo(owner.run)!;
  const { monName, addr } = info.args;
  const self = {
    nodeId: owner.node.id,
    name: typeof monName === 'string' ? monName : owner.node.spec.hostname,
    addr: typeof addr === 'string' ? addr : '',
  };
  return { owner: owner.node, run: info, members: initialMembers(info.args) ?? [self] };
}

/** The node's status.ceph.mon: this loop's only status write. */
export const MON_STATUS = daemonStateOwner(Daemon.mon);

async function apply(deps: MonLoopDeps, o: MonObserved, p: MonPlan, slot: { holder: string | null }): Promise<Result> {
  return applyPlan(monEffects(deps), o, claimRemoval(o.node.id, p, slot));
}

/** One removal from the monmap at a time: the slot is claimed before anything is awaited; a
 * plan that finds it held becomes a gate instead. */
function claimRemoval(id: string, p: MonPlan, slot: { holder: string | null }): MonPlan {
  if (p.step?.kind === 'monmap-remove') {
    if (slot.holder !== null && slot.holder !== id) {
      const reason = 'RemovalInProgress';
      const message = 'another monitor is being taken out of the monmap; one at a time';
      return { status: state('blocked', reason, message), step: null, requeueAfterMs: null, gate: gateOf(reason, message) };
    }
    slot.holder = id;
  } else if (slot.holder === id && p.status?.reason !== REMOVING_FROM_MONMAP) {
    slot.holder = null;
  }
  return p;
}

function monEffects(deps: MonLoopDeps): LoopEffects<MonObserved, DaemonState | undefined, MonStep> {
  return {
    write: (o, s) => writeOwned<NodeStatusFields>(deps.store, MON_STATUS, o.node.id, { ceph: s ? { mon: s } : {} }).then(() => undefined),
    act: (o, step) => monRun(deps, o, step),
    start: (req) => deps.tasks.start(req),
    recheckMs: deps.blockedRecheckMs,
  };
}

/** The step as a run (master-level for the import and the monmap removal, node-level for the
 * rest); the bootstrap keys are made here, with no run. */
async function monRun(deps: MonLoopDeps, o: MonObserved, step: MonStep): Promise<StartRequest | Result> {
  const id = o.node.id;
  const target = runTarget(o.node);
  if (step.kind === 'bootstrap-keys') {
    for (const k of BOOTSTRAP_KEYS) {
      if (await hasKey(deps.store, k.entity)) continue;
      await saveKey(deps.store, { entity: k.entity, nodeId: null, caps: { ...k.caps } }, newCephxKey(deps.clock.now(), randomBytes));
    }
    return requeueAfter(0);
  }
  const base = { target, attempt: step.attempt, timeoutMs: deps.runTimeoutMs };
  if (step.kind === 'import-admin-key') {
    return { ...base, taskName: MonTask['import-admin-key'], args: {}, script: importAdminKeyScript(deps) };
  }
  if (step.kind === 'monmap-remove') {
    const monName = String(step.args.monName);
    return {
      ...base,
      taskName: MonTask['monmap-remove'],
      args: step.args,
      script: async (ctx) => {
        const r = await deps.ceph.monRemove(monName, { signal: ctx.signal });
        ctx.log('info', r.removed ? `mon.${monName} removed from the monmap` : `mon.${monName} was not in the monmap (already removed)`);
      },
    };
  }
  return { ...base, taskName: MonTask[step.kind], node: { id, hostname: o.node.spec.hostname }, args: step.args };
}
