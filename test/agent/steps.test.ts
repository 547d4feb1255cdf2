import test from 'ava';
import { readFileSync } from 'node:fs';
import { mkdir, readFile, readdir, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { agentSteps } from '../../src/agent/steps/index.js';
import { ADMIN_KEY, FSID, MASTER_CONF, MON_KEY, fakeNode, keyring } from './helpers.js';

const steps = agentSteps();
const step = (name: string) => steps.get(name)!;
// Read inside a FakeRunner reply: the mkfs inputs exist only while the command runs.
const require_ = (p: string): string => readFileSync(p, 'utf8');
const OSD_UUID = '0b5ad0e4-5a61-4a7e-9f0e-7a3d2f1c9b10';
const OSD_KEY = 'AQBAbAJrAAAAABAAosdosdosdosdosdosdosdosdos0==';

test('mon bootstrap makes a monmap of itself, mkfs with the mon. key alone, and starts the monitor', async (t) => {
  const n = await fakeNode(t);
  // The master's conf already names the monitors that will join later.
  n.master.conf = MASTER_CONF.replace('[global]\n', '[global]\nmon_initial_members = a, b, c\n');
  let keyringText = '';
  n.runner
    .expect(
      (c, a) =>
        c === 'monmaptool' &&
        a
          .join(' ')
          .startsWith(
            `--create --fsid ${FSID} --addv a [v2:10.0.0.1:3300,v1:10.0.0.1:6789] --set-min-mon-release pacific --enable-all-features `,
          ),
    )
    .expect(
      (c, a) => c === 'ceph-mon' && a.includes('--mkfs'),
      (call) => {
        const args = call.args as string[];
        t.deepEqual(args.slice(0, 5), ['-c', n.host.conf, '--mkfs', '-i', 'a']);
        t.deepEqual(args.slice(-2), ['--mon-initial-members', 'a'], 'the first monitor waits for no other');
        keyringText = require_(args[args.indexOf('--keyring') + 1]!);
        return {};
      },
    )
    .expect('ceph-mon', [
      '-c',
      n.host.conf,
      '-i',
      'a',
      '--public-addrv',
      '[v2:10.0.0.1:3300,v1:10.0.0.1:6789]',
      '--mon-initial-members',
      'a',
    ]);
  const out = await step('ceph.mon.bootstrap')(
    n.ctx({ fsid: FSID, monName: 'a', addr: '10.0.0.1', monPort: 3300, devicePath: '/dev/vdb' }),
  );
  n.runner.verify();
  // Issue #12: the mkfs keyring holds mon. alone, even when the master would hand this node
  // client.admin (an admin node): the master imports client.admin into the cluster itself.
  t.true(keyringText.includes(`[mon.]\n\tkey = ${MON_KEY}`));
  t.false(keyringText.includes('client.admin') || keyringText.includes(ADMIN_KEY));
  t.deepEqual(out, { fsid: FSID, monName: 'a', addr: '[v2:10.0.0.1:3300,v1:10.0.0.1:6789]', initialMembers: ['a'] });
  // The mkfs inputs (secrets) are gone; the conf is the master's followed by this node's paths.
  t.deepEqual(
    (await readdir(join(n.dir, 'run'))).filter((f) => f.startsWith('mkfs-')),
    [],
  );
  const conf = await readFile(n.host.conf, 'utf8');
  t.true(conf.startsWith(n.master.conf));
  t.regex(conf, /ms_bind_port_min = 6800\nms_bind_port_max = 6899/);
  t.regex(conf, /\[global\]\nosd_memory_target = 939524096\n$/);
});

test('mon bootstrap of one of several first monitors makes the same monmap naming them all', async (t) => {
  const n = await fakeNode(t);
  const members = [
    { nodeId: 'n-a', name: 'a', addr: '10.0.0.1' },
    { nodeId: 'n-b', name: 'b', addr: '10.0.0.2' },
    { nodeId: 'n-c', name: 'c', addr: '10.0.0.3' },
  ];
  n.runner
    .expect(
      (c, a) =>
        c === 'monmaptool' &&
        a
          .join(' ')
          .startsWith(
            `--create --fsid ${FSID} --addv a [v2:10.0.0.1:3300,v1:10.0.0.1:6789] --addv b [v2:10.0.0.2:3300,v1:10.0.0.2:6789] --addv c [v2:10.0.0.3:3300,v1:10.0.0.3:6789] --set-min-mon-release pacific `,
          ),
    )
    .expect(
      (c, a) => c === 'ceph-mon' && a.includes('--mkfs') && a.slice(-2).join(' ') === '--mon-initial-members a,b,c' && a.includes('b'),
    )
    .expect('ceph-mon', [
      '-c',
      n.host.conf,
      '-i',
      'b',
      '--public-addrv',
      '[v2:10.0.0.2:3300,v1:10.0.0.2:6789]',
      '--mon-initial-members',
      'a,b,c',
    ]);
  const out = await step('ceph.mon.bootstrap')(
    n.ctx({ fsid: FSID, monName: 'b', addr: '10.0.0.2', monPort: 3300, initialMembers: members, devicePath: '/dev/vdb' }),
  );
  n.runner.verify();
  t.deepEqual(out, { fsid: FSID, monName: 'b', addr: '[v2:10.0.0.2:3300,v1:10.0.0.2:6789]', initialMembers: ['a', 'b', 'c'] });
});

test('mon bootstrap refuses a first monmap that does not name this monitor, or is malformed', async (t) => {
  const n = await fakeNode(t);
  await t.throwsAsync(
    step('ceph.mon.bootstrap')(
      n.ctx({ fsid: FSID, monName: 'd', addr: '10.0.0.4', monPort: 3300, initialMembers: [{ name: 'a', addr: '10.0.0.1' }] }),
    ),
    { message: /mon\.d is not one of the first monitors \(a\)/ },
  );
  await t.throwsAsync(
    step('ceph.mon.bootstrap')(n.ctx({ fsid: FSID, monName: 'a', addr: '10.0.0.1', monPort: 3300, initialMembers: [{ name: 'a' }] })),
    { message: /initialMembers must be a non-empty list/ },
  );
  t.deepEqual(n.runner.calls, []);
});

test('mon bootstrap fails with the daemon log tail when mkfs fails without stderr', async (t) => {
  const n = await fakeNode(t);
  n.runner.expect((c) => c === 'monmaptool').expect((c) => c === 'ceph-mon', { exitCode: 1 });
  await mkdir(join(n.dir, 'log'), { recursive: true });
  await writeFile(join(n.dir, 'log', 'ceph-mon.a.log'), 'starting\nmkdir(/x/mon/ceph-a) : (2) No such file or directory\n');
  const err = await t.throwsAsync(
    step('ceph.mon.bootstrap')(n.ctx({ fsid: FSID, monName: 'a', addr: '10.0.0.1', monPort: 3300, devicePath: '/dev/vdb' })),
  );
  t.regex(err.message, /--mkfs -i a .* exited with 1; its log ends with:\nstarting\nmkdir\(\/x\/mon\/ceph-a\) : \(2\) No such file/);
});

test('mon bootstrap refuses missing arguments before running anything', async (t) => {
  const n = await fakeNode(t);
  await t.throwsAsync(step('ceph.mon.bootstrap')(n.ctx({ monName: 'a', addr: '10.0.0.1', monPort: 3300 })), {
    message: 'argument fsid is required',
  });
  t.deepEqual(n.runner.calls, []);
});

test('mon join mkfs with the master monmap and only the mon. key', async (t) => {
  const n = await fakeNode(t);
  n.runner
    .expect(
      (c, a) => c === 'ceph-mon' && a.includes('--mkfs'),
      (call) => {
        const a = call.args as string[];
        t.is(require_(a[a.indexOf('--monmap') + 1]!), 'monmap');
        t.is(require_(a[a.indexOf('--keyring') + 1]!), `[mon.]\n\tkey = ${MON_KEY}\n`);
        return {};
      },
    )
    .expect('ceph-mon', ['-c', n.host.conf, '-i', 'b', '--public-addrv', '[v2:10.0.0.2:3300,v1:10.0.0.2:6789]']);
  await step('ceph.mon.join')(n.ctx({ monName: 'b', addr: '10.0.0.2', monPort: 3300, devicePath: '/dev/vdb' }));
  n.runner.verify();
});

test('osd create makes bluestore on the whole device with the key from the master, then starts it', async (t) => {
  const n = await fakeNode(t);
  n.master.keys.push(keyring('osd.3', OSD_KEY));
  const dev = join(n.dir, 'disk'); // stands for /dev/sdb: only its existence is checked
  await writeFile(dev, '');
  n.runner
    .expect('blkid', ['-p', '-o', 'export', dev], { exitCode: 2 })
    .expect('ceph-osd', ['-c', n.host.conf, '-i', '3', '--mkfs', '--osd-uuid', OSD_UUID, '--bluestore-block-path', dev])
    .expect('ceph-osd', ['-c', n.host.conf, '-i', '3']);
  t.deepEqual(await step('ceph.osd.create')(n.ctx({ osdId: 3, uuid: OSD_UUID, devicePath: dev, deviceClass: 'hdd' })), {
    osdId: 3,
    devicePath: dev,
  });
  n.runner.verify();
  const key = join(n.dir, 'data', 'osd', 'ceph-3', 'keyring');
  t.is(await readFile(key, 'utf8'), `[osd.3]\n\tkey = ${OSD_KEY}\n`);
  t.is((await stat(key)).mode & 0o777, 0o600);
  // The key never reached the run's log.
  t.false(n.lines.some((l) => l.message.includes(OSD_KEY)));
});

test('osd create refuses a device that carries a filesystem, and makes nothing', async (t) => {
  const n = await fakeNode(t);
  n.master.keys.push(keyring('osd.3', OSD_KEY));
  const dev = join(n.dir, 'disk');
  await writeFile(dev, '');
  n.runner.expect('blkid', ['-p', '-o', 'export', dev], { stdout: `DEVNAME=${dev}\nTYPE=xfs\n` });
  await t.throwsAsync(step('ceph.osd.create')(n.ctx({ osdId: 3, uuid: OSD_UUID, devicePath: dev })), {
    message: `${dev} is not blank: it has xfs; wipe it first`,
  });
  n.runner.verify();
});

test('osd create without a key from the master fails before mkfs', async (t) => {
  const n = await fakeNode(t);
  const dev = join(n.dir, 'disk');
  await writeFile(dev, '');
  n.runner.expect('blkid', ['-p', '-o', 'export', dev], { exitCode: 2 });
  await t.throwsAsync(step('ceph.osd.create')(n.ctx({ osdId: 4, uuid: OSD_UUID, devicePath: dev })), { message: /holds no key of osd\.4/ });
  n.runner.verify();
});

test('mgr, mds and rgw start with their own keys; restart starts the same command again', async (t) => {
  const n = await fakeNode(t);
  n.master.keys.push(keyring('mgr.n1', 'AQmgr=='), keyring('mds.n1', 'AQmds=='), keyring('client.rgw.n1', 'AQrgw=='));
  n.runner
    .expect('ceph-mgr', ['-c', n.host.conf, '-i', 'n1'])
    .expect('ceph-mds', ['-c', n.host.conf, '-i', 'n1'])
    .expect('radosgw', [
      '-c',
      n.host.conf,
      '-n',
      'client.rgw.n1',
      '--rgw-frontends',
      'beast endpoint=10.0.0.1:7480',
      '--rgw-thread-pool-size',
      '64',
    ])
    .expect('radosgw', [
      '-c',
      n.host.conf,
      '-n',
      'client.rgw.n1',
      '--rgw-frontends',
      'beast endpoint=10.0.0.1:7480',
      '--rgw-thread-pool-size',
      '64',
    ]);
  await step('ceph.mgr.start')(n.ctx({ name: 'n1', fsid: FSID }));
  await step('ceph.mds.start')(n.ctx({ name: 'n1', fsid: FSID }));
  await step('ceph.rgw.start')(n.ctx({ name: 'n1', fsid: FSID, port: 7480 }));
  await step('ceph.daemon.restart')(n.ctx({ daemon: 'rgw', name: 'n1' }));
  n.runner.verify();
  t.is(await readFile(join(n.dir, 'data', 'mgr', 'ceph-n1', 'keyring'), 'utf8'), '[mgr.n1]\n\tkey = AQmgr==\n');
  t.is(await readFile(join(n.dir, 'data', 'keyring', 'ceph.client.rgw.n1.keyring'), 'utf8'), '[client.rgw.n1]\n\tkey = AQrgw==\n');
});

test('a start for another cluster, an unknown daemon and a restart of nothing are refused', async (t) => {
  const n = await fakeNode(t);
  n.master.keys.push(keyring('mgr.n1', 'AQmgr=='));
  await t.throwsAsync(step('ceph.mgr.start')(n.ctx({ name: 'n1', fsid: 'other' })), {
    message: `the step is for cluster other, the master's ceph.conf is for ${FSID}`,
  });
  await t.throwsAsync(step('ceph.daemon.restart')(n.ctx({ daemon: 'iscsi', name: 'n1' })), { message: "unknown daemon type 'iscsi'" });
  await t.throwsAsync(step('ceph.daemon.restart')(n.ctx({ daemon: 'osd', id: 2 })), { message: 'osd.2 was never started on this node' });
  t.deepEqual(n.runner.calls, []);
});

test('rgw stop and mon remove of daemons that do not run succeed; mon remove deletes the store', async (t) => {
  const n = await fakeNode(t);
  await mkdir(join(n.dir, 'data', 'mon', 'ceph-a'), { recursive: true });
  await step('ceph.rgw.stop')(n.ctx({ name: 'n1' }));
  await step('ceph.mon.remove')(n.ctx({ monName: 'a' }));
  await t.throwsAsync(stat(join(n.dir, 'data', 'mon', 'ceph-a')));
  t.deepEqual(n.runner.calls, []);
  t.deepEqual(await n.host.report(), { mon: false, mgr: false, mds: false, rgw: false, nfs: false, osds: [] });
});

test('mgr and mds stop of daemons that do not run succeed and run nothing, answering their name', async (t) => {
  const n = await fakeNode(t);
  t.deepEqual(await step('ceph.mgr.stop')(n.ctx({ name: 'n1' })), { name: 'n1' });
  t.deepEqual(await step('ceph.mds.stop')(n.ctx({ name: 'n1' })), { name: 'n1' });
  await t.throwsAsync(step('ceph.mds.stop')(n.ctx({})), { message: /name/ });
  t.deepEqual(n.runner.calls, []);
});
