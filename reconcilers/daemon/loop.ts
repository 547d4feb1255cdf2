// The effectful half of the manager, metadata-server and gateway loops.
import { Daemon, daemon, type KeyedDaemonType } from '../../src/catalogue/index.js';
import { CLUSTER_ID, CephKind, type ClusterSpec, type ClusterStatus } from '../../src/model/ceph-kinds.js';
import type { Doc } from '../../src/model/document.js';
import { Kind, type DaemonState, type NodeSpec, type NodeStatusFields } from '../../src/model/kinds.js';
import type { NodeDoc } from '../../src/model/operations.js';
import type { StartRequest } from '../../src/tasks/types.js';
import type { Reconciler } from '../../src/runtime/types.js';
import { applyPlan, writeOwned, type LoopEffects } from '../../src/runtime/loop-kit/index.js';
import { hasQuorum, type CephLoopDeps } from '../shared/ceph-deps.js';
import { daemonStateOwner } from '../shared/daemon-state.js';
import { hasKey, saveKey } from '../shared/keys.js';
import { runInfo } from '../shared/runs.js';
import { planDaemon, type DaemonObserved, type DaemonPlan, type DaemonStep } from './plan.js';
import { runTarget } from '../../src/model/object-names.js';

// Kept here too for the composition root, which imports it from this file.
export type { CephLoopDeps };

/** What differs between the manager, MDS and gateway loops. */
export interface DaemonKind {
  type: KeyedDaemonType;
  entity(node: NodeDoc): string;
  /** Its key's caps: fixed for most, from the spec entry for an NFS gateway (its export). */
  caps(node: NodeDoc): Record<string, string>;
  startArgs(node: NodeDoc, cluster: Doc<ClusterSpec, ClusterStatus>): Record<string, unknown>;
  /** Set for daemons that hold no data: one running but no longer desired is stopped by a
   * node-level run `ceph.<type>.stop` with { name: hostname }. */
  stopOrphan?: boolean;
}

type O = DaemonObserved & { cluster: Doc<ClusterSpec, ClusterStatus> };

export function daemonLoop(kind: DaemonKind, deps: CephLoopDeps): Reconciler<O, DaemonPlan> {
  const { key: keyTask, start: startTask, stop: stopTask } = daemon(kind.type).steps as { key: string; start: string; stop?: string };
  const owner = daemonStateOwner(kind.type);
  /** The step as a run: the key is made on the master, start and stop on the node. */
  const act = (o: O, step: DaemonStep): StartRequest => {
    const target = runTarget(o.node);
    const base = { target, attempt: step.attempt, timeoutMs: deps.runTimeoutMs };
    const node = { id: o.node.id, hostname: o.node.spec.hostname };
    if (step.kind === 'create-key') {
      const entity = kind.entity(o.node);
      return {
        ...base,
        taskName: keyTask,
        args: { entity },
        script: async (ctx) => {
          const caps = kind.caps(o.node);
          const made = await deps.ceph.authGetOrCreate(entity, caps, { signal: ctx.signal });
          await saveKey(deps.store, { entity, nodeId: o.node.id, caps }, made.key);
          ctx.log('info', `key for ${entity} ready`);
        },
      };
    }
    if (step.kind === 'start') return { ...base, taskName: startTask, node, args: kind.startArgs(o.node, o.cluster) };
    // The plan stops only a daemon whose catalogue entry has stopOrphan, and so a stop step.
    if (!stopTask) throw new Error(`the ${kind.type} daemon has no stop step in the catalogue`);
    return { ...base, taskName: stopTask, node, args: { name: o.node.spec.hostname } };
  };
  const effects: LoopEffects<O, DaemonState | undefined, DaemonStep> = {
    write: (o, s) =>
      writeOwned<NodeStatusFields>(deps.store, owner, o.node.id, { ceph: s ? { [kind.type]: s } : {} }).then(() => undefined),
    act,
    start: (req) => deps.tasks.start(req),
    recheckMs: deps.blockedRecheckMs,
  };
  return {
    name: kind.type,
    kind: Kind.Node,
    dependsOn: ['node', 'cluster', Daemon.mon],
    observe: async (id) => {
      const node = await deps.store.get<NodeSpec, NodeStatusFields>(Kind.Node, id);
      const cluster = await deps.store.get<ClusterSpec, ClusterStatus>(CephKind.Cluster, CLUSTER_ID);
      if (!node || !cluster) return undefined;
      const common = {
        type: kind.type,
        node,
        cluster,
        quorum: hasQuorum(cluster),
        now: deps.clock.now(),
        retryBaseMs: deps.retryBaseMs,
        startGraceMs: deps.startGraceMs,
      };
      // Most nodes neither want nor run this daemon: nothing below would change the plan.
      if (!node.spec.daemons[kind.type] && !node.status.daemons?.[kind.type] && !node.status.ceph?.[kind.type]) {
        return { ...common, keyExists: false, keyRun: null, startRun: null };
      }
      const [keyRun, startRun, stopRun] = await Promise.all([
        deps.tasks.latestFor(Kind.Node, id, keyTask),
        deps.tasks.latestFor(Kind.Node, id, startTask),
        kind.stopOrphan ? deps.tasks.latestFor(Kind.Node, id, stopTask) : undefined,
      ]);
      return {
        ...common,
        keyExists: await hasKey(deps.store, kind.entity(node)),
        keyRun: runInfo(keyRun),
        startRun: runInfo(startRun),
        ...(kind.stopOrphan ? { stopOrphan: true, stopRun: runInfo(stopRun) } : {}),
      };
    },
    plan: planDaemon,
    apply: (o, plan) => applyPlan(effects, o, plan),
  };
}
