// The effectful half of the manager, metadata-server and gateway loops.
import { daemon } from '../../src/catalogue/index.js';
import type { CephApi } from '../../src/clients/ceph-api.js';
import { CLUSTER_ID, CephKind, type ClusterSpec, type ClusterStatus } from '../../src/model/ceph-kinds.js';
import type { Clock } from '../../src/model/clock.js';
import type { Doc } from '../../src/model/document.js';
import { Kind, type DaemonType, type NodeSpec, type NodeStatusFields } from '../../src/model/kinds.js';
import type { NodeDoc } from '../../src/model/operations.js';
import type { Store } from '../../src/store/types.js';
import type { StartRequest, TaskRun } from '../../src/tasks/types.js';
import { blocked, done, requeueAfter, type Reconciler, type Result } from '../../src/runtime/types.js';
import { writeDaemonState } from '../shared/daemon-state.js';
import { hasKey, saveKey } from '../shared/keys.js';
import { runInfo } from '../shared/runs.js';
import { planDaemon, type DaemonObserved, type DaemonPlan } from './plan.js';

export interface CephLoopDeps {
  store: Store;
  ceph: CephApi;
  tasks: {
    start(req: StartRequest): Promise<TaskRun>;
    latestFor(kind: string, id: string, taskName?: string): Promise<TaskRun | undefined>;
  };
  clock: Clock;
  retryBaseMs: number;
  startGraceMs: number;
  /** How soon a blocked daemon looks at its gate again. */
  blockedRecheckMs: number;
  runTimeoutMs: number;
}

/** What differs between the manager, MDS and gateway loops. */
export interface DaemonKind {
  type: Exclude<DaemonType, 'mon'>;
  entity(node: NodeDoc): string;
  caps: Record<string, string>;
  startArgs(node: NodeDoc, cluster: Doc<ClusterSpec, ClusterStatus>): Record<string, unknown>;
  /** Set for daemons that hold no data: one running but no longer desired is stopped by a
   * node-level run `ceph.<type>.stop` with { name: hostname }. */
  stopOrphan?: boolean;
}

export const hasQuorum = (c: Doc<ClusterSpec, ClusterStatus> | undefined): boolean => (c?.status.quorum?.length ?? 0) > 0 && c?.status.phase === 'ready';

export function daemonLoop(kind: DaemonKind, deps: CephLoopDeps): Reconciler<DaemonObserved & { cluster: Doc<ClusterSpec, ClusterStatus> }, DaemonPlan> {
  const { key: keyTask, start: startTask, stop: stopTask } = daemon(kind.type).steps as { key: string; start: string; stop?: string };
  return {
    name: kind.type,
    kind: Kind.Node,
    dependsOn: ['node', 'cluster', 'mon'],
    observe: async (id) => {
      const node = await deps.store.get<NodeSpec, NodeStatusFields>(Kind.Node, id);
      const cluster = await deps.store.get<ClusterSpec, ClusterStatus>(CephKind.Cluster, CLUSTER_ID);
      if (!node || !cluster) return undefined;
      const common = { type: kind.type, node, cluster, quorum: hasQuorum(cluster), now: deps.clock.now(), retryBaseMs: deps.retryBaseMs, startGraceMs: deps.startGraceMs };
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
    apply: async (o, plan): Promise<Result> => {
      await writeDaemonState(deps.store, o.node.id, kind.type, plan.state);
      const target = { kind: Kind.Node, id: o.node.id, generation: o.node.metadata.generation };
      if (plan.step?.kind === 'create-key') {
        const entity = kind.entity(o.node);
        await deps.tasks.start({
          taskName: keyTask, target, attempt: plan.step.attempt, timeoutMs: deps.runTimeoutMs, args: { entity },
          script: async (ctx) => {
            const made = await deps.ceph.authGetOrCreate(entity, kind.caps, { signal: ctx.signal });
            await saveKey(deps.store, { entity, nodeId: o.node.id, caps: kind.caps }, made.key);
            ctx.log('info', `key for ${entity} ready`);
          },
        });
      } else if (plan.step?.kind === 'start') {
        await deps.tasks.start({
          taskName: startTask, target, attempt: plan.step.attempt, timeoutMs: deps.runTimeoutMs,
          node: { id: o.node.id, hostname: o.node.spec.hostname },
          args: kind.startArgs(o.node, o.cluster),
        });
      } else if (plan.step?.kind === 'stop' && stopTask) {
        await deps.tasks.start({
          taskName: stopTask, target, attempt: plan.step.attempt, timeoutMs: deps.runTimeoutMs,
          node: { id: o.node.id, hostname: o.node.spec.hostname },
          args: { name: o.node.spec.hostname },
        });
      }
      if (plan.blocked) return blocked(plan.state?.reason ?? 'Blocked', plan.state?.message ?? '', deps.blockedRecheckMs);
      return plan.requeueAfterMs !== null ? requeueAfter(plan.requeueAfterMs) : done();
    },
  };
}
