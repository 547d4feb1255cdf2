// What the pure plans' tests share: the clock they are planned at, a run as observe would
// report it (finished runs a minute before NOW unless said otherwise), and a data disk.
import type { DiskSpec, DiskStatusFields } from '../../src/model/kinds.js';
import type { DiskDoc } from '../../src/model/operations.js';
import type { LifecycleObserved } from '../../reconcilers/osd/plan.js';
import type { RunInfo } from '../../reconcilers/shared/runs.js';
import { NODE_ID, T0 } from '../builders.js';

export const NOW = T0 + 1_000_000;

export const run = (state: RunInfo['state'], over: Partial<RunInfo> = {}): RunInfo => ({
  id: 'r1',
  state,
  attempt: 1,
  completedAt: state === 'pending' || state === 'running' ? null : NOW - 60_000,
  error: state === 'failed' ? 'boom' : null,
  args: {},
  result: null,
  ...over,
});

/** A present 4 TB SATA hdd of node-1 (NODE_ID) at /dev/sdb with an OSD wanted on it. */
export function diskDoc(
  spec: Partial<DiskSpec> = {},
  status: Partial<DiskStatusFields> = {},
  id = '9c1a0f3e-2b4d-4c6e-8f70-1a2b3c4d5e6f',
  serial = 'SER1',
): DiskDoc {
  return {
    kind: 'Disk',
    id,
    name: `node-1/${serial}`,
    metadata: { generation: 1, resourceVersion: 3, createdAt: '', updatedAt: '', labels: {}, source: null },
    spec: { nodeId: NODE_ID, serial, osd: true, wipeGeneration: 0, ...spec },
    status: {
      present: true,
      devicePath: '/dev/sdb',
      capacityBytes: 4000 * 1e9,
      rotational: true,
      interface: 'sata',
      isSystem: false,
      hasFilesystem: false,
      ...status,
    },
  };
}

/** What observe reads of an OSD's removal: no runs yet, the drain lease held, Ceph not asked. */
export const life = (over: Partial<LifecycleObserved> = {}): LifecycleObserved => ({
  outRun: null,
  inRun: null,
  stopRun: null,
  purgeRun: null,
  destroyRun: null,
  zapRun: null,
  lease: { kind: 'held' },
  staleHolders: [],
  df: null,
  safe: null,
  down: null,
  ...over,
});
