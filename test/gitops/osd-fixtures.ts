// One active node and its disks in each state of an OSD's life (issue 14), written straight to a
// memory store: what the specs folder and the API decide about them, without loops or a lab.
import { CLUSTER_ID, CephKind, type ClusterSpec } from '../../src/model/ceph-kinds.js';
import { diskIdFor, nodeIdForMac } from '../../src/model/ids.js';
import { Kind, type DiskSpec, type DiskStatusFields, type NodeStatusFields } from '../../src/model/kinds.js';
import { createMemoryStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import { nodeSpec } from '../store/helpers.js';

export const MAC = '52:54:00:00:00:01';
export const FSID = '6b8f2c1e-0a4d-4e5f-9c3b-2d1e0f9a8b7c';
export const NODE = nodeIdForMac(MAC);
export const id = (serial: string): string => diskIdFor(NODE, serial);

const running = (phase: string, reason = 'Running') => ({ osd: { phase, reason, message: '' } }) as Pick<DiskStatusFields, 'osd'>;
const label = (fsid: string, osdId: number) => ({ label: { fsid, osdUuid: '1f0e2d3c-4b5a-4968-8776-a5b4c3d2e1f0', osdId } });

/** serial → spec and status over a clean 4 TB SATA HDD. */
export const DISKS: Record<string, { spec?: Partial<DiskSpec>; status?: Partial<DiskStatusFields> }> = {
  SYS: { status: { isSystem: true, hasFilesystem: true, devicePath: '/dev/sda', capacityBytes: 240e9 } },
  /** osd.3 runs, wanted. */
  OLD: { spec: { osd: true }, status: { osdId: 3, devicePath: '/dev/sdb', ...running('running') } },
  /** A blank SSD, just put in. */
  NEW: { status: { devicePath: '/dev/sdc', rotational: false } },
  /** osd.5 runs, no one wants it. */
  ORPH: { status: { osdId: 5, hasFilesystem: true, devicePath: '/dev/sdd', ...running('orphaned', 'NotDesired') } },
  /** No OSD recorded, this cluster's BlueStore on it. */
  LBL: { status: { hasFilesystem: true, devicePath: '/dev/sde', ...label(FSID, 7) } },
  /** Another cluster's BlueStore. */
  FOREIGN: { status: { hasFilesystem: true, devicePath: '/dev/sdf', ...label('0a0b0c0d-0000-4000-8000-000000000001', 2) } },
  BLANK: { status: { devicePath: '/dev/sdg' } },
  /** osd.9 destroyed by a replacement, waiting for its successor. */
  DEAD: { spec: { osdRemoval: 'replace' }, status: { osdId: 9, devicePath: '/dev/sdh', ...running('destroyed', 'Destroyed') } },
};

export async function osdStore(): Promise<Store> {
  const store = await createMemoryStore();
  const cluster: ClusterSpec = {
    fsid: FSID,
    publicNetwork: null,
    clusterNetwork: null,
    monPort: 3300,
    poolDefaults: { size: 3, minSize: 2 },
  };
  await store.create({ kind: CephKind.Cluster, id: CLUSTER_ID, name: 'ceph', spec: cluster });
  const status: NodeStatusFields = { phase: 'active', bootId: 'boot-1', diskIds: Object.keys(DISKS).map(id) };
  await store.create({ kind: Kind.Node, id: NODE, name: 'node-1', spec: nodeSpec({ approved: true }), status });
  for (const [serial, d] of Object.entries(DISKS)) {
    await store.create({
      kind: Kind.Disk,
      id: id(serial),
      name: `node-1/${serial}`,
      spec: { nodeId: NODE, serial, osd: false, wipeGeneration: 0, ...d.spec },
      status: {
        present: true,
        capacityBytes: 4e12,
        rotational: true,
        interface: 'sata',
        isSystem: false,
        hasFilesystem: false,
        osdId: null,
        ...d.status,
      },
    });
  }
  return store;
}
