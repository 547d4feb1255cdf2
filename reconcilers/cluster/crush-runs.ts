// The cluster loop's CRUSH effects: what it reads of the CRUSH map (only when there is anything
// to place, so a cluster without labels costs no extra query), and the two master-level runs.
// Both runs are idempotent: an existing bucket or rule is success, a move to where the item is
// already says so, a pool already on the rule is set again harmlessly.
import { crushBuckets } from '../../src/clients/ceph-crush.js';
import { CephKind, type ClusterSpec, type ClusterStatus } from '../../src/model/ceph-kinds.js';
import { crushLevelsOf, failureDomainOf } from '../../src/model/crush.js';
import type { Doc } from '../../src/model/document.js';
import type { NodeSpec } from '../../src/model/kinds.js';
import type { StartRequest } from '../../src/tasks/types.js';
import { runInfo } from '../shared/runs.js';
import { CRUSH_PLACE_TASK, CRUSH_RULE_TASK, crushWanted, type CrushObserved, type CrushStep } from './crush-plan.js';
import type { CephApi } from '../../src/clients/ceph-api.js';
import type { Clock } from '../../src/model/clock.js';
import type { LoopTasks } from '../shared/ceph-deps.js';
import type { ClusterObserved } from './plan.js';
import { runTarget } from '../../src/model/object-names.js';

/** What the CRUSH half of the cluster loop is given (a part of its deps). */
export interface CrushDeps {
  ceph: CephApi;
  clock: Clock;
  tasks: LoopTasks;
  queryTimeoutMs: number;
  retryBaseMs: number;
  runTimeoutMs: number;
}

/** The CRUSH view, or null when nothing asks for one or Ceph did not answer (the next poll
 * asks again; the cluster's own status is not held back by it). */
export async function observeCrush(
  deps: CrushDeps,
  cluster: Doc<ClusterSpec, ClusterStatus>,
  nodeDocs: Doc<NodeSpec, unknown>[],
  osdIdsOf: () => Promise<Map<string, number[]>>,
): Promise<CrushObserved | null> {
  const levels = crushLevelsOf(cluster.spec);
  const failureDomain = failureDomainOf(cluster.spec);
  if (
    !crushWanted(
      levels,
      failureDomain,
      nodeDocs.map((n) => n.metadata),
      cluster.status.crush,
    )
  )
    return null;
  const call = { timeoutMs: deps.queryTimeoutMs };
  try {
    // Runs first, Ceph second: a run that completes in between is then seen with its result.
    const [placeRun, ruleRun] = await Promise.all([
      deps.tasks.latestFor(CephKind.Cluster, cluster.id, CRUSH_PLACE_TASK),
      deps.tasks.latestFor(CephKind.Cluster, cluster.id, CRUSH_RULE_TASK),
    ]);
    const [tree, rules, pools, osdIds] = await Promise.all([
      deps.ceph.osdTree(call),
      deps.ceph.crushRuleDump(call),
      deps.ceph.poolRules(call),
      osdIdsOf(),
    ]);
    // A node's host bucket is the one its OSDs are in: Ceph names it by the machine's hostname.
    const hostOfOsd = new Map(tree.nodes.filter((n) => n.host !== undefined).map((n) => [n.id, n.host as string]));
    const nodes = nodeDocs.map((n) => ({
      hostname: n.spec.hostname,
      labels: n.metadata.labels,
      bucket: (osdIds.get(n.id) ?? []).map((id) => hostOfOsd.get(id)).find((h) => h !== undefined) ?? null,
    }));
    return {
      levels,
      failureDomain,
      nodes,
      ceph: { buckets: crushBuckets(tree), rules, pools },
      placeRun: runInfo(placeRun),
      ruleRun: runInfo(ruleRun),
      now: deps.clock.now(),
      retryBaseMs: deps.retryBaseMs,
    };
  } catch {
    return null;
  }
}

export function crushRun(deps: CrushDeps, o: ClusterObserved, step: CrushStep): StartRequest {
  const target = runTarget(o.cluster);
  const base = { target, attempt: step.attempt, timeoutMs: deps.runTimeoutMs };
  if (step.kind === 'place-host') {
    const { host, location } = step;
    return {
      ...base,
      taskName: CRUSH_PLACE_TASK,
      args: { host, location },
      script: async (ctx) => {
        const call = { signal: ctx.signal };
        // Each bucket made with its type, then hung under the one above it, root first: `move`
        // stops at the first bucket of a location that exists without moving it.
        for (let i = 1; i < location.length; i++) {
          const [type, name] = (location[i] as string).split('=') as [string, string];
          const made = await deps.ceph.crushAddBucket(name, type, call);
          if (made.created) ctx.log('info', `${type} ${name} added to the CRUSH map`);
          const moved = await deps.ceph.crushMove(name, location.slice(0, i), call);
          if (moved.moved) ctx.log('info', `${type} ${name} moved under ${location.slice(0, i).join(' ')}`);
        }
        const moved = await deps.ceph.crushMove(host, location, call);
        ctx.log(
          'info',
          moved.moved
            ? `host ${host} moved under ${location.join(' ')}: Ceph moves its data to match`
            : `host ${host} is under ${location.join(' ')} already`,
        );
        return {};
      },
    };
  }
  const { rule, failureDomain, pools } = step;
  return {
    ...base,
    taskName: CRUSH_RULE_TASK,
    args: { rule, failureDomain, pools },
    script: async (ctx) => {
      const call = { signal: ctx.signal };
      const made = await deps.ceph.crushRuleCreateReplicated({ name: rule, root: 'default', failureDomain }, call);
      ctx.log('info', made.created ? `rule ${rule} created (replicas across ${failureDomain}s)` : `rule ${rule} exists`);
      for (const pool of pools) {
        await deps.ceph.poolSetCrushRule(pool, rule, call);
        ctx.log('info', `pool ${pool} now on rule ${rule}: Ceph moves its data to match`);
      }
      return {};
    },
  };
}
