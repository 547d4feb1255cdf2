// CephClient's OSD day-2 verbs (out, in, df, safe-to-destroy while data moves, destroy, new
// with a reused id and a device class, purge) replayed from a real Ceph 16.2.15 cluster of
// three file-backed OSDs with a size-2 pool holding data (test/fixtures/ceph; recorded by hand
// with the mini-cluster script, the commands are in each .result.json).
import test from 'ava';
import { CommandError } from '../../src/errors.js';
import { FakeRunner } from '../helpers/fake-runner.js';
import { adminClient, cephArgs, expectJson, expectRecorded, recorded, RECORDED, replyOf } from './ceph-fixtures.js';

const client = (verb: string[], name: string, json = false) => {
  const runner = json ? expectJson(new FakeRunner(), verb, name) : expectRecorded(new FakeRunner(), verb, name);
  return { runner, ceph: adminClient(runner) };
};

test('ceph osd df: PGs and bytes per OSD, with the device class', async (t) => {
  const { ceph } = client(['osd', 'df'], 'osd-df', true);
  const df = await ceph.osdDf();
  t.deepEqual(
    df.map((o) => [o.id, o.deviceClass, o.pgs, o.status]),
    [
      [0, 'hdd', 39, 'up'],
      [1, 'hdd', 51, 'up'],
      [2, 'hdd', 39, 'up'],
    ],
  );
  t.deepEqual(df[0], {
    id: 0,
    deviceClass: 'hdd',
    pgs: 39,
    dataBytes: 23144 * 1024,
    usedBytes: 320240 * 1024,
    totalBytes: 2097152 * 1024,
    status: 'up',
  });
});

test('ceph osd df of an OSD out while its PGs backfill: PGs still counted, bytes zero (the mgr drops its stats)', async (t) => {
  const df = await client(['osd', 'df'], 'osd-df-backfilling', true).ceph.osdDf();
  t.like(
    df.find((o) => o.id === 1),
    { pgs: 14, dataBytes: 0, usedBytes: 0, totalBytes: 0, status: 'up' },
  );
  const destroyed = await client(['osd', 'df'], 'osd-df-destroyed', true).ceph.osdDf();
  t.like(
    destroyed.find((o) => o.id === 1),
    { pgs: 0, status: 'destroyed', deviceClass: 'hdd' },
  );
});

test('ceph osd out and in: marked, already, and an unknown id are all exit 0', async (t) => {
  for (const [name, verb] of [
    ['osd-out', ['osd', 'out', '0']],
    ['osd-out-again', ['osd', 'out', '0']],
    ['osd-out-missing', ['osd', 'out', '99']],
    ['osd-in', ['osd', 'in', '0']],
    ['osd-in-again', ['osd', 'in', '0']],
  ] as const) {
    const { runner, ceph } = client([...verb], name);
    const ids = [Number(verb[2])];
    await t.notThrowsAsync(verb[1] === 'out' ? ceph.osdOut(ids) : ceph.osdIn(ids), name);
    runner.verify();
  }
  t.is(recorded('osd-out').stderr, 'marked out osd.0. \n');
  t.is(recorded('osd-out-missing').stderr, 'osd.99 does not exist. \n');
});

test('ceph osd safe-to-destroy while data moves: active while backfilling or stuck, safe once drained', async (t) => {
  const ask = (name: string, id: number) => client(['osd', 'safe-to-destroy', String(id)], name).ceph.safeToDestroy([id]);
  const backfilling = await ask('osd-safe-to-destroy-backfilling', 1);
  t.like(backfilling, { safe: false, activeIds: [1], reason: 'OSD(s) 1 have PGs currently mapped to them' });
  t.like(await ask('osd-safe-to-destroy-drained', 1), { safe: true, safeIds: [1] });
  // Too few OSDs left for a size-2 pool: the out OSD stays acting (active+clean+remapped).
  t.like(await ask('osd-safe-to-destroy-undersized', 1), { safe: false, activeIds: [1] });
  t.like(await ask('osd-safe-to-destroy-down-no-stats', 1), {
    safe: false,
    missingStatsIds: [1],
    reason: 'OSD(s) 1 have no reported stats, and not all PGs are active+clean',
  });
  t.like(await ask('osd-safe-to-destroy-destroyed', 1), { safe: true });
  // Ceph's own quirk, kept: an out OSD that is up is "safe" while the others still recover
  // objects of size-1 pools it held (its stats are dropped once it is out).
  t.like(await ask('osd-safe-to-destroy-recovering', 2), { safe: true });
});

test('ceph osd safe-to-destroy without --format: EBUSY and EAGAIN are a "no" with Ceph\'s words', async (t) => {
  for (const [name, reason] of [
    ['osd-safe-to-destroy-backfilling-plain', 'OSD(s) 1 have 14 pgs currently mapped to them.'],
    ['osd-safe-to-destroy-undersized-plain', 'OSD(s) 1 have 32 pgs currently mapped to them.'],
    [
      'osd-safe-to-destroy-down-no-stats-plain',
      'OSD(s) 1 have no reported stats, and not all PGs are active+clean; we cannot draw any conclusions.',
    ],
  ] as const) {
    const r = recorded(name);
    const runner = new FakeRunner().expect('ceph', cephArgs('osd', 'safe-to-destroy', '1'), replyOf(r));
    t.like(await adminClient(runner).safeToDestroy([1]), { safe: false, reason }, name);
  }
});

test('ceph osd destroy: an up OSD is EBUSY; down it is destroyed (again too); unknown is success', async (t) => {
  const up = client(['osd', 'destroy', 'osd.0', '--yes-i-really-mean-it'], 'osd-destroy-up');
  const err = await t.throwsAsync(up.ceph.osdDestroy(0), { instanceOf: CommandError });
  t.deepEqual([err.exitCode, err.stderr], [16, 'Error EBUSY: osd.0 is not `down`.\n']);
  for (const [name, id] of [
    ['osd-destroy', 1],
    ['osd-destroy-again', 1],
    ['osd-destroy-missing', 99],
  ] as const) {
    const { runner, ceph } = client(['osd', 'destroy', `osd.${id}`, '--yes-i-really-mean-it'], name);
    await t.notThrowsAsync(ceph.osdDestroy(id), name);
    runner.verify();
  }
});

test('ceph osd dump and tree show a destroyed OSD: zero uuid, state destroyed, CRUSH position kept', async (t) => {
  const dump = await client(['osd', 'dump'], 'osd-dump-destroyed', true).ceph.osdDump();
  t.deepEqual(
    dump.osds.find((o) => o.id === 1),
    { id: 1, uuid: '00000000-0000-0000-0000-000000000000', up: false, in: false, state: ['destroyed', 'exists'] },
  );
  const tree = await client(['osd', 'tree'], 'osd-tree-destroyed', true).ceph.osdTree();
  t.like(
    tree.nodes.find((n) => n.id === 1),
    { host: 'vm', status: 'destroyed', deviceClass: 'hdd', reweight: 0, stray: false },
  );
  t.is(await client(['auth', 'get', 'osd.1'], 'auth-get-destroyed').ceph.authGet('osd.1'), undefined, 'its key is gone');
});

test('ceph osd new UUID ID reuses a destroyed id; secret and class go on stdin; a live id is EINVAL', async (t) => {
  const reuse = recorded('osd-new-reuse');
  const uuid = reuse.command.split(' ').at(-4) ?? '';
  const { runner, ceph } = client(['osd', 'new', uuid, '1', '-i', '-'], 'osd-new-reuse');
  expectRecorded(runner, ['osd', 'new', uuid, '1', '-i', '-'], 'osd-new-reuse-again');
  const opts = { id: 1, cephxSecret: RECORDED.fakeKey, deviceClass: 'ssd' };
  t.is(await ceph.osdNew(uuid, opts), 1);
  t.is(await ceph.osdNew(uuid, opts), 1, 'again: the same id');
  t.deepEqual(JSON.parse(runner.calls[0]?.input ?? ''), { cephx_secret: RECORDED.fakeKey, crush_device_class: 'ssd' });
  t.false(runner.calls.some((c) => c.shown.includes(RECORDED.fakeKey)));
  const inUse = recorded('osd-new-id-in-use');
  const other = inUse.command.split(' ').at(-2) ?? '';
  const live = client(['osd', 'new', other, '0'], 'osd-new-id-in-use');
  const err = await t.throwsAsync(live.ceph.osdNew(other, { id: 0 }), { instanceOf: CommandError });
  t.is(err.exitCode, 22);
  t.regex(err.stderr, /^Error EINVAL: id 0 already in use and does not match uuid /);
  // Ceph keeps a reused id's CRUSH class (hdd) whatever the class given; a fresh OSD takes it.
  const tree = await client(['osd', 'tree'], 'osd-tree-reused-ssd', true).ceph.osdTree();
  t.like(
    tree.nodes.find((n) => n.id === 1),
    { deviceClass: 'hdd', host: 'vm' },
  );
  t.like(
    tree.nodes.find((n) => n.id === 3),
    { deviceClass: 'ssd', stray: true, status: 'down' },
  );
});

test('ceph osd purge: purged, then "does not exist" is removed: false; an up OSD is EBUSY', async (t) => {
  t.deepEqual(await client(['osd', 'purge', 'osd.1', '--yes-i-really-mean-it'], 'osd-purge').ceph.osdPurge(1), { removed: true });
  t.deepEqual(await client(['osd', 'purge', 'osd.1', '--yes-i-really-mean-it'], 'osd-purge-again').ceph.osdPurge(1), { removed: false });
  t.deepEqual(await client(['osd', 'purge', 'osd.2', '--yes-i-really-mean-it'], 'osd-purge-drained').ceph.osdPurge(2), { removed: true });
  const err = await t.throwsAsync(client(['osd', 'purge', 'osd.0', '--yes-i-really-mean-it'], 'osd-purge-up').ceph.osdPurge(0), {
    instanceOf: CommandError,
  });
  t.is(err.exitCode, 16);
  const tree = await client(['osd', 'tree'], 'osd-tree-purged', true).ceph.osdTree();
  t.false(
    tree.nodes.some((n) => n.id === 2),
    'gone from CRUSH',
  );
});

test('ceph osd df of one OSD (osd df plain osd.N): its row alone; out, zeros; purged or unknown, null', async (t) => {
  const one = await client(['osd', 'df', 'plain', 'osd.1'], 'osd-df-one').ceph.osdDfOf(1);
  t.like(one, { id: 1, deviceClass: 'hdd', pgs: 38, dataBytes: 5708 * 1024, totalBytes: 2097152 * 1024, status: 'up' });
  t.like(await client(['osd', 'df', 'plain', 'osd.1'], 'osd-df-one-out').ceph.osdDfOf(1), { pgs: 0, dataBytes: 0, totalBytes: 0 });
  t.is(await client(['osd', 'df', 'plain', 'osd.99'], 'osd-df-one-missing').ceph.osdDfOf(99), null);
  await t.throwsAsync(() => adminClient(new FakeRunner()).osdDfOf(-1), { message: /osdDfOf/ });
});
