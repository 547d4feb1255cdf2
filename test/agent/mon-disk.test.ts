import test from 'ava';
import { readdirSync } from 'node:fs';
import { mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { agentSteps } from '../../src/agent/steps/index.js';
import { MON_FS_LABEL, parseSignature } from '../../src/agent/mon-disk.js';
import { FSID, fakeNode, type Node } from './helpers.js';

const steps = agentSteps();
const step = (name: string) => steps.get(name)!;
const bootArgs = (devicePath: string) => ({ fsid: FSID, monName: 'a', addr: '10.0.0.1', monPort: 3300, devicePath });
const dataDir = (n: Node): string => n.host.dataDirOf('mon', 'a');
const calls = (n: Node, cmd: string): string[] => n.runner.calls.filter((c) => c.cmd === cmd).map((c) => c.shown);

async function bootstrap(n: Node, device = '/dev/vdb'): Promise<void> {
  n.runner
    .expect((c) => c === 'monmaptool')
    .expect((c, a) => c === 'ceph-mon' && a.includes('--mkfs'))
    .expect((c, a) => c === 'ceph-mon' && a.includes('--public-addrv'));
  await step('ceph.mon.bootstrap')(n.ctx(bootArgs(device)));
  // What the mkfs made, on the disk.
  await writeFile(join(dataDir(n), 'kv_backend'), 'rocksdb\n');
}

test('mon disk bootstrap makes ext4 labelled quarry-mon on a blank disk, mounts it at the data dir and records it before the mkfs', async (t) => {
  const n = await fakeNode(t);
  let mountedAtMkfs: string | undefined;
  let inDirAtMkfs: string[] = [];
  n.runner
    .expect((c) => c === 'monmaptool')
    .expect(
      (c, a) => c === 'ceph-mon' && a.includes('--mkfs'),
      () => {
        mountedAtMkfs = n.disks.mounts.get(dataDir(n));
        inDirAtMkfs = readdirSync(dataDir(n));
        return {};
      },
    )
    .expect((c, a) => c === 'ceph-mon' && a.includes('--public-addrv'));
  await step('ceph.mon.bootstrap')(n.ctx(bootArgs('/dev/vdb')));
  n.runner.verify();
  t.deepEqual(calls(n, 'mkfs.ext4'), [`mkfs.ext4 -F -q -L ${MON_FS_LABEL} -m 0 /dev/vdb`]);
  t.is(mountedAtMkfs, '/dev/vdb', "the monitor's store is made on its disk");
  t.deepEqual(inDirAtMkfs, [], "ext4's lost+found is gone: ceph-mon --mkfs takes a dir with anything in it for a store made already");
  t.deepEqual(calls(n, 'mount'), [`mount -t ext4 -o noatime /dev/vdb ${dataDir(n)}`]);
  const uuid = n.disks.devices.get('/dev/vdb')!.uuid;
  t.deepEqual(JSON.parse(await readFile(n.host.monDisks.recordFile('a'), 'utf8')), { device: '/dev/vdb', uuid, fsType: 'ext4' });
  t.true(n.lines.some((l) => l.message.includes(`ext4 made on /dev/vdb (uuid ${uuid})`)));
});

test('mon disk bootstrap retried finds its filesystem made and mounted and makes neither again', async (t) => {
  const n = await fakeNode(t);
  await bootstrap(n);
  // The retry: the monitor is not running (its start failed, say), the store exists.
  n.runner.expect((c) => c === 'monmaptool').expect((c, a) => c === 'ceph-mon' && a.includes('--public-addrv'));
  await step('ceph.mon.bootstrap')(n.ctx(bootArgs('/dev/vdb')));
  n.runner.verify();
  t.is(calls(n, 'mkfs.ext4').length, 1);
  t.is(calls(n, 'mount').length, 1);
  t.is(n.runner.calls.filter((c) => c.cmd === 'ceph-mon' && c.args.includes('--mkfs')).length, 1, 'the store is not made again');
});

test('mon disk bootstrap refuses a disk with a foreign filesystem, a partition table or an OSD, naming it, and makes and mounts nothing', async (t) => {
  const cases = [
    [{ type: 'xfs', uuid: 'u1', label: 'data' }, /\/dev\/vdc has a xfs filesystem labelled data: not taken for mon\.a's store/],
    [{ ptType: 'gpt' }, /\/dev\/vdc has a gpt partition table/],
    [{ type: 'ceph_bluestore' }, /\/dev\/vdc holds an OSD \(a BlueStore label\)/],
    [{ type: 'ext4', uuid: 'u2', label: 'backup' }, /\/dev\/vdc has a ext4 filesystem labelled backup/],
  ] as const;
  for (const [sig, message] of cases) {
    const n = await fakeNode(t);
    n.disks.add('/dev/vdc', { ...sig });
    await t.throwsAsync(step('ceph.mon.bootstrap')(n.ctx(bootArgs('/dev/vdc'))), { message });
    t.deepEqual([...calls(n, 'mkfs.ext4'), ...calls(n, 'mount'), ...calls(n, 'ceph-mon'), ...calls(n, 'monmaptool')], []);
    await t.throwsAsync(stat(n.host.monDisks.recordFile('a')));
  }
});

test('mon disk bootstrap refuses no disk, a path that is no disk and a disk mounted elsewhere', async (t) => {
  const n = await fakeNode(t);
  await t.throwsAsync(step('ceph.mon.bootstrap')(n.ctx(bootArgs(''))), { message: /mon\.a: no disk was given for its store/ });
  await t.throwsAsync(step('ceph.mon.bootstrap')(n.ctx(bootArgs('/dev/vdz'))), { message: 'no disk at /dev/vdz on this node' });
  n.disks.add('/dev/vdc', { type: 'ext4', uuid: 'u3', label: MON_FS_LABEL });
  n.disks.mounts.set('/srv', '/dev/vdc');
  await t.throwsAsync(step('ceph.mon.bootstrap')(n.ctx(bootArgs('/dev/vdc'))), {
    message: '/dev/vdc is mounted at /srv: not taken for mon.a',
  });
  t.deepEqual([...calls(n, 'mkfs.ext4'), ...calls(n, 'mount'), ...calls(n, 'ceph-mon')], []);
});

test('mon disk of our label from elsewhere is reused when empty and refused when it holds files this node did not put there', async (t) => {
  const n = await fakeNode(t);
  n.disks.add('/dev/vdc', { type: 'ext4', uuid: 'u4', label: MON_FS_LABEL });
  await bootstrap(n, '/dev/vdc');
  t.deepEqual(calls(n, 'mkfs.ext4'), [], 'its filesystem is kept');
  t.like(await n.host.monDisks.recorded('a'), { device: '/dev/vdc', uuid: 'u4' });

  const m = await fakeNode(t);
  m.disks.add('/dev/vdc', { type: 'ext4', uuid: 'u5', label: MON_FS_LABEL });
  // What the disk holds (FakeDisks keeps it here while it is not mounted).
  await mkdir(join(m.dir, 'disks', '_dev_vdc', 'store.db'), { recursive: true });
  await t.throwsAsync(step('ceph.mon.bootstrap')(m.ctx(bootArgs('/dev/vdc'))), {
    message: /\/dev\/vdc holds files this node did not put there \(store\.db\): wipe the disk first/,
  });
  t.is(m.disks.mounts.size, 0, 'unmounted again');
  t.is(await m.host.monDisks.recorded('a'), null);
});

test('mon disk restart mounts the recorded disk first when it is not mounted, then starts the monitor', async (t) => {
  const n = await fakeNode(t);
  await bootstrap(n);
  n.disks.unmountAll(); // a reboot
  let mountedAtStart: string | undefined;
  n.runner.expect(
    (c, a) => c === 'ceph-mon' && a.includes('--public-addrv'),
    () => {
      mountedAtStart = n.disks.mounts.get(dataDir(n));
      return {};
    },
  );
  await step('ceph.daemon.restart')(n.ctx({ daemon: 'mon', name: 'a' }));
  n.runner.verify();
  t.is(mountedAtStart, '/dev/vdb');
  t.is(calls(n, 'mount').length, 2);
  // Mounted already: nothing mounted again.
  n.runner.expect((c, a) => c === 'ceph-mon' && a.includes('--public-addrv'));
  await step('ceph.daemon.restart')(n.ctx({ daemon: 'mon', name: 'a' }));
  t.is(calls(n, 'mount').length, 2);
});

test('mon disk gone: the start fails naming the disk and its uuid, runs no ceph-mon, and the monitor stays not running', async (t) => {
  const n = await fakeNode(t);
  await bootstrap(n);
  const uuid = n.disks.devices.get('/dev/vdb')!.uuid!;
  n.disks.unmountAll();
  n.disks.detach('/dev/vdb');
  const before = calls(n, 'ceph-mon').length;
  const err = await t.throwsAsync(step('ceph.daemon.restart')(n.ctx({ daemon: 'mon', name: 'a' })));
  t.regex(err.message, new RegExp(`the monitor's disk /dev/vdb \\(uuid ${uuid}\\) is gone: mon\\.a is not started on an empty directory`));
  t.is(calls(n, 'ceph-mon').length, before, 'nothing started');
  t.is(n.disks.mounts.size, 0);
  t.false((await n.host.report()).mon);
  // A bootstrap or join retried for it is refused the same way: no store made elsewhere.
  await t.throwsAsync(step('ceph.mon.bootstrap')(n.ctx(bootArgs('/dev/vdb'))), { message: /is gone/ });
  t.is(calls(n, 'mkfs.ext4').length, 1);
});

test('mon disk whose uuid changed at its path is gone; found by its uuid under another name it is mounted from there', async (t) => {
  const n = await fakeNode(t);
  await bootstrap(n);
  const ours = n.disks.devices.get('/dev/vdb')!;
  n.disks.unmountAll();
  // Another disk now at /dev/vdb, blank: not the monitor's.
  n.disks.detach('/dev/vdb');
  n.disks.add('/dev/vdb');
  await t.throwsAsync(step('ceph.daemon.restart')(n.ctx({ daemon: 'mon', name: 'a' })), {
    message: /the monitor's disk \/dev\/vdb .* is gone/,
  });
  // The monitor's disk renamed (/dev/vdd after a reboot): mounted from there, the record follows.
  n.disks.add('/dev/vdd', { type: ours.type!, uuid: ours.uuid!, label: ours.label! });
  n.runner.expect((c, a) => c === 'ceph-mon' && a.includes('--public-addrv'));
  await step('ceph.daemon.restart')(n.ctx({ daemon: 'mon', name: 'a' }));
  n.runner.verify();
  t.is(n.disks.mounts.get(dataDir(n)), '/dev/vdd');
  t.like(await n.host.monDisks.recorded('a'), { device: '/dev/vdd', uuid: ours.uuid });
});

test('mon disk start does not mount over a data dir that holds files, nor start on another mounted disk', async (t) => {
  const n = await fakeNode(t);
  await bootstrap(n);
  n.disks.unmountAll();
  await writeFile(join(dataDir(n), 'kv_backend'), 'made on the bare dir\n');
  await t.throwsAsync(step('ceph.daemon.restart')(n.ctx({ daemon: 'mon', name: 'a' })), {
    message: /holds kv_backend while mon\.a's disk is not mounted there: not mounting over it/,
  });
  n.disks.add('/dev/vdc', { type: 'ext4', uuid: 'other', label: MON_FS_LABEL });
  n.disks.mounts.set(dataDir(n), '/dev/vdc');
  await t.throwsAsync(step('ceph.daemon.restart')(n.ctx({ daemon: 'mon', name: 'a' })), {
    message: /has \/dev\/vdc mounted, not mon\.a's disk \/dev\/vdb/,
  });
});

test('mon disk join for another disk than the one holding the store is refused', async (t) => {
  const n = await fakeNode(t);
  await bootstrap(n);
  n.disks.add('/dev/vdc');
  await t.throwsAsync(step('ceph.mon.join')(n.ctx({ monName: 'a', addr: '10.0.0.1', monPort: 3300, devicePath: '/dev/vdc' })), {
    message: /mon\.a's store is on \/dev\/vdb \(uuid .*\), not on \/dev\/vdc: remove the monitor to move it/,
  });
  t.is(calls(n, 'mkfs.ext4').length, 1);
});

test('mon disk remove deletes the store on the disk, unmounts and erases it and forgets it; a monitor whose disk is gone is removed too', async (t) => {
  const n = await fakeNode(t);
  await bootstrap(n);
  await step('ceph.mon.remove')(n.ctx({ monName: 'a' }));
  t.deepEqual(calls(n, 'umount'), [`umount ${dataDir(n)}`]);
  t.is(n.disks.mounts.size, 0);
  await t.throwsAsync(stat(dataDir(n)));
  t.is(await n.host.monDisks.recorded('a'), null);
  t.deepEqual(calls(n, 'wipefs'), ['wipefs --all /dev/vdb'], 'the disk is blank again, eligible as when it was chosen');
  t.deepEqual(n.disks.devices.get('/dev/vdb'), { majMin: n.disks.devices.get('/dev/vdb')!.majMin });
  t.true(n.lines.some((l) => l.message.includes('its disk /dev/vdb is unmounted and erased')));
  // A monitor made there again gets a new filesystem.
  await bootstrap(n);
  t.is(calls(n, 'mkfs.ext4').length, 2);

  n.disks.unmountAll();
  n.disks.detach('/dev/vdb');
  await step('ceph.mon.remove')(n.ctx({ monName: 'a' }));
  t.is(await n.host.monDisks.recorded('a'), null);
  await t.throwsAsync(stat(dataDir(n)));
  t.is(calls(n, 'wipefs').length, 1, 'a disk that is gone is not erased');
  t.true(n.lines.some((l) => l.message.includes('its disk /dev/vdb is unmounted (it is gone)')));
});

test('mon disk remove of a disk still mounted elsewhere is done all the same, the disk left with its filesystem and said', async (t) => {
  const n = await fakeNode(t);
  await bootstrap(n);
  n.disks.busy.add('/dev/vdb');
  await step('ceph.mon.remove')(n.ctx({ monName: 'a' }));
  t.is(await n.host.monDisks.recorded('a'), null);
  await t.throwsAsync(stat(dataDir(n)));
  t.is(n.disks.devices.get('/dev/vdb')!.label, MON_FS_LABEL);
  t.true(n.lines.some((l) => /its disk \/dev\/vdb is unmounted \(not erased: .*Device or resource busy\)/.test(l.message)));
});

test('mon disk agent start-up mounts every recorded monitor disk and says which one is gone', async (t) => {
  const n = await fakeNode(t);
  await bootstrap(n);
  await writeFile(n.host.monDisks.recordFile('b'), JSON.stringify({ device: '/dev/vdx', uuid: 'gone-uuid', fsType: 'ext4' }));
  await mkdir(n.host.dataDirOf('mon', 'b'), { recursive: true });
  n.disks.unmountAll();
  const said: Array<[string, string]> = [];
  await n.host.mountDisks((level, message) => said.push([level, message]));
  t.is(n.disks.mounts.get(dataDir(n)), '/dev/vdb');
  t.true(said.some(([l, m]) => l === 'info' && m.includes('mon.a: its disk /dev/vdb')));
  t.true(said.some(([l, m]) => l === 'error' && m.includes("the monitor's disk /dev/vdx (uuid gone-uuid) is gone")));
});

test('mon disk blkid export parses to the signature it names', (t) => {
  t.deepEqual(parseSignature('DEVNAME=/dev/vdb\nLABEL=quarry-mon\nUUID=abc\nTYPE=ext4\nUSAGE=filesystem\n'), {
    type: 'ext4',
    uuid: 'abc',
    label: 'quarry-mon',
  });
  t.deepEqual(parseSignature('DEVNAME=/dev/vdb\nPTUUID=x\nPTTYPE=gpt\n'), { ptType: 'gpt' });
  t.deepEqual(parseSignature(''), {});
});
