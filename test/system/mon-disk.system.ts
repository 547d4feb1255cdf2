// A monitor's store on its own disk, for real (docs/real-components.md, "Monitor disk"): on one
// loopback node (node-sandbox.ts) the agent's bootstrap step makes ext4 on a loop device,
// mounts it at the monitor's data dir and makes the store there (findmnt, the store's st_dev);
// a restart through the agent's step mounts it again after it was unmounted; and once the loop
// device is detached, the restart fails naming the disk and its UUID, and no store is made on
// the bare data dir; removing the monitor then forgets the disk. The sandbox's teardown
// unmounts and detaches whatever is left.
import test from 'ava';
import { readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { agentSteps } from '../../src/agent/steps/index.js';
import { MON_FS_LABEL } from '../../src/agent/mon-disk.js';
import { monitorAnswer, sandbox, until, type Sandbox } from './node-sandbox.js';

const steps = agentSteps();
const run = (s: Sandbox, name: string, args: Record<string, unknown>) => steps.get(name)!(s.ctx(args));

async function findmnt(s: Sandbox, dir: string): Promise<{ source: string; fstype: string } | null> {
  const out = await s.runner
    .run('findmnt', ['-J', '-n', '-o', 'SOURCE,FSTYPE', '--mountpoint', dir], { timeoutMs: 10_000 })
    .then((r) => r.stdout)
    .catch(() => '');
  return out ? (JSON.parse(out) as { filesystems: Array<{ source: string; fstype: string }> }).filesystems[0]! : null;
}

const quorum = (s: Sandbox) =>
  until(
    'mon.a in quorum',
    () => s.admin.monStat({ timeoutMs: 10_000 }),
    (m) => m.quorum.some((q) => q.name === 'a'),
  );

test('mon disk holds the store: bootstrap mounts it at the data dir, a restart mounts it again, and a detached disk fails the start without a store made elsewhere', async (t) => {
  const s = await sandbox(t);
  const disk = await s.addDisk(1);
  const data = s.host.dataDirOf('mon', 'a');

  await run(s, 'ceph.mon.bootstrap', { fsid: s.fsid, monName: 'a', addr: '127.0.0.1', monPort: s.port, devicePath: disk });
  await monitorAnswer(s);
  await s.importAdmin();
  await quorum(s);
  t.deepEqual(await findmnt(s, data), { source: disk, fstype: 'ext4' });
  const label = (await s.runner.run('blkid', ['-p', '-s', 'LABEL', '-o', 'value', disk], { timeoutMs: 10_000 })).stdout.trim();
  t.is(label, MON_FS_LABEL);
  // store.db is on the disk: the same filesystem as the mount point, not the parent's.
  const [store, mount, parent] = await Promise.all([join(data, 'store.db'), data, join(data, '..')].map((p) => stat(p)));
  t.is(store!.dev, mount!.dev);
  t.not(store!.dev, parent!.dev);

  // Stopped and unmounted (as a reboot leaves it): the agent's restart mounts it first.
  t.true(await s.host.stop('mon', 'a'));
  await s.runner.run('umount', [data], { timeoutMs: 30_000 });
  t.deepEqual(await readdir(data), [], 'the bare data dir is empty');
  await run(s, 'ceph.daemon.restart', { daemon: 'mon', name: 'a' });
  t.deepEqual(await findmnt(s, data), { source: disk, fstype: 'ext4' });
  t.truthy(await s.host.pidOf('mon', 'a'));
  await quorum(s);

  // The disk gone: the start fails, naming it; the monitor is not started on the bare dir.
  const uuid = (await s.host.monDisks.recorded('a'))!.uuid;
  t.true(await s.host.stop('mon', 'a'));
  await s.runner.run('umount', [data], { timeoutMs: 30_000 });
  await s.runner.run('losetup', ['-d', disk], { timeoutMs: 10_000 });
  const err = await t.throwsAsync(run(s, 'ceph.daemon.restart', { daemon: 'mon', name: 'a' }));
  t.true(err.message.includes(`the monitor's disk ${disk} (uuid ${uuid}) is gone`), err.message);
  t.is(await s.host.pidOf('mon', 'a'), null);
  t.false((await s.host.report()).mon);
  t.is(await findmnt(s, data), null);
  t.deepEqual(await readdir(data), [], 'no store made on the bare data dir');
  // Nor by a bootstrap retried for it.
  await t.throwsAsync(run(s, 'ceph.mon.bootstrap', { fsid: s.fsid, monName: 'a', addr: '127.0.0.1', monPort: s.port, devicePath: disk }), {
    message: /is gone/,
  });
  t.deepEqual(await readdir(data), []);
  // The way out: the monitor removed, its gone disk forgotten.
  await run(s, 'ceph.mon.remove', { monName: 'a' });
  t.is(await s.host.monDisks.recorded('a'), null);
  await t.throwsAsync(stat(data));
});
