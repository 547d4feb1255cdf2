// The cluster loop's pure half: what `ceph status` and `ceph mon dump` said (or that they could
// not answer) becomes the Cluster's status, which the API serves as metrics and monmap.
import {
  HEALTH_DETAIL_MAX,
  type ClusterMetrics,
  type ClusterSpec,
  type ClusterStatus,
  type HealthCheckSeen,
} from '../../src/model/ceph-kinds.js';
import type { Doc } from '../../src/model/document.js';
import type { CephHealth, CephStatus, HealthCheck, MonDump } from '../../src/clients/ceph-types.js';
import { setCondition } from '../../src/runtime/conditions.js';
import type { LoopPlan } from '../../src/runtime/loop-kit/index.js';
import { planCrush, type CrushObserved, type CrushStep } from './crush-plan.js';

export interface ClusterObserved {
  cluster: Doc<ClusterSpec, ClusterStatus>;
  /** Nodes with a monitor desired. */
  monitorsDesired: number;
  /** What Ceph answered; an error message when it could not (no quorum, no monitor yet). */
  ceph: { status: CephStatus; monDump: MonDump; health?: CephHealth | null } | { error: string } | null;
  /** The binary monmap of monDump's epoch, base64; observe fetches it only when the epoch
   * differs from the stored one. */
  monmap: string | null;
  nowIso: string;
  pollMs: number;
  /** The CRUSH map and the labels, when there is anything to place (crush-plan.ts). */
  crush?: CrushObserved | null;
}

/** The Cluster's status and the poll interval; its one kind of step is CRUSH work (a host
 * placed under its labels' buckets, pools moved to the failure domain's rule), and no gate
 * (Ceph not answering is a status, not a wait for something). */
export interface ClusterPlan extends LoopPlan<ClusterStatus, CrushStep> {
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

/** The checks as stored: muted ones left out (an operator silenced them), detail bounded. */
export const checksOf = (checks: readonly HealthCheck[]): HealthCheckSeen[] =>
  checks
    .filter((c) => !c.muted)
    .map((c) => ({ code: c.code, severity: c.severity, message: c.message, count: c.count, detail: c.detail.slice(0, HEALTH_DETAIL_MAX) }));

export function planCluster(o: ClusterObserved): ClusterPlan {
  const cur = o.cluster.status;
  const gen = o.cluster.metadata.generation;
  let conditions = cur.conditions ?? [];
  const set = (type: string, on: boolean, reason: string, message: string) => {
    conditions = setCondition(conditions, { type, status: on ? 'True' : 'False', reason, message }, gen, o.nowIso);
  };
  const next: ClusterStatus = { ...cur, observedGeneration: gen };
  let crush: ReturnType<typeof planCrush> | null = null;
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
    // `health detail` names the OSDs, monitors and filesystems; without it, status's summary.
    next.healthChecks = checksOf(o.ceph.health?.checks ?? status.healthChecks);
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
    crush = o.crush ? planCrush(o.crush) : null;
    if (crush) next.crush = crush.status;
    // A CRUSH gate is shown, but holds nothing else: the loop keeps polling.
    set('Blocked', crush?.gate != null, crush?.gate?.reason ?? 'NotBlocked', crush?.gate?.message ?? '');
    set(
      'Degraded',
      status.health !== 'HEALTH_OK',
      status.health === 'HEALTH_OK' ? 'Healthy' : 'HealthWarn',
      status.healthChecks.map((c) => c.code).join(', '),
    );
  }
  next.conditions = conditions;
  const wait = crush?.waitMs ?? null;
  return { status: next, step: crush?.step ?? null, requeueAfterMs: wait === null ? o.pollMs : Math.min(o.pollMs, wait), gate: null };
}
