// What every Ceph loop (mon, mgr/mds/rgw, osd, fs, rgw-user) is given, and the one quorum test
// they share: here rather than in one loop's file, so no loop imports another's.
import type { CephApi } from '../../src/clients/ceph-api.js';
import type { ClusterSpec, ClusterStatus } from '../../src/model/ceph-kinds.js';
import type { Clock } from '../../src/model/clock.js';
import type { Doc } from '../../src/model/document.js';
import type { Store } from '../../src/store/types.js';
import type { StartRequest, TaskRun } from '../../src/tasks/types.js';
import type { EventBus } from '../../src/tasks/bus.js';

/** The two task-service calls a loop makes: start a run, find the newest one of a task. */
export interface LoopTasks {
  start(req: StartRequest): Promise<TaskRun>;
  latestFor(kind: string, id: string, taskName?: string): Promise<TaskRun | undefined>;
}

export interface CephLoopDeps {
  store: Store;
  ceph: CephApi;
  tasks: LoopTasks;
  clock: Clock;
  retryBaseMs: number;
  startGraceMs: number;
  /** How soon a blocked daemon looks at its gate again. */
  blockedRecheckMs: number;
  runTimeoutMs: number;
  /** Where the disruption budget's leases are announced (disruption.lease.taken/released). */
  bus?: Pick<EventBus, 'publish'>;
}

/** The monitors have quorum: the cluster loop saw `ceph status` answer. */
export const hasQuorum = (c: Doc<ClusterSpec, ClusterStatus> | undefined): boolean =>
  (c?.status.quorum?.length ?? 0) > 0 && c?.status.phase === 'ready';
