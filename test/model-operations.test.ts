import test from 'ava';
import type { DiskSpec, DiskStatusFields } from '../src/model/kinds.js';
import type { Doc } from '../src/model/document.js';
import { diskReasons, MIN_OSD_BYTES, offeredDiskOperations, offeredNodeOperations, type DiskDoc } from '../src/model/operations.js';
import { NODE_ID, node } from './builders.js';

const DISK_ID = '9c1a0f3e-2b4d-5c6e-8f70-1a2b3c4d5e6f';

function disk(status: Partial<DiskStatusFields> = {}, spec: Partial<DiskSpec> = {}): DiskDoc {
  const d: Doc<DiskSpec, DiskStatusFields> = {
    kind: 'Disk',
    id: DISK_ID,
    name: 'node-1/S1',
    metadata: { generation: 1, resourceVersion: 1, createdAt: '', updatedAt: '', labels: {}, source: null },
    spec: { nodeId: NODE_ID, serial: 'S1', osd: false, wipeGeneration: 0, ...spec },
    status: { present: true, capacityBytes: 4e12, isSystem: false, hasFilesystem: false, osdId: null, ...status },
  };
  return d;
}

const active = node('active').build();

const reasonTable: Array<[string, DiskDoc, string[]]> = [
  ['a clean data disk is eligible', disk(), []],
  ['the system disk', disk({ isSystem: true }), ['system-disk']],
  ['a disk with an OSD desired', disk({}, { osd: true }), ['holds-osd']],
  ['a disk with an OSD running', disk({ osdId: 3 }), ['holds-osd']],
  ['a disk with an old filesystem', disk({ hasFilesystem: true }), ['has-filesystem']],
  ['a disk below the minimum size', disk({ capacityBytes: MIN_OSD_BYTES - 1 }), ['too-small']],
  ['a disk being wiped', disk({ observedWipeGeneration: 0 }, { wipeGeneration: 1 }), ['wipe-in-progress']],
  ['a disk that vanished', disk({ present: false }), ['absent']],
];

for (const [title, d, reasons] of reasonTable) {
  test(`disk eligibility: ${title}`, (t) => {
    t.deepEqual(diskReasons(d, active), reasons);
  });
}

test('disk eligibility: the monitor disk of its node', (t) => {
  const n = node('active').build();
  n.spec.daemons.mon = { diskId: DISK_ID };
  t.deepEqual(diskReasons(disk(), n), ['monitor-disk']);
});

test('disk operations: an eligible disk on an active node offers create-osd and wipe', (t) => {
  t.deepEqual(offeredDiskOperations(disk(), active), ['ceph.create-osd', 'disk.wipe']);
});

test('disk operations: nothing on a node that is not active', (t) => {
  t.deepEqual(offeredDiskOperations(disk(), node('offline').build()), []);
});

test('disk operations: a disk with a filesystem can be wiped but takes no OSD', (t) => {
  t.deepEqual(offeredDiskOperations(disk({ hasFilesystem: true }), active), ['disk.wipe']);
});

test('disk operations: an OSD disk, the system disk and the monitor disk offer nothing', (t) => {
  const withMon = node('active').build();
  withMon.spec.daemons.mon = { diskId: DISK_ID };
  t.deepEqual(offeredDiskOperations(disk({ osdId: 1 }), active), []);
  t.deepEqual(offeredDiskOperations(disk({ isSystem: true }), active), []);
  t.deepEqual(offeredDiskOperations(disk(), withMon), []);
});

test('node operations: an active node with an eligible disk offers everything', (t) => {
  t.deepEqual(offeredNodeOperations(active, [disk()]), [
    'ceph.create-mon',
    'ceph.create-mgr',
    'ceph.create-mds',
    'ceph.create-rgw',
    'ceph.create-nfs',
    'node.restart',
    'node.shutdown',
  ]);
});

test('node operations: no monitor without an eligible disk, and none twice', (t) => {
  t.false(offeredNodeOperations(active, [disk({ isSystem: true })]).includes('ceph.create-mon'));
  const n = node('active').build();
  n.spec.daemons = { mgr: {}, rgw: {} };
  t.deepEqual(offeredNodeOperations(n, [disk()]), [
    'ceph.create-mon',
    'ceph.create-mds',
    'ceph.create-nfs',
    'node.restart',
    'node.shutdown',
  ]);
});

test('node operations: an errored node can only be restarted or shut down; others nothing', (t) => {
  t.deepEqual(offeredNodeOperations(node('error').build(), [disk()]), ['node.restart', 'node.shutdown']);
  for (const phase of ['discovered', 'booting', 'rebooting', 'shutting-down', 'offline'] as const) {
    t.deepEqual(offeredNodeOperations(node(phase).build(), [disk()]), [], phase);
  }
});
