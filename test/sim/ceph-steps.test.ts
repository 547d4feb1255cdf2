// The lab agents' Ceph steps: each changes the simulated cluster as the real commands on the
// node would, and the machine's reported daemons follow.
import test from 'ava';
import type { DaemonReport } from '../../src/fleet/types.js';
import { buildMachines, type MachineSpec } from '../../src/sim/machines.js';
import { cephSteps } from '../../src/sim/ceph/steps.js';
import type { Step } from '../../src/sim/steps.js';
import { apiOf, FSID, newCluster, uuidOf } from './ceph-helpers.js';

function lab(nodes = 3) {
  const { cluster, clock } = newCluster();
  const machines = buildMachines(nodes, 42, 3);
  const reports = new Map<number, DaemonReport>(
    machines.map((m) => [m.index, { mon: false, mgr: false, mds: false, rgw: false, osds: [] }]),
  );
  const steps = cephSteps(cluster, {
    hostnameOf: (m) => `node-${m.index}`,
    daemonsOf: (m) => reports.get(m.index) as DaemonReport,
  });
  const run = async (name: string, machine: MachineSpec, args: Record<string, unknown>) => {
    const step = steps.get(name) as Step;
    return step({ machine, args, log: () => {}, after: () => {} });
  };
  const m = (i: number) => machines[i - 1] as MachineSpec;
  return { cluster, clock, machines, reports, run, m, api: apiOf(cluster) };
}

/** Bootstrap on node 1, joins on nodes 2 and 3, a mgr on node 1. */
async function monitors(l: ReturnType<typeof lab>): Promise<void> {
  await l.run('ceph.mon.bootstrap', l.m(1), { fsid: FSID, monName: 'a', addr: l.m(1).ip });
  await l.run('ceph.mon.join', l.m(2), { monName: 'b', addr: l.m(2).ip });
  await l.run('ceph.mon.join', l.m(3), { monName: 'c', addr: l.m(3).ip });
  await l.run('ceph.mgr.start', l.m(1), { name: 'x' });
}

test('mon bootstrap and joins form a quorum and every node reports its monitor', async (t) => {
  const l = lab();
  await monitors(l);
  t.deepEqual((await l.api.quorumStatus()).quorumNames, ['a', 'b', 'c']);
  t.deepEqual(
    [...l.reports.values()].map((r) => r.mon),
    [true, true, true],
  );
  t.true(l.reports.get(1)?.mgr);
  t.false(l.reports.get(2)?.mgr);
  await t.notThrowsAsync(l.run('ceph.mon.bootstrap', l.m(1), { fsid: FSID, monName: 'a', addr: l.m(1).ip }), 'a retried bootstrap');
});

test('a monitor cannot join a cluster without quorum', async (t) => {
  const l = lab();
  await l.run('ceph.mon.bootstrap', l.m(1), { fsid: FSID, monName: 'a', addr: l.m(1).ip });
  l.cluster.killMon('a');
  await t.throwsAsync(l.run('ceph.mon.join', l.m(2), { monName: 'b', addr: l.m(2).ip }), { message: /no quorum/ });
  await t.throwsAsync(l.run('ceph.mon.join', l.m(2), { monName: 'b' }), { message: /argument addr is required/ });
});

test('osd.create puts an OSD on the disk and starts it; the node reports it', async (t) => {
  const l = lab();
  await monitors(l);
  const disk = l.m(1).disks[1];
  const id = await l.api.osdNew(uuidOf(1));
  const result = await l.run('ceph.osd.create', l.m(1), {
    osdId: id,
    uuid: uuidOf(1),
    devicePath: disk?.devicePath,
    sizeBytes: disk?.sizeBytes,
    deviceClass: 'hdd',
  });
  t.deepEqual(result, { osdId: id, host: 'node-1' });
  t.deepEqual(l.reports.get(1)?.osds, [id]);
  const tree = await l.api.osdTree();
  t.deepEqual(
    tree.nodes.filter((n) => n.type === 'osd').map((n) => [n.name, n.host, n.status]),
    [['osd.0', 'node-1', 'up']],
  );
  await t.notThrowsAsync(
    l.run('ceph.osd.create', l.m(1), { osdId: id, uuid: uuidOf(1), devicePath: disk?.devicePath }),
    'a retry on the same disk',
  );
  await t.throwsAsync(l.run('disk.wipe', l.m(1), { devicePath: disk?.devicePath }), { message: /holds osd.0/ });
});

test('osd.create refuses a missing disk, a disk with a filesystem and an unregistered id', async (t) => {
  const l = lab();
  await monitors(l);
  const id = await l.api.osdNew(uuidOf(3));
  const dirty = l.m(3).disks.find((d) => d.hasFilesystem && !d.isSystem);
  t.truthy(dirty, 'machine 3 comes with an old filesystem on its first data disk');
  const args = { osdId: id, uuid: uuidOf(3), devicePath: dirty?.devicePath };
  await t.throwsAsync(l.run('ceph.osd.create', l.m(3), args), { message: `RuntimeError: Device ${dirty?.devicePath} has a filesystem.` });
  await t.throwsAsync(l.run('ceph.osd.create', l.m(3), { ...args, devicePath: '/dev/sdz' }), { message: /no disk at \/dev\/sdz/ });
  await l.run('disk.wipe', l.m(3), { devicePath: dirty?.devicePath });
  t.false(dirty?.hasFilesystem);
  await t.throwsAsync(l.run('ceph.osd.create', l.m(3), { ...args, osdId: 7 }), { message: /osd.7 .* is not in the OSD map/ });
  await l.run('ceph.osd.create', l.m(3), args);
  t.deepEqual(l.reports.get(3)?.osds, [id]);
  t.is(l.cluster.osdmap.osds.get(id)?.sizeBytes, dirty?.sizeBytes, "the size defaults to the disk's");
});

test('a killed OSD comes back only when a step restarts it', async (t) => {
  const l = lab();
  await monitors(l);
  const id = await l.api.osdNew(uuidOf(2));
  await l.run('ceph.osd.create', l.m(2), { osdId: id, uuid: uuidOf(2), devicePath: l.m(2).disks[1]?.devicePath });
  l.cluster.killOsd(id);
  t.is((await l.api.status()).osdUp, 0);
  await t.throwsAsync(l.run('ceph.daemon.restart', l.m(1), { daemon: 'osd', id }), { message: /no osd.0 on node-1/ });
  await l.run('ceph.daemon.restart', l.m(2), { daemon: 'osd', id });
  t.is((await l.api.status()).osdUp, 1);
  await l.run('ceph.daemon.restart', l.m(2), { daemon: 'osd', name: `osd.${id}` });
  t.is((await l.api.status()).osdUp, 1, 'by name works too');
  t.deepEqual(l.reports.get(2)?.osds, [id]);
  l.cluster.killMon('c');
  await l.run('ceph.daemon.restart', l.m(3), { daemon: 'mon', name: 'c' });
  t.deepEqual((await l.api.quorumStatus()).quorumNames, ['a', 'b', 'c']);
});

test('mds and rgw steps start their daemons; the filesystem goes active', async (t) => {
  const l = lab();
  await monitors(l);
  await l.api.poolCreate('cephfs_metadata', 16);
  await l.api.poolCreate('cephfs_data', 16);
  await l.api.fsNew('cephfs', 'cephfs_metadata', 'cephfs_data');
  await l.run('ceph.mds.start', l.m(2), { name: 'b' });
  await l.run('ceph.rgw.start', l.m(3), { name: 'gw1', port: 7480 });
  t.true(l.reports.get(2)?.mds);
  t.true(l.reports.get(3)?.rgw);
  t.deepEqual(
    (await l.api.mdsStat()).filesystems[0]?.daemons.map((d) => [d.name, d.state]),
    [['b', 'up:active']],
  );
  t.true(
    (await l.api.poolList()).some((p) => p.name === 'default.rgw.meta'),
    'radosgw created its pools',
  );
});

test('a host losing power stops its daemons; booting starts again what was running', async (t) => {
  const l = lab();
  await monitors(l);
  const id = await l.api.osdNew(uuidOf(1));
  await l.run('ceph.osd.create', l.m(1), { osdId: id, uuid: uuidOf(1), devicePath: l.m(1).disks[1]?.devicePath });
  l.cluster.hosts.down('node-1');
  t.deepEqual(l.cluster.hosts.report('node-1'), { mon: false, mgr: false, mds: false, rgw: false, nfs: false, osds: [] });
  t.false((await l.api.status()).mgrAvailable);
  l.cluster.hosts.up('node-1');
  t.deepEqual(l.cluster.hosts.report('node-1'), { mon: true, mgr: true, mds: false, rgw: false, nfs: false, osds: [id] });
});

test('ceph.mon.remove stops the monitor and deletes its store; again it does nothing and succeeds', async (t) => {
  const l = lab();
  await monitors(l);
  t.is(l.cluster.monStores.get('c'), 'node-3');
  // Still in the map: the step stops it (a down monitor); its store goes.
  t.like(await l.run('ceph.mon.remove', l.m(3), { monName: 'c' }), { monName: 'c', inMonmap: true, storeRemoved: true });
  t.false(l.reports.get(3)?.mon);
  t.false(l.cluster.monStores.has('c'));
  t.deepEqual((await l.api.quorumStatus()).quorumNames, ['a', 'b']);
  t.like(await l.run('ceph.mon.remove', l.m(3), { monName: 'c' }), { storeRemoved: false });
  // Out of the map first (the loop's order): nothing runs, the store is still deleted.
  await l.api.monRemove('b');
  t.like(await l.run('ceph.mon.remove', l.m(2), { monName: 'b' }), { monName: 'b', inMonmap: false, storeRemoved: true });
  await t.throwsAsync(l.run('ceph.mon.remove', l.m(2), { monName: 'a' }), { message: 'mon.a runs on node-1, not on node-2' });
  await t.throwsAsync(l.run('ceph.mon.remove', l.m(2), {}), { message: 'argument monName is required' });
  // a alone of a and c (stopped): Ceph removed b regardless, which is why the loop gates it.
  t.false(l.cluster.hasQuorum());
});
