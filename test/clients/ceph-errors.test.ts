// How CephClient fails: unreadable output names the command and the field (never quoting the
// output, which may hold keys); a failing command stays the runner's CommandError.
import test from 'ava';
import { CephClient } from '../../src/clients/ceph.js';
import { CommandOutputError } from '../../src/clients/ceph-output.js';
import { CommandError } from '../../src/errors.js';
import { FakeRunner } from '../helpers/fake-runner.js';
import { adminClient, cephArgs, fixture, RECORDED } from './ceph-fixtures.js';

const answering = (verb: string[], stdout: string) => adminClient(new FakeRunner().expect('ceph', cephArgs(...verb), { stdout }));

test('ceph output that is not JSON is a CommandOutputError naming the command', async (t) => {
  const truncated = fixture('status').slice(0, 200);
  const err = await t.throwsAsync(answering(['status'], truncated).status(), { instanceOf: CommandOutputError });
  t.regex(err.message, /^ceph status: unexpected output: not valid JSON/);
  t.is(err.code, 'COMMAND_OUTPUT_INVALID');
  t.false(err.message.includes(RECORDED.fsid), 'the output is not quoted');
});

test('ceph output that is empty is a CommandOutputError', async (t) => {
  await t.throwsAsync(answering(['osd', 'tree'], '\n').osdTree(), {
    instanceOf: CommandOutputError,
    message: 'ceph osd tree: unexpected output: empty output, expected JSON',
  });
});

test('ceph output with a missing or mistyped field names that field', async (t) => {
  const status = JSON.parse(fixture('status')) as { osdmap: Record<string, unknown> };
  delete status.osdmap.num_up_osds;
  await t.throwsAsync(answering(['status'], JSON.stringify(status)).status(), {
    instanceOf: CommandOutputError,
    message: "ceph status: unexpected output: /osdmap/num_up_osds must have required property 'num_up_osds'",
  });
  const tree = fixture('osd-tree').replace('"id":0,', '"id":"zero",');
  const err = await t.throwsAsync(answering(['osd', 'tree'], tree).osdTree(), { instanceOf: CommandOutputError });
  t.is(err.message, 'ceph osd tree: unexpected output: /nodes/2/id must be integer');
  t.deepEqual(err.errors, [{ path: '/nodes/2/id', message: 'must be integer' }]);
  const health = fixture('health').replace('HEALTH_OK', 'HEALTH_MAYBE');
  await t.throwsAsync(answering(['health', 'detail'], health).health(), {
    message: /^ceph health detail: unexpected output: \/status must be equal to one of the allowed values/,
  });
});

test('ceph auth output that fails its schema does not leak the key into the error', async (t) => {
  const bad = `[{"entity":"client.x","key":"${RECORDED.fakeKey}","caps":{"mon":7}}]`;
  const err = await t.throwsAsync(answering(['auth', 'get', 'client.x'], bad).authGet('client.x'), {
    instanceOf: CommandOutputError,
  });
  t.is(err.message, 'ceph auth get client.x: unexpected output: /0/caps/mon must be string');
  const notJson = `[client.x]\n\tkey = ${RECORDED.fakeKey}\n`;
  const err2 = await t.throwsAsync(answering(['auth', 'get', 'client.x'], notJson).authGet('client.x'));
  t.false(err2.message.includes(RECORDED.fakeKey));
});

test('ceph extra fields are tolerated (Ceph adds some in every release)', async (t) => {
  const stat = { ...(JSON.parse(fixture('mgr-stat')) as object), new_in_reef: { x: 1 } };
  t.like(await answering(['mgr', 'stat'], JSON.stringify(stat)).mgrStat(), { activeName: 'x', available: true });
});

test("ceph a non-zero exit surfaces the runner's CommandError with stderr", async (t) => {
  const runner = new FakeRunner().expect('ceph', cephArgs('status'), {
    exitCode: 1,
    stderr: "Error initializing cluster client: ObjectNotFound('RADOS object not found (error calling conf_read_file)')\n",
  });
  const err = await t.throwsAsync(adminClient(runner).status(), { instanceOf: CommandError });
  t.is(err.exitCode, 1);
  t.regex(err.stderr, /conf_read_file/);
  t.regex(err.message, /^ceph -c .* status exited with 1: Error initializing cluster client/);
});

test("ceph a call past its deadline is the runner's CommandError; per-call timeout and signal pass through", async (t) => {
  const runner = new FakeRunner()
    .expect('ceph', ['-c', '/c', '--connect-timeout', '1', '--format', 'json', 'mon', 'stat'], {
      stdout: fixture('mon-stat'),
      delayMs: 50,
    })
    .always(() => true, { stdout: fixture('mgr-stat') });
  const ceph = new CephClient({ runner, conf: '/c', timeoutMs: 20 });
  const err = await t.throwsAsync(ceph.monStat(), { instanceOf: CommandError });
  t.regex(err.message, /timed out after 20 ms/);
  const ac = new AbortController();
  await ceph.mgrStat({ timeoutMs: 7_000, signal: ac.signal });
  const call = runner.calls[1];
  t.is(call?.opts.timeoutMs, 7_000);
  t.is(call?.opts.signal, ac.signal);
  t.deepEqual(call?.args, ['-c', '/c', '--connect-timeout', '6', '--format', 'json', 'mgr', 'stat']);
});

test('ceph arguments: without name or keyring only -c; connect-timeout stays under the deadline', (t) => {
  const runner = new FakeRunner();
  t.deepEqual(new CephClient({ runner, conf: '/c' }).args(['status']), [
    '-c',
    '/c',
    '--connect-timeout',
    '20',
    '--format',
    'json',
    'status',
  ]);
  t.deepEqual(new CephClient({ runner, conf: '/c', timeoutMs: 1_500 }).args(['x']).slice(2, 4), ['--connect-timeout', '1']);
  t.deepEqual(new CephClient({ runner, conf: '/c', connectTimeoutSec: 5 }).args(['x']).slice(2, 4), ['--connect-timeout', '5']);
  const named = new CephClient({ runner, conf: '/c', name: 'client.bootstrap-osd', keyring: '/k', command: '/opt/ceph' });
  t.deepEqual(named.args(['osd', 'new', 'u']), [
    '-c',
    '/c',
    '--connect-timeout',
    '20',
    '-n',
    'client.bootstrap-osd',
    '-k',
    '/k',
    '--format',
    'json',
    'osd',
    'new',
    'u',
  ]);
});
