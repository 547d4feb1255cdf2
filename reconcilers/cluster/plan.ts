// The cluster loop's pure half: what `ceph status` and `ceph mon dump` said (or that they could
// not answer) becomes the Cluster's status, which the API serves as metrics and monmap.
import type { ClusterMetrics, ClusterSpec, ClusterStatus } from '../../src/model/ceph-kinds.js';
import type { Doc } from '../../src/model/document.js';
import type { CephStatus, MonDump } from '../../src/clients/ceph-types.js';
import { setCondition } from '../../src/runtime/conditions.js';
import type { LoopPlan } from '../../src/runtime/loop-kit/index.js';

export interface ClusterObserved {
  cluster: Doc<ClusterSpec, ClusterStatus>;
  /** Nodes with a monitor desired. */
  monitorsDesired: number;
  /** What Ceph answered; an error message when it could not (no quorum, no monitor yet). */
  ceph: { status: CephStatus; monDump: MonDump } | { error: string } | null;
  /** The binary monmap of monDump's epoch, base64; observe fetches it only when the epoch
   * differs from the stored one. */
  monmap: string | null;
  nowIso: string;
  pollMs: number;
}

/** The Cluster's status and the poll interval; this loop changes nothing in Ceph, so no step,
 * and no gate (Ceph not answering is a status, not a wait for something). */
export interface ClusterPlan extends LoopPlan<ClusterStatus, never> {
  requeueAfterMs: number;
}

export function metricsOf(s: CephStatus): ClusterMetrics {
  return {
    health: s.health,
    monCount: s.monCount,
    osdCount: s.osdCount,
    osdUp: s.osdUp,
    osdIn: s.osdIn,
    pgCount: s.pgCount,
    poolCount: s.poolCount,
    usedBytes: s.usedBytes,
    availableBytes: s.availableBytes,
    totalBytes: s.totalBytes,
  };
}

export function planCluster(o: ClusterObserved): ClusterPlan {
  const cur = o.cluster.status;
  const gen = o.cluster.metadata.generation;
  let conditions = cur.conditions ?? [];
  const set = (type: string, on: boolean, reason: string, message: string) => {
    conditions = setCondition(conditions, { type, status: on ? 'True' : 'False', reason, message }, gen, o.nowIso);
  };
  const next: ClusterStatus = { ...cur, observedGeneration: gen };
  if (o.monitorsDesired === 0) {
    next.phase = 'pending';
    set('Ready', false, 'NoMonitor', 'no monitor is declared; ceph.create-mon creates the cluster');
    set('Blocked', true, 'NoMonitor', 'waiting for a monitor to be declared');
  } else if (!o.ceph || 'error' in o.ceph) {
    next.phase = cur.bootstrapped ? 'degraded' : 'bootstrapping';
    const why = o.ceph && 'error' in o.ceph ? o.ceph.error : 'not asked yet';
    set('Ready', false, cur.bootstrapped ? 'NoQuorum' : 'Bootstrapping', `Ceph does not answer: ${why}`);
    set('Blocked', false, 'NotBlocked', '');
  } else {
    const { status, monDump } = o.ceph;
    next.phase = 'ready';
    next.bootstrapped = true;
    next.quorum = [...status.quorumNames].sort();
    next.metrics = metricsOf(status);
    if (o.monmap) {
      next.monmap = o.monmap;
      next.monmapEpoch = monDump.epoch;
    }
    set(
      'Ready',
      status.health !== 'HEALTH_ERR',
      status.health === 'HEALTH_ERR' ? 'HealthError' : 'Quorum',
      `${status.health}; quorum ${next.quorum.join(', ')}`,
    );
    set('Blocked', false, 'NotBlocked', '');
    set(
      'Degraded',
      status.health !== 'HEALTH_OK',
      status.health === 'HEALTH_OK' ? 'Healthy' : 'HealthWarn',
      status.healthChecks.map((c) => c.code).join(', '),
    );
  }
  next.conditions = conditions;
  return { status: next, step: null, requeueAfterMs: o.pollMs, gate: null };
}
