// The lab's disks for OSD day 2: a new disk plugged in, a dead one, a wipe that leaves a
// signature behind, the BlueStore label a disk carries while it holds an OSD, and the node
// steps that act on them (stop, verified zap and wipe, create adopting its own label).
import test from 'ava';
import type { MasterLink } from '../../src/fleet/protocol.js';
import { Lab, STICKY_LABEL } from '../../src/sim/lab.js';
import { cephSteps } from '../../src/sim/ceph/steps.js';
import type { Step } from '../../src/sim/steps.js';
import { apiOf, FSID, newCluster, uuidOf } from './ceph-helpers.js';

/** A lab that is never started: its machines have hostnames as if booted, and the Ceph steps
 * run in-process against its cluster, with three monitors and a mgr. */
function rig() {
  const { cluster, clock } = newCluster();
  const lab = new Lab({} as MasterLink, { nodes: 3, link: 'inprocess', disksPerMachine: 3, ceph: cluster });
  for (const m of lab.machines) m.hostname = `node-${m.spec.index}`;
  const steps = cephSteps(cluster, {
    hostnameOf: (s) => lab.machine(s.index).hostname,
    daemonsOf: (s) => lab.machine(s.index).daemons,
  });
  const logs: string[] = [];
  const run = (name: string, i: number, args: Record<string, unknown>) =>
    (steps.get(name) as Step)({ machine: lab.machine(i).spec, args, log: (_l, m) => void logs.push(m), after: () => {} });
  return { cluster, clock, lab, run, logs, api: apiOf(cluster) };
}

async function withCluster(r: ReturnType<typeof rig>) {
  await r.run('ceph.mon.bootstrap', 1, { fsid: FSID, monName: 'a', addr: r.lab.machine(1).spec.ip });
  await r.run('ceph.mgr.start', 1, { name: 'x' });
}

/** osd new + osd.create on node 1's first data disk: its id, uuid and device path. */
async function osdOnNode1(r: ReturnType<typeof rig>, n = 1) {
  const disk = r.lab.machine(1).spec.disks[n];
  const devicePath = disk?.devicePath ?? '';
  const uuid = uuidOf(n);
  const osdId = await r.api.osdNew(uuid);
  await r.run('ceph.osd.create', 1, { osdId, uuid, devicePath });
  return { osdId, uuid, devicePath, serial: disk?.serial ?? '' };
}

const reported = (r: ReturnType<typeof rig>, serial: string) =>
  r.lab
    .machine(1)
    .report()
    .disks.find((d) => d.serial === serial);

test('lab insertDisk: a blank disk appears in the next report, at the first free device path', (t) => {
  const { lab } = rig();
  const before = lab.machine(2).report().disks.length;
  const hdd = lab.insertDisk(2);
  const nvme = lab.insertDisk(2, { serial: 'NEW-NVME', interface: 'nvme', sizeBytes: 1_600_000_000_000 });
  const disks = lab.machine(2).report().disks;
  t.is(disks.length, before + 2);
  t.like(
    disks.find((d) => d.serial === hdd.serial),
    { devicePath: '/dev/sde', rotational: true, interface: 'sata', hasFilesystem: false, isSystem: false },
  );
  t.like(
    disks.find((d) => d.serial === 'NEW-NVME'),
    { devicePath: nvme.devicePath, rotational: false, sizeBytes: 1_600_000_000_000 },
  );
  t.is(disks.find((d) => d.serial === 'NEW-NVME')?.bluestore, undefined);
  t.throws(() => lab.insertDisk(2, { serial: 'NEW-NVME' }), { message: /has a disk NEW-NVME already/ });
  t.throws(() => lab.insertDisk(2, { devicePath: '/dev/sdb' }), { message: /at \/dev\/sdb already/ });
});

test('a disk holding an OSD reports its BlueStore label, also once the OSD is stopped, until it is zapped', async (t) => {
  const r = rig();
  await withCluster(r);
  const o = await osdOnNode1(r);
  t.deepEqual(reported(r, o.serial)?.bluestore, { fsid: FSID, osdUuid: o.uuid, osdId: o.osdId });
  t.true(reported(r, o.serial)?.hasFilesystem, 'blkid sees ceph_bluestore');
  await t.throwsAsync(r.run('ceph.osd.zap', 1, { osdId: o.osdId, devicePath: o.devicePath }), { message: /still runs: stop it/ });
  t.deepEqual(await r.run('ceph.osd.stop', 1, { osdId: o.osdId }), { osdId: o.osdId });
  t.false((await r.api.osdDump()).osds.find((x) => x.id === o.osdId)?.up);
  t.deepEqual(await r.run('ceph.osd.stop', 1, { osdId: o.osdId }), { osdId: o.osdId }, 'stopping again is success');
  t.like(reported(r, o.serial)?.bluestore, { osdId: o.osdId });
  t.deepEqual(await r.run('ceph.osd.zap', 1, { osdId: o.osdId, devicePath: o.devicePath }), { devicePath: o.devicePath });
  t.like(reported(r, o.serial), { hasFilesystem: false, bluestore: undefined });
  t.true(r.logs.some((l) => /read back clean/.test(l)));
});

test('a sticky signature makes the verified zap and wipe fail naming it; the disk stays reported dirty', async (t) => {
  const r = rig();
  await withCluster(r);
  const o = await osdOnNode1(r);
  await r.run('ceph.osd.stop', 1, { osdId: o.osdId });
  r.lab.stickySignature(1, o.serial);
  const err = await t.throwsAsync(r.run('ceph.osd.zap', 1, { osdId: o.osdId, devicePath: o.devicePath }));
  t.true(err.message.includes(STICKY_LABEL), err.message);
  t.like(reported(r, o.serial), { hasFilesystem: true, bluestore: { fsid: FSID, osdUuid: o.uuid, osdId: o.osdId } });
  await r.api.osdPurge(o.osdId);
  await t.throwsAsync(r.run('disk.wipe', 1, { devicePath: o.devicePath }), {
    message: /not clean after the wipe: the read-back found a BlueStore label/,
  });
  r.lab.stickySignature(1, o.serial, 'a gpt partition table at the end of the disk');
  await t.throwsAsync(r.run('disk.wipe', 1, { devicePath: o.devicePath }), { message: /found a gpt partition table/ });
  r.lab.stickySignature(1, o.serial, null);
  await r.run('disk.wipe', 1, { devicePath: o.devicePath });
  t.like(reported(r, o.serial), { hasFilesystem: false, bluestore: undefined });
});

test('disk.wipe refuses a disk whose OSD exists, and wipes one whose OSD is destroyed', async (t) => {
  const r = rig();
  await withCluster(r);
  const o = await osdOnNode1(r);
  await r.run('ceph.osd.stop', 1, { osdId: o.osdId });
  await t.throwsAsync(r.run('disk.wipe', 1, { devicePath: o.devicePath }), { message: /holds osd\.0: destroy the OSD/ });
  await r.api.osdDestroy(o.osdId);
  t.deepEqual(await r.run('disk.wipe', 1, { devicePath: o.devicePath }), { devicePath: o.devicePath });
  t.like(reported(r, o.serial), { hasFilesystem: false, bluestore: undefined });
});

test('osd.create adopts a disk whose BlueStore label has its uuid: no mkfs, the OSD starts; another uuid is refused', async (t) => {
  const r = rig();
  await withCluster(r);
  const o = await osdOnNode1(r);
  await r.run('ceph.osd.stop', 1, { osdId: o.osdId });
  t.is(await r.api.osdNew(o.uuid), o.osdId, 'osd new of the label uuid: the id Ceph knows');
  r.logs.length = 0;
  t.deepEqual(await r.run('ceph.osd.create', 1, { osdId: o.osdId, uuid: o.uuid, devicePath: o.devicePath }), {
    osdId: o.osdId,
    host: 'node-1',
  });
  t.true((await r.api.osdDump()).osds.find((x) => x.id === o.osdId)?.up);
  t.true(
    r.logs.some((l) => /adopted \(no mkfs\)/.test(l)),
    r.logs.join('\n'),
  );
  t.deepEqual(r.lab.machine(1).daemons.osds, [o.osdId]);
  // A second OSD offered the same disk: the label is someone else's.
  const other = await r.api.osdNew(uuidOf(9));
  await t.throwsAsync(r.run('ceph.osd.create', 1, { osdId: other, uuid: uuidOf(9), devicePath: o.devicePath }), {
    message: /already holds osd\.0/,
  });
  // The same, once Ceph has forgotten the first OSD (purged) but its label is still there.
  await r.run('ceph.osd.stop', 1, { osdId: o.osdId });
  await r.api.osdPurge(o.osdId);
  await t.throwsAsync(r.run('ceph.osd.create', 1, { osdId: other, uuid: uuidOf(9), devicePath: o.devicePath }), {
    message: new RegExp(`carries BlueStore of osd\\.0 \\(osd uuid ${o.uuid}, cluster ${FSID}\\), not of ${uuidOf(9)}: zap`),
  });
});

test('lab killDisk: the disk leaves the report and its OSD crashes (down, still in)', async (t) => {
  const r = rig();
  await withCluster(r);
  const o = await osdOnNode1(r);
  r.lab.killDisk(1, o.serial);
  t.is(reported(r, o.serial), undefined);
  t.like(
    (await r.api.osdDump()).osds.find((x) => x.id === o.osdId),
    { up: false, in: true },
  );
  t.deepEqual(r.lab.machine(1).report().daemons.osds, []);
  await t.throwsAsync(r.run('ceph.osd.create', 1, { osdId: o.osdId, uuid: o.uuid, devicePath: o.devicePath }), { message: /no disk at/ });
});

test('replacement: the dead disk OSD destroyed, a new disk takes its id and CRUSH position', async (t) => {
  const r = rig();
  await withCluster(r);
  const o = await osdOnNode1(r);
  const node = (await r.api.osdTree()).nodes.find((n) => n.id === o.osdId);
  r.lab.killDisk(1, o.serial);
  await r.api.osdOut([o.osdId]);
  await r.api.osdDestroy(o.osdId);
  const fresh = r.lab.insertDisk(1, { rotational: false });
  const uuid = uuidOf(77);
  t.is(await r.api.osdNew(uuid, { id: o.osdId, deviceClass: 'ssd' }), o.osdId);
  await r.run('ceph.osd.create', 1, { osdId: o.osdId, uuid, devicePath: fresh.devicePath, deviceClass: 'ssd' });
  const after = (await r.api.osdTree()).nodes.find((n) => n.id === o.osdId);
  t.like(after, { host: node?.host, status: 'up', crushWeight: node?.crushWeight });
  t.deepEqual(reported(r, fresh.serial)?.bluestore, { fsid: FSID, osdUuid: uuid, osdId: o.osdId });
  t.like(
    (await r.api.osdDump()).osds.find((x) => x.id === o.osdId),
    { up: true, in: true },
  );
});

test('an OSD destroyed while its host was down is not started when the host boots again', async (t) => {
  const r = rig();
  await withCluster(r);
  const o = await osdOnNode1(r, 2);
  r.cluster.hosts.down('node-1');
  // (The only monitor is on node 1 too: the cluster's own call, as the others would make it.)
  r.cluster.destroyOsdKeepingId(o.osdId);
  t.notThrows(() => r.cluster.hosts.up('node-1'));
  t.like(
    (await r.api.osdDump()).osds.find((x) => x.id === o.osdId),
    { up: false, state: ['destroyed', 'exists'] },
  );
  t.true(r.cluster.mons.get('a')?.running, 'the rest of the host came back');
});

test('a daemon restart of an OSD whose disk died fails naming the missing disk', async (t) => {
  const r = rig();
  await withCluster(r);
  const o = await osdOnNode1(r);
  r.lab.killDisk(1, o.serial);
  await t.throwsAsync(r.run('ceph.daemon.restart', 1, { daemon: 'osd', id: o.osdId }), {
    message: `no disk at ${o.devicePath} on this machine`,
  });
  t.false((await r.api.osdDump()).osds.find((x) => x.id === o.osdId)?.up);
});
