// CephClient's gates, creations and auth, replayed from real Ceph 16.2.15 outputs, including
// the deliberate failures record.sh provoked.
import test from 'ava';
import { keyringText } from '../../src/clients/keyring.js';
import { CommandError } from '../../src/errors.js';
import { FakeRunner } from '../helpers/fake-runner.js';
import { adminClient, cephArgs, expectJson, expectRecorded, recorded, RECORDED, replyOf } from './ceph-fixtures.js';

const replay = (verb: string[], name: string) => {
  const runner = expectRecorded(new FakeRunner(), verb, name);
  return { runner, ceph: adminClient(runner) };
};

test('ceph osd ok-to-stop: EBUSY is a "no" with Ceph\'s reason, not an exception', async (t) => {
  const { runner, ceph } = replay(['osd', 'ok-to-stop', '0'], 'osd-ok-to-stop-0');
  t.deepEqual(await ceph.okToStop([0]), {
    ok: false,
    reason: 'unsafe to stop osd(s) at this time (30 PGs are or would become offline)',
    osds: [0],
  });
  runner.verify();
  const both = await replay(['osd', 'ok-to-stop', '0', '1'], 'osd-ok-to-stop-0-1').ceph.okToStop([0, 1]);
  const reason = 'unsafe to stop osd(s) at this time (65 PGs are or would become offline)';
  t.deepEqual(both, { ok: false, reason, osds: [0, 1] });
});

test('ceph osd ok-to-stop: yes for an OSD without PGs, and (as Ceph says) for an unknown id', async (t) => {
  t.deepEqual(await replay(['osd', 'ok-to-stop', '2'], 'osd-ok-to-stop-new').ceph.okToStop([2]), { ok: true, osds: [2] });
  t.deepEqual(await replay(['osd', 'ok-to-stop', '99'], 'osd-ok-to-stop-99').ceph.okToStop([99]), { ok: true, osds: [99] });
});

test('ceph osd ok-to-stop: a JSON "false" with exit 0 is a "no" too; EAGAIN is a "no"', async (t) => {
  const stdout = recorded('osd-ok-to-stop-0').stdout;
  const runner = new FakeRunner()
    .expect('ceph', cephArgs('osd', 'ok-to-stop', '0'), { stdout })
    .expect('ceph', cephArgs('osd', 'ok-to-stop', '1'), { exitCode: 11, stderr: 'Error EAGAIN: pg stats not available\n' });
  const ceph = adminClient(runner);
  const reason = 'unsafe to stop osd(s) at this time (30 PGs are or would become offline)';
  t.like(await ceph.okToStop([0]), { ok: false, reason });
  t.deepEqual(await ceph.okToStop([1]), { ok: false, reason: 'pg stats not available', osds: [1] });
});

test('ceph osd ok-to-stop: other failures stay CommandError; ids are checked before any call', async (t) => {
  const runner = new FakeRunner().expect('ceph', cephArgs('osd', 'ok-to-stop', '0'), {
    exitCode: 1,
    stderr: '[errno 110] RADOS timed out (error connecting to the cluster)\n',
  });
  const ceph = adminClient(runner);
  const err = await t.throwsAsync(ceph.okToStop([0]), { instanceOf: CommandError });
  t.is(err.exitCode, 1);
  t.regex(err.stderr, /RADOS timed out/);
  await t.throwsAsync(ceph.okToStop([]), { instanceOf: TypeError, message: 'okToStop needs at least one OSD id' });
  await t.throwsAsync(ceph.safeToDestroy([-1]), { instanceOf: TypeError, message: 'safeToDestroy: -1 is not an OSD id' });
});

test('ceph osd safe-to-destroy: an OSD holding PGs is not safe (exit 0, verdict in JSON)', async (t) => {
  const not = await replay(['osd', 'safe-to-destroy', '0'], 'osd-safe-to-destroy-0').ceph.safeToDestroy([0]);
  t.deepEqual(not, {
    safe: false,
    reason: 'OSD(s) 0 have PGs currently mapped to them',
    safeIds: [],
    activeIds: [0],
    missingStatsIds: [],
    storedPgIds: [],
  });
  const yes = await replay(['osd', 'safe-to-destroy', '2'], 'osd-safe-to-destroy-new').ceph.safeToDestroy([2]);
  t.deepEqual(yes, { safe: true, safeIds: [2], activeIds: [], missingStatsIds: [], storedPgIds: [] });
  const gone = await replay(['osd', 'safe-to-destroy', '99'], 'osd-safe-to-destroy-99').ceph.safeToDestroy([99]);
  t.true(gone.safe, 'an id that does not exist holds no data');
});

test('ceph osd safe-to-destroy: an EBUSY exit (its non-JSON form) is a "no" with Ceph\'s reason', async (t) => {
  const plain = recorded('osd-safe-to-destroy-0-plain');
  t.is(plain.exitCode, 16);
  const runner = new FakeRunner().expect('ceph', cephArgs('osd', 'safe-to-destroy', '0'), replyOf(plain));
  const r = await adminClient(runner).safeToDestroy([0]);
  t.false(r.safe);
  t.is(r.reason, 'OSD(s) 0 have 30 pgs currently mapped to them.');
});

test('ceph osd pool create: created, then "already exists" is success', async (t) => {
  const verb = ['osd', 'pool', 'create', 'quarry-fixture', '8'];
  const runner = expectRecorded(expectRecorded(new FakeRunner(), verb, 'osd-pool-create'), verb, 'osd-pool-create-exists');
  const ceph = adminClient(runner);
  t.deepEqual(await ceph.poolCreate('quarry-fixture', 8), { created: true });
  t.deepEqual(await ceph.poolCreate('quarry-fixture', 8), { created: false });
  runner.verify();
});

test('ceph fs new: created, "already exists" is success, a missing pool is CommandError', async (t) => {
  const verb = ['fs', 'new', 'quarryfs', 'quarryfs_metadata', 'quarryfs_data'];
  const runner = expectRecorded(expectRecorded(new FakeRunner(), verb, 'fs-new'), verb, 'fs-new-exists');
  expectRecorded(runner, ['fs', 'new', 'quarryfs2', 'quarry-nosuch-meta', 'quarry-nosuch-data'], 'fs-new-missing-pool');
  const ceph = adminClient(runner);
  t.deepEqual(await ceph.fsNew('quarryfs', 'quarryfs_metadata', 'quarryfs_data'), { created: true });
  t.deepEqual(await ceph.fsNew('quarryfs', 'quarryfs_metadata', 'quarryfs_data'), { created: false });
  const err = await t.throwsAsync(ceph.fsNew('quarryfs2', 'quarry-nosuch-meta', 'quarry-nosuch-data'), {
    instanceOf: CommandError,
  });
  t.is(err.exitCode, 2);
  t.is(err.stderr, "Error ENOENT: pool 'quarry-nosuch-meta' does not exist\n");
  t.regex(err.message, /exited with 2: Error ENOENT: pool 'quarry-nosuch-meta' does not exist$/);
});

test('ceph auth get-or-create returns the key; keyringText renders what `ceph auth get` prints', async (t) => {
  const caps = { mon: 'allow r', osd: 'allow rw pool=quarry-fixture' };
  const runner = expectJson(
    new FakeRunner(),
    ['auth', 'get-or-create', 'client.quarry-fixture', 'mon', 'allow r', 'osd', 'allow rw pool=quarry-fixture'],
    'auth-get-or-create',
  );
  expectJson(runner, ['auth', 'get', 'client.quarry-fixture'], 'auth-get');
  const ceph = adminClient(runner);
  const made = await ceph.authGetOrCreate('client.quarry-fixture', caps);
  t.deepEqual(made, { entity: 'client.quarry-fixture', key: RECORDED.fakeKey, caps });
  t.deepEqual(await ceph.authGet('client.quarry-fixture'), made);
  t.is(keyringText(made), recorded('auth-get-plain').stdout);
  t.is(keyringText(made, { withCaps: false }), `[client.quarry-fixture]\n\tkey = ${RECORDED.fakeKey}\n`);
  runner.verify();
});

test('ceph auth: a missing entity is undefined; other caps are an EINVAL CommandError', async (t) => {
  const missing = replay(['auth', 'get', 'client.quarry-nosuch'], 'auth-get-missing');
  t.is(await missing.ceph.authGet('client.quarry-nosuch'), undefined);
  const verb = ['auth', 'get-or-create', 'client.quarry-fixture', 'mon', 'allow r', 'osd', 'allow rwx'];
  const { ceph } = replay(verb, 'auth-get-or-create-other-caps');
  const err = await t.throwsAsync(ceph.authGetOrCreate('client.quarry-fixture', { mon: 'allow r', osd: 'allow rwx' }), {
    instanceOf: CommandError,
  });
  t.is(err.exitCode, 22);
  t.is(err.stderr, 'Error EINVAL: key for client.quarry-fixture exists but cap osd does not match\n');
});

test('ceph osd new returns the id; the cephx secret goes on stdin, never in the arguments', async (t) => {
  const uuid = 'b09a13cc-b79f-4185-a4ea-92e9dc1e58ee';
  const secret = RECORDED.fakeKey;
  const runner = expectRecorded(new FakeRunner(), ['osd', 'new', uuid, '-i', '-'], 'osd-new');
  expectRecorded(runner, ['osd', 'new', uuid], 'osd-new-again');
  const ceph = adminClient(runner);
  t.is(await ceph.osdNew(uuid, { cephxSecret: secret }), 2);
  t.is(await ceph.osdNew(uuid), 2);
  t.deepEqual(JSON.parse(runner.calls[0]?.input ?? ''), { cephx_secret: secret });
  t.false(runner.calls.some((c) => c.shown.includes(secret)));
  t.is(runner.calls[1]?.input, undefined);
});

test('ceph mon getmap writes the file and reports the epoch from stderr', async (t) => {
  const r = recorded('mon-getmap');
  const runner = new FakeRunner().expect('ceph', cephArgs('mon', 'getmap', '-o', '/tmp/monmap'), {
    stdout: r.stdout,
    stderr: r.stderr,
  });
  t.deepEqual(await adminClient(runner).monGetmap('/tmp/monmap'), { epoch: 1 });
  t.is(r.fileBytes, 201);
});

test('ceph mon remove: removed, then "does not exist" is success; the last monitor is refused', async (t) => {
  const runner = expectRecorded(new FakeRunner(), ['mon', 'remove', 'b'], 'mon-remove');
  expectRecorded(runner, ['mon', 'remove', 'b'], 'mon-remove-absent');
  expectRecorded(runner, ['mon', 'remove', 'a'], 'mon-remove-last');
  const ceph = adminClient(runner);
  t.deepEqual(await ceph.monRemove('b'), { removed: true });
  t.deepEqual(await ceph.monRemove('b'), { removed: false });
  const err = await t.throwsAsync(ceph.monRemove('a'), { instanceOf: CommandError });
  t.is(err.exitCode, 22);
  t.is(err.stderr, 'Error EINVAL: error: refusing removal of last monitor a\n');
  runner.verify();
});
