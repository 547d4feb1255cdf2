import test from 'ava';
import type { ExecutionContext } from 'ava';
import { spawn } from 'node:child_process';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ganeshaConf, type GaneshaExport } from '../../src/agent/ganesha-conf.js';
import { agentSteps as registry } from '../../src/agent/steps/index.js';
import { DAEMONS as CATALOGUE } from '../../src/catalogue/index.js';
import type { FakeCall, FakeReply } from '../helpers/fake-runner.js';
import { alive } from '../helpers/process.js';
import { FSID, fakeNode, keyring, type Node } from './helpers.js';

// Through the agent's registry, as a run reaches them: arguments checked against the catalogue first.
const startNfs = registry().get(CATALOGUE.nfs.steps.start)!;
const stopNfs = registry().get(CATALOGUE.nfs.steps.stop)!;
const NFS_KEY = 'AQBAbAJrAAAAABAAnfsnfsnfsnfsnfsnfsnfsnfsnf0==';
const SERVING = 'nfs_start :NFS STARTUP :EVENT :             NFS SERVER INITIALIZED\n';
const NO_EXPORT = [
  'create_export :FSAL :CRIT :Unable to mount Ceph cluster for /.',
  'fsal_cfg_commit :CONFIG :CRIT :Could not create export for (/cephfs) to (/)',
]
  .map((l) => `24/11/2026 16:19:13 : epoch 6b05b8f3 : n1 : nfs-ganesha-42[main] ${l}\n`)
  .join('');

const good: GaneshaExport = {
  name: 'n1',
  fs: 'cephfs',
  path: '/',
  port: 2049,
  bindAddr: '10.0.0.1',
  cephConf: '/var/lib/ceph/ceph.conf',
  recoveryRoot: '/var/lib/ceph/nfs/ceph-n1/recovery',
};

/** What ganesha.nfsd does when run: forks a daemon (a stand-in whose command line names the
 * config, as the real one's does), which writes its pid file and logs `log` when it is up. */
function ganesha(t: ExecutionContext, n: Node, log: string): (call: FakeCall) => FakeReply {
  return (call) => {
    const args = call.args as string[];
    const at = (flag: string): string => args[args.indexOf(flag) + 1]!;
    const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', '--', ...args], { stdio: 'ignore', detached: true });
    t.teardown(() => {
      if (alive(child.pid!)) process.kill(child.pid!, 'SIGKILL');
    });
    mkdirSync(join(n.dir, 'run'), { recursive: true });
    writeFileSync(at('-p'), `${child.pid}\n`);
    appendFileSync(at('-L'), log);
    return {};
  };
}

test('ganesha conf exports the filesystem over NFSv4 with the gateway user, every value quoted', (t) => {
  const conf = ganeshaConf({ ...good, path: '/shares/a_b-1.x' });
  for (const line of [
    'Protocols = 4;',
    'NFS_Port = 2049;',
    'Bind_addr = 10.0.0.1;',
    'RecoveryBackend = fs;',
    'RecoveryRoot = "/var/lib/ceph/nfs/ceph-n1/recovery";',
    'Path = "/shares/a_b-1.x";',
    'Pseudo = "/cephfs";',
    'User_Id = "nfs.n1";',
    'Filesystem = "cephfs";',
    'Ceph_Conf = "/var/lib/ceph/ceph.conf";',
  ]) {
    t.true(conf.includes(`\t${line}\n`), line);
  }
  t.false(/key|secret/i.test(conf.replace(/Active_krb5/g, '')), 'no key in the config: the Ceph client reads it from the keyring file');
});

test('ganesha conf refuses names, paths, ports and addresses that could leave their quotes or mean something else', (t) => {
  const refused: Array<[Partial<GaneshaExport>, RegExp]> = [
    [{ name: 'n1"; }\nEXPORT {' }, /gateway name 'n1\\"; }\\nEXPORT \{' is not a plain name/],
    [{ name: '' }, /gateway name '' is not a plain name/],
    [{ fs: 'ceph fs' }, /filesystem name 'ceph fs' is not a plain name/],
    [{ fs: '-x' }, /filesystem name/],
    [{ path: 'shares' }, /export path 'shares' must be absolute/],
    [{ path: '/a/../b' }, /export path/],
    [{ path: '/a//b' }, /export path/],
    [{ path: '/a/' }, /export path/],
    [{ path: '/a"b' }, /export path/],
    [{ port: 0 }, /port 0 is not a TCP port/],
    [{ port: 65536 }, /port 65536/],
    [{ bindAddr: '10.0.0.1; Foo = 1' }, /bind address/],
    [{ cephConf: '/etc/ceph/"x' }, /ceph.conf path/],
    [{ recoveryRoot: 'relative' }, /recovery root path/],
  ];
  for (const [bad, message] of refused) t.throws(() => ganeshaConf({ ...good, ...bad }), { message }, JSON.stringify(bad));
});

test('nfs start writes its key 0600 and its config, starts ganesha on them and waits until it serves', async (t) => {
  const n = await fakeNode(t);
  n.master.keys.push(keyring('client.nfs.n1', NFS_KEY));
  const conf = join(n.dir, 'data', 'nfs', 'ceph-n1', 'ganesha.conf');
  const pidFile = join(n.dir, 'run', 'ceph-client.nfs.n1.pid');
  const log = join(n.dir, 'log', 'ganesha-client.nfs.n1.log');
  n.runner.expect('ganesha.nfsd', ['-f', conf, '-p', pidFile, '-L', log, '-N', 'NIV_EVENT'], ganesha(t, n, SERVING));
  const out = await startNfs(n.ctx({ name: 'n1', fsid: FSID, export: 'cephfs' }));
  n.runner.verify();
  t.deepEqual(out, { name: 'n1', export: 'cephfs', path: '/', pseudo: '/cephfs', endpoint: '10.0.0.1:2049' });
  const key = join(n.dir, 'data', 'keyring', 'ceph.client.nfs.n1.keyring');
  t.is(await readFile(key, 'utf8'), `[client.nfs.n1]\n\tkey = ${NFS_KEY}\n`);
  t.is((await stat(key)).mode & 0o777, 0o600);
  const text = await readFile(conf, 'utf8');
  t.regex(text, /\tUser_Id = "nfs\.n1";\n\t\tFilesystem = "cephfs";\n/);
  t.regex(text, /\tBind_addr = 10\.0\.0\.1;\n/);
  t.regex(text, new RegExp(`\\tCeph_Conf = "${n.host.conf}";\\n`));
  t.false(text.includes(NFS_KEY));
  t.false(n.lines.some((l) => l.message.includes(NFS_KEY)));
  t.truthy(await n.host.pidOf('nfs', 'n1'));
  t.true(n.lines.some((l) => l.message === 'client.nfs.n1: started, NFSv4 on 10.0.0.1:2049, /cephfs is cephfs:/'));
});

test('nfs start of a running gateway leaves it alone, restarts it when its export changed, and stop stops it once', async (t) => {
  const n = await fakeNode(t);
  n.master.keys.push(keyring('client.nfs.n1', NFS_KEY));
  n.runner
    .expect((c, a) => c === 'ganesha.nfsd' && a[0] === '-f', ganesha(t, n, SERVING))
    .expect((c) => c === 'ganesha.nfsd', ganesha(t, n, SERVING));
  await startNfs(n.ctx({ name: 'n1', fsid: FSID, export: 'cephfs' }));
  const first = (await n.host.pidOf('nfs', 'n1'))!;
  t.deepEqual(await startNfs(n.ctx({ name: 'n1', fsid: FSID, export: 'cephfs' })), {
    name: 'n1',
    export: 'cephfs',
    path: '/',
    pseudo: '/cephfs',
    endpoint: '10.0.0.1:2049',
  });
  t.is(n.runner.calls.length, 1, 'already running: nothing started');
  t.true(n.lines.some((l) => l.message === 'client.nfs.n1: already running'));
  await startNfs(n.ctx({ name: 'n1', fsid: FSID, export: 'cephfs', path: '/shares', port: 12049 }));
  n.runner.verify();
  const second = (await n.host.pidOf('nfs', 'n1'))!;
  t.false(alive(first), 'the gateway with the old export was stopped');
  t.not(second, first);
  t.regex(await readFile(n.host.ganeshaConfOf('n1'), 'utf8'), /NFS_Port = 12049;[^]*Path = "\/shares";/);
  t.deepEqual(await stopNfs(n.ctx({ name: 'n1' })), { name: 'n1' });
  t.false(alive(second));
  await stopNfs(n.ctx({ name: 'n1' }));
  t.deepEqual(
    n.lines.slice(-2).map((l) => l.message),
    ['client.nfs.n1: stopped', 'client.nfs.n1: was not running'],
  );
});

test('nfs start of a ganesha that serves without its export stops it and fails with the log lines that say why', async (t) => {
  const n = await fakeNode(t);
  n.master.keys.push(keyring('client.nfs.n1', NFS_KEY));
  n.runner.expect((c) => c === 'ganesha.nfsd', ganesha(t, n, `${NO_EXPORT}${SERVING}`));
  const err = await t.throwsAsync(startNfs(n.ctx({ name: 'n1', fsid: FSID, export: 'cephfs' })));
  t.is(
    err.message,
    [
      'client.nfs.n1: ganesha started without its export, stopped it; its log says:',
      'create_export :FSAL :CRIT :Unable to mount Ceph cluster for /.',
      'fsal_cfg_commit :CONFIG :CRIT :Could not create export for (/cephfs) to (/)',
    ].join('\n'),
  );
  t.is(await n.host.pidOf('nfs', 'n1'), null);
});

test('nfs start refuses bad arguments and another cluster before fetching a key or running anything', async (t) => {
  const n = await fakeNode(t);
  n.master.keys.push(keyring('client.nfs.n1', NFS_KEY));
  const refused: Array<[Record<string, unknown>, RegExp]> = [
    [{ name: 'n1', fsid: FSID }, /argument export is required/],
    [{ name: 'n1', fsid: FSID, export: 'cephfs\nEXPORT' }, /argument export must be the CephFS filesystem it exports/],
    [{ name: 'n1', fsid: FSID, export: 'cephfs', path: '/../etc' }, /argument path must be an absolute path of plain segments/],
    [{ name: 'n1', fsid: FSID, export: 'cephfs', port: 0 }, /argument port must be a TCP port/],
    [{ name: 'n1', fsid: FSID, export: 'cephfs', port: '2049' }, /argument port must be a TCP port/],
    [{ name: 'n1', fsid: 'other', export: 'cephfs' }, /the step is for cluster other/],
  ];
  for (const [args, message] of refused) await t.throwsAsync(startNfs(n.ctx(args)), { message }, JSON.stringify(args));
  t.deepEqual(n.runner.calls, []);
  await t.throwsAsync(stat(join(n.dir, 'data', 'keyring', 'ceph.client.nfs.n1.keyring')));
});

test('nfs start of a ganesha that exits at once fails with the end of its log', async (t) => {
  const n = await fakeNode(t);
  n.master.keys.push(keyring('client.nfs.n1', NFS_KEY));
  n.runner.expect(
    (c) => c === 'ganesha.nfsd',
    (call) => {
      const args = call.args as string[];
      mkdirSync(join(n.dir, 'run'), { recursive: true });
      writeFileSync(args[args.indexOf('-p') + 1]!, '999999999\n');
      appendFileSync(
        args[args.indexOf('-L') + 1]!,
        'x : y : n1 : nfs-ganesha-42[main] config_errs_to_log :CONFIG :FATAL :Fatal errors. Server exiting...\n',
      );
      return {};
    },
  );
  await t.throwsAsync(startNfs(n.ctx({ name: 'n1', fsid: FSID, export: 'cephfs' })), {
    message:
      'client.nfs.n1: ganesha exited during its start; its log ends with:\nconfig_errs_to_log :CONFIG :FATAL :Fatal errors. Server exiting...',
  });
});
