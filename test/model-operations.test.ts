import test from 'ava';
import type { DiskSpec, DiskStatusFields } from '../src/model/kinds.js';
import type { Doc } from '../src/model/document.js';
import {
  declareReasons,
  deviceClassOf,
  diskReasons,
  isAdoptable,
  MIN_OSD_BYTES,
  offeredDiskOperations,
  offeredNodeOperations,
  type DiskDoc,
} from '../src/model/operations.js';
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

test('disk operations: an OSD disk offers only its removal and replacement; the system disk and the monitor disk nothing', (t) => {
  const withMon = node('active').build();
  withMon.spec.daemons.mon = { diskId: DISK_ID };
  // Issue 14: an OSD disk used to offer nothing; its OSD can now be removed or replaced.
  t.deepEqual(offeredDiskOperations(disk({ osdId: 1 }, { osd: true }), active), ['ceph.remove-osd', 'ceph.replace-osd']);
  t.deepEqual(offeredDiskOperations(disk({}, { osd: true }), active), [], 'an OSD being created: nothing to remove yet');
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
    'node.maintenance',
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
    'node.maintenance',
  ]);
});

test('node operations: an errored node can only be restarted or shut down, an offline one powered on; others nothing', (t) => {
  t.deepEqual(offeredNodeOperations(node('error').build(), [disk()]), ['node.restart', 'node.shutdown']);
  // #15: an offline node offers its way back (through its BMC, or Blocked: NoPowerControl).
  t.deepEqual(offeredNodeOperations(node('offline').build(), [disk()]), ['node.power-on']);
  for (const phase of ['discovered', 'booting', 'rebooting', 'shutting-down'] as const) {
    t.deepEqual(offeredNodeOperations(node(phase).build(), [disk()]), [], phase);
  }
});

test('node operations: maintenance is entered from active only, and left whenever it is wanted', (t) => {
  t.true(offeredNodeOperations(node('active').build(), [disk()]).includes('node.maintenance'));
  t.false(offeredNodeOperations(node('error').build(), [disk()]).includes('node.maintenance'));
  for (const phase of ['active', 'maintenance', 'offline'] as const) {
    const n = node(phase).build();
    n.spec.maintenance = true;
    const ops = offeredNodeOperations(n, [disk()]);
    t.true(ops.includes('node.maintenance-exit'), phase);
    t.false(ops.includes('node.maintenance'), phase);
  }
  t.false(offeredNodeOperations(node('maintenance').build(), [disk()]).includes('node.maintenance-exit'));
  // A node in maintenance may be restarted or shut down (on its maintenance lease).
  t.deepEqual(offeredNodeOperations(node('maintenance').build(), [disk()]), ['node.restart', 'node.shutdown']);
});

const FSID = '6b8f2c1e-0a4d-4e5f-9c3b-2d1e0f9a8b7c';
const label = (fsid: string) => ({ label: { fsid, osdUuid: '1f0e2d3c-4b5a-4968-8776-a5b4c3d2e1f0', osdId: 4 } });
const phase = (p: NonNullable<DiskStatusFields['osd']>['phase']) => ({ osd: { phase: p, reason: 'R', message: '' } });

const opsTable: Array<[string, DiskDoc, string[]]> = [
  [
    'an orphaned OSD is adopted, removed or replaced',
    disk({ osdId: 3, hasFilesystem: true, ...phase('orphaned') }),
    ['ceph.create-osd', 'ceph.remove-osd', 'ceph.replace-osd'],
  ],
  [
    "a disk with this cluster's BlueStore label is adopted (its filesystem is the OSD's)",
    disk({ hasFilesystem: true, ...label(FSID) }),
    ['ceph.create-osd', 'disk.wipe'],
  ],
  ["another cluster's label: only a wipe", disk({ hasFilesystem: true, ...label('another-cluster') }), ['disk.wipe']],
  ['a removal under way: only its undo', disk({ osdId: 3, ...phase('draining') }, { osdRemoval: 'remove' }), ['ceph.create-osd']],
  ['a replacement under way: only its undo', disk({ osdId: 3, ...phase('stopping') }, { osdRemoval: 'replace' }), ['ceph.create-osd']],
  ['an OSD being purged: nothing', disk({ osdId: 3, ...phase('purging') }, { osdRemoval: 'remove' }), []],
  ['a destroyed OSD: its disk may be wiped', disk({ osdId: 3, ...phase('destroyed') }, { osdRemoval: 'replace' }), ['disk.wipe']],
  [
    "a replaced OSD: its disk may be wiped, its label (now the new disk's OSD) not adopted",
    disk({ osdId: null, hasFilesystem: true, ...label(FSID), ...phase('replaced') }, { osdRemoval: 'replace' }),
    ['disk.wipe'],
  ],
  ['a removed OSD: eligible again', disk({ osdId: null, ...phase('removed') }, { osdRemoval: 'remove' }), ['ceph.create-osd', 'disk.wipe']],
];

for (const [title, d, ops] of opsTable) {
  test(`disk operations: ${title}`, (t) => {
    t.deepEqual(offeredDiskOperations(d, active, FSID), ops);
  });
}

test('disk operations: an OSD on a node that is not active can still be removed or replaced, not on an unknown node', (t) => {
  const d = disk({ osdId: 3 }, { osd: true });
  t.deepEqual(offeredDiskOperations(d, node('offline').build()), ['ceph.remove-osd', 'ceph.replace-osd']);
  t.deepEqual(offeredDiskOperations(d, undefined), []);
  t.deepEqual(offeredDiskOperations(disk({ osdId: 3 }), node('offline').build()), ['ceph.remove-osd', 'ceph.replace-osd'], 'orphaned');
});

test('disk adoption: what an adoption does not count, and what it still does', (t) => {
  const orphan = disk({ osdId: 3, hasFilesystem: true, capacityBytes: MIN_OSD_BYTES - 1 });
  t.true(isAdoptable(orphan, undefined));
  t.deepEqual(diskReasons(orphan, active), ['holds-osd', 'has-filesystem', 'too-small']);
  t.deepEqual(declareReasons(orphan, active, undefined), []);
  t.deepEqual(declareReasons(disk({ osdId: 3, isSystem: true }), active, undefined), ['system-disk']);
  t.false(isAdoptable(disk({ osdId: 3 }, { osd: true }), FSID), 'wanted already: nothing to adopt');
  t.false(isAdoptable(disk({ osdId: 3, ...phase('zapping') }, { osdRemoval: 'remove' }), FSID), 'purged: too late');
  t.false(isAdoptable(disk({ hasFilesystem: true, ...label(FSID) }), undefined), 'no cluster fsid known: not ours');
  t.deepEqual(declareReasons(disk({ hasFilesystem: true, ...label('other') }), active, FSID), ['has-filesystem']);
});

test('disk device class: the spec, else nvme by interface, hdd when rotational, else ssd', (t) => {
  t.is(deviceClassOf(disk({ interface: 'nvme', rotational: false })), 'nvme');
  t.is(deviceClassOf(disk({ interface: 'sata', rotational: true })), 'hdd');
  t.is(deviceClassOf(disk({ interface: 'sata', rotational: false })), 'ssd');
  t.is(deviceClassOf(disk({ interface: 'sata', rotational: true }, { deviceClass: 'ssd' })), 'ssd');
});
