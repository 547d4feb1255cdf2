import test from 'ava';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { alive } from '../helpers/process.js';
import { fakeNode } from './helpers.js';

test('ceph host counts a daemon by its pid file only while that pid runs with this node conf, and stops it', async (t) => {
  const n = await fakeNode(t);
  await mkdir(join(n.dir, 'run'), { recursive: true });
  // A stand-in daemon whose command line names the conf, as a real one does (-c conf).
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', '--', '-c', n.host.conf], {
    stdio: 'ignore',
    detached: true,
  });
  t.teardown(() => {
    if (alive(child.pid!)) process.kill(child.pid!, 'SIGKILL');
  });
  await once(child, 'spawn'); // exec'd: its command line is its own now
  await writeFile(n.host.pidFileOf('mon', 'a'), `${child.pid}\n`);
  // A stale pid file pointing at some other process (pid reuse) does not count.
  await writeFile(n.host.pidFileOf('osd', '4'), `${process.pid}\n`);
  await writeFile(n.host.pidFileOf('rgw', 'gw'), '999999999\n');
  t.deepEqual(await n.host.report(), { mon: true, mgr: false, mds: false, rgw: false, nfs: false, osds: [] });
  t.is(await n.host.pidOf('mon', 'a'), child.pid ?? null);
  t.true(await n.host.stop('mon', 'a'));
  t.false(alive(child.pid!));
  await t.throwsAsync(stat(n.host.pidFileOf('mon', 'a')));
  t.false(await n.host.stop('osd', '4'));
  t.true(alive(process.pid));
});

test('ceph host does not count a daemon whose pid file names its --mkfs, which runs for seconds and ends', async (t) => {
  const n = await fakeNode(t);
  await mkdir(join(n.dir, 'run'), { recursive: true });
  // ceph-osd --mkfs writes osd.N's pid file while it makes the store, then exits.
  const mkfs = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', '--', '-c', n.host.conf, '-i', '2', '--mkfs'], {
    stdio: 'ignore',
    detached: true,
  });
  t.teardown(() => {
    if (alive(mkfs.pid!)) process.kill(mkfs.pid!, 'SIGKILL');
  });
  await once(mkfs, 'spawn');
  await writeFile(n.host.pidFileOf('osd', '2'), `${mkfs.pid}\n`);
  t.is(await n.host.pidOf('osd', '2'), null);
  t.deepEqual((await n.host.report()).osds, []);
  t.false(await n.host.stop('osd', '2'), 'nothing to stop: the mkfs is left to finish');
  t.true(alive(mkfs.pid!));
});
