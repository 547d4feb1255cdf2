// OSD day 2 in the simulated cluster: `osd out` drains over the sim's clock, safe-to-destroy
// answers as Ceph 16 does during and after, destroy keeps the id and CRUSH position for `osd
// new UUID ID`, purge frees the id, and `osd new` takes a device class. The verbs answer with
// the bytes recorded from a real cluster (test/fixtures/ceph).
import test from 'ava';
import { CommandError } from '../../src/errors.js';
import type { SimCephCluster } from '../../src/sim/ceph/cluster.js';
import { SimCephRunner } from '../../src/sim/ceph/runner.js';
import { recorded } from '../clients/ceph-fixtures.js';
import { apiOf, instant, newCluster, TB, uuidOf, withOsds } from './ceph-helpers.js';

const GiB = 1024 ** 3;
const KEY = 'AQAAAAAAAAAAABAAcXVhcnJ5LWZha2Uta2V5IQ==';

/** Four hosts with one OSD each, a size-3 pool of 32 PGs holding 300 GiB; PGs move 10 a second. */
async function draining(hosts = 4) {
  const { cluster, clock } = newCluster({ backfillPgsPerSec: 10 });
  const ids = withOsds(cluster, hosts);
  const api = apiOf(cluster);
  await api.poolCreate('rbd', 32);
  cluster.enableApplication('rbd', 'rbd');
  cluster.writeData('rbd', 300 * GiB);
  return { cluster, clock, ids, api };
}

const states = async (api: ReturnType<typeof apiOf>) => new Map((await api.status()).pgStates.map((s) => [s.state, s.count]));

test('osd out: the OSD keeps its PGs while they backfill at the configured rate, then has none', async (t) => {
  const { clock, api } = await draining();
  const dataOf = async (ids: number[]) => (await api.osdDf()).filter((o) => ids.includes(o.id)).reduce((n, o) => n + o.dataBytes, 0);
  const stored = await dataOf([0, 1, 2, 3]);
  const before = (await api.osdDf()).find((o) => o.id === 3);
  t.true((before?.pgs ?? 0) > 10, 'an in OSD serves its share of 33 PGs × 3');
  t.true((before?.dataBytes ?? 0) > 0, 'and holds its share of the pool');
  await api.osdOut([3]);
  const out = (await api.osdDf()).find((o) => o.id === 3);
  t.like(out, { pgs: before?.pgs, dataBytes: 0, totalBytes: 0, status: 'up' }, 'as recorded: PGs still there, an out OSD reports no bytes');
  let s = await states(api);
  t.is(s.get('active+remapped+backfilling'), 1, 'one PG at a time per source OSD (osd_max_backfills)');
  t.is(s.get('active+remapped+backfill_wait'), (before?.pgs ?? 0) - 1);
  t.is((await api.osdStat()).numRemappedPgs, before?.pgs ?? -1);
  t.is((await api.status()).health, 'HEALTH_OK', 'misplaced data is no health warning');
  const gate = await api.safeToDestroy([3]);
  t.false(gate.safe);
  t.deepEqual(gate.activeIds, [3]);
  clock.advance(1_000);
  t.is((await api.osdDf()).find((o) => o.id === 3)?.pgs, (before?.pgs ?? 0) - 10, '10 PGs a second of the sim clock');
  clock.advance(60_000);
  t.is((await api.osdDf()).find((o) => o.id === 3)?.pgs, 0);
  s = await states(api);
  t.deepEqual([...s], [['active+clean', 33]]);
  t.deepEqual(await api.safeToDestroy([3]), { safe: true, safeIds: [3], activeIds: [], missingStatsIds: [], storedPgIds: [] });
  t.true(Math.abs((await dataOf([0, 1, 2])) - stored) < 4096, 'the three others hold every copy now');
});

test('backfill pauses (nobackfill) and resumes; paused time does not count', async (t) => {
  const { cluster, clock, api } = await draining();
  cluster.pauseBackfill();
  await api.osdOut([3]);
  const pgs = (await api.osdDf()).find((o) => o.id === 3)?.pgs ?? 0;
  clock.advance(3_600_000);
  t.is((await api.osdDf()).find((o) => o.id === 3)?.pgs, pgs, 'nothing moved in an hour');
  t.is((await states(api)).get('active+remapped+backfill_wait'), pgs, 'every PG waits');
  cluster.pauseBackfill(false);
  clock.advance(500);
  t.is((await api.osdDf()).find((o) => o.id === 3)?.pgs, pgs - 5);
});

test('osd in again before the drain ends: the PGs stay, nothing waits', async (t) => {
  const { clock, api } = await draining();
  await api.osdOut([3]);
  clock.advance(1_000);
  await api.osdIn([3]);
  t.deepEqual([...(await states(api))], [['active+clean', 33]]);
  t.deepEqual((await api.safeToDestroy([3])).activeIds, [3]);
});

test('an OSD whose PGs have nowhere to go (3 hosts, size 3) stays active+clean+remapped: never safe', async (t) => {
  const { cluster, clock, api } = await draining(3);
  await api.osdOut([2]);
  clock.advance(24 * 3_600_000);
  t.deepEqual([...(await states(api))], [['active+clean+remapped', 33]], 'as recorded when too few OSDs are left');
  const gate = await api.safeToDestroy([2]);
  t.false(gate.safe);
  t.deepEqual(gate.activeIds, [2]);
  t.is(gate.reason, 'OSD(s) 2 have PGs currently mapped to them');
  t.is((await api.osdDf()).find((o) => o.id === 2)?.pgs, 33);
  cluster.stopOsd(2);
  t.deepEqual([...(await states(api))], [['active+undersized+degraded', 33]], 'stopped, its copies are missing');
  t.deepEqual((await api.safeToDestroy([2])).missingStatsIds, [2], 'still not safe');
});

test('an out OSD that dies mid-drain: PGs recover from the other copies; no stats until clean', async (t) => {
  const { cluster, clock, api } = await draining();
  await api.osdOut([3]);
  clock.advance(1_000);
  cluster.killOsd(3);
  const s = await states(api);
  t.true((s.get('active+recovery_wait+degraded') ?? 0) > 0);
  const gate = await api.safeToDestroy([3]);
  t.deepEqual([gate.safe, gate.missingStatsIds], [false, [3]], 'down and not all clean: missing_stats, as recorded');
  clock.advance(60_000);
  t.deepEqual([...(await states(api))], [['active+clean', 33]]);
  t.true((await api.safeToDestroy([3])).safe);
});

test('osd destroy keeps the id and CRUSH position; osd new UUID ID reuses them, class kept as Ceph does', async (t) => {
  const { cluster, clock, api } = await draining();
  await api.osdOut([3]);
  clock.advance(60_000);
  const up = await t.throwsAsync(api.osdDestroy(3), { instanceOf: CommandError });
  t.deepEqual([up.exitCode, up.stderr], [16, 'Error EBUSY: osd.3 is not `down`.\n']);
  cluster.stopOsd(3);
  await api.osdDestroy(3);
  await api.osdDestroy(3);
  const dump = (await api.osdDump()).osds.find((o) => o.id === 3);
  t.deepEqual(dump, { id: 3, uuid: '00000000-0000-0000-0000-000000000000', up: false, in: false, state: ['destroyed', 'exists'] });
  const node = (await api.osdTree()).nodes.find((n) => n.id === 3);
  t.like(node, { host: 'h4', status: 'destroyed', deviceClass: 'hdd', reweight: 0, stray: false });
  t.is((await api.osdDf()).find((o) => o.id === 3)?.status, 'destroyed');
  t.is(await api.authGet('osd.3'), undefined, 'its key is gone');
  t.true((await api.safeToDestroy([3])).safe);
  await t.throwsAsync(api.osdNew(uuidOf(50), { id: 2 }), { message: /id 2 already in use and does not match uuid/ });

  t.is(await api.osdNew(uuidOf(50), { id: 3, cephxSecret: KEY, deviceClass: 'ssd' }), 3);
  t.is(await api.osdNew(uuidOf(50), { id: 3, cephxSecret: KEY, deviceClass: 'ssd' }), 3, 'again: the same id');
  t.like(
    (await api.osdDump()).osds.find((o) => o.id === 3),
    { uuid: uuidOf(50), up: false, in: false, state: ['exists', 'new'] },
  );
  t.like(
    (await api.osdTree()).nodes.find((n) => n.id === 3),
    { host: 'h4', status: 'down', deviceClass: 'hdd' },
    'position kept; the old class stays (recorded)',
  );
  t.is((await api.authGet('osd.3'))?.key, KEY);
  cluster.startOsd(3, 'h4', 4 * TB, 'ssd', { devicePath: '/dev/sdc' });
  t.like(
    (await api.osdDump()).osds.find((o) => o.id === 3),
    { up: true, in: true, state: ['exists', 'up'] },
  );
  clock.advance(60_000);
  t.deepEqual([...(await states(api))], [['active+clean', 33]]);
  t.true(((await api.osdDf()).find((o) => o.id === 3)?.pgs ?? 0) > 0, 'data comes back to the same place');
});

test('osd purge removes id, CRUSH entry and key; again is removed: false; the id is free again', async (t) => {
  const { cluster, clock, api } = await draining();
  await api.osdOut([1]);
  clock.advance(60_000);
  await t.throwsAsync(api.osdPurge(1), { instanceOf: CommandError, message: /is not `down`/ });
  cluster.stopOsd(1);
  t.deepEqual(await api.osdPurge(1), { removed: true });
  t.deepEqual(await api.osdPurge(1), { removed: false });
  t.false((await api.osdTree()).nodes.some((n) => n.id === 1));
  t.false((await api.osdDump()).osds.some((o) => o.id === 1));
  t.is(await api.authGet('osd.1'), undefined);
  t.is(await api.osdNew(uuidOf(60)), 1, 'the lowest free id');
});

test('osd new with crush_device_class: the class shows in osd tree (stray) and osd df, and a boot keeps it', async (t) => {
  const { cluster, api } = await draining();
  const id = await api.osdNew(uuidOf(70), { deviceClass: 'nvme' });
  t.like(
    (await api.osdTree()).nodes.find((n) => n.id === id),
    { stray: true, deviceClass: 'nvme', status: 'down' },
  );
  cluster.startOsd(id, 'h5', 1.6 * TB, 'ssd');
  t.like(
    (await api.osdTree()).nodes.find((n) => n.id === id),
    { host: 'h5', deviceClass: 'nvme' },
  );
  t.is((await api.osdDf()).find((o) => o.id === id)?.deviceClass, 'nvme');
  const plain = await api.osdNew(uuidOf(71));
  cluster.startOsd(plain, 'h6', 960_000_000_000, 'ssd');
  t.is((await api.osdDf()).find((o) => o.id === plain)?.deviceClass, 'ssd', 'without a class, the device decides');
  await t.throwsAsync(api.osdNew(uuidOf(72), { deviceClass: 'tape' }), { instanceOf: CommandError, message: /device classes/ });
});

// ---- the very replies recorded from Ceph 16.2.15 -------------------------------------------
async function reply(cluster: SimCephCluster, verb: string[], input?: string) {
  const runner = new SimCephRunner(cluster, { sleep: instant });
  try {
    const r = await runner.run('ceph', ['--format', 'json', ...verb], { timeoutMs: 30_000, ...(input ? { input } : {}) });
    return { exitCode: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    if (!(err instanceof CommandError)) throw err;
    return { exitCode: err.exitCode, stdout: '\n', stderr: err.stderr };
  }
}

test('sim osd out/in/destroy/purge/new answer with the recorded stdout, stderr and exit code', async (t) => {
  const { cluster } = newCluster({ poolDefaultSize: 1, failureDomain: 'osd' });
  withOsds(cluster, 2);
  const same = async (name: string, verb: string[], input?: string) => {
    const r = recorded(name);
    t.deepEqual(await reply(cluster, verb, input), { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr }, name);
  };
  await same('osd-out', ['osd', 'out', '0']);
  await same('osd-out-again', ['osd', 'out', '0']);
  await same('osd-in', ['osd', 'in', '0']);
  await same('osd-in-again', ['osd', 'in', '0']);
  await same('osd-out-missing', ['osd', 'out', '99']);
  await same('osd-destroy-up', ['osd', 'destroy', 'osd.0', '--yes-i-really-mean-it']);
  await same('osd-purge-up', ['osd', 'purge', 'osd.0', '--yes-i-really-mean-it']);
  await same('osd-destroy-missing', ['osd', 'destroy', 'osd.99', '--yes-i-really-mean-it']);
  cluster.stopOsd(1);
  await same('osd-destroy-again', ['osd', 'destroy', 'osd.1', '--yes-i-really-mean-it']);
  await same('osd-destroy-again', ['osd', 'destroy', 'osd.1', '--yes-i-really-mean-it']);
  const reuse = recorded('osd-new-reuse');
  const uuid = reuse.command.split(' ').at(-4) ?? '';
  t.deepEqual(
    await reply(cluster, ['osd', 'new', uuid, '1', '-i', '-'], JSON.stringify({ cephx_secret: KEY, crush_device_class: 'ssd' })),
    {
      exitCode: 0,
      stdout: reuse.stdout,
      stderr: reuse.stderr,
    },
  );
  const inUse = recorded('osd-new-id-in-use');
  const other = inUse.command.split(' ').at(-2) ?? '';
  t.deepEqual(await reply(cluster, ['osd', 'new', other, '0']), { exitCode: inUse.exitCode, stdout: '\n', stderr: inUse.stderr });
  cluster.stopOsd(1);
  await reply(cluster, ['osd', 'destroy', 'osd.1', '--yes-i-really-mean-it']);
  await same('osd-purge', ['osd', 'purge', 'osd.1', '--yes-i-really-mean-it']);
  await same('osd-purge-again', ['osd', 'purge', 'osd.1', '--yes-i-really-mean-it']);
});

test('osd df of one OSD: the same row as the whole list, during a drain too; an OSD not in CRUSH refused as Ceph words it', async (t) => {
  const { cluster, clock, api } = await draining();
  const row = async (id: number) => (await api.osdDf()).find((o) => o.id === id) ?? null;
  t.deepEqual(await api.osdDfOf(2), await row(2));
  await api.osdOut([3]);
  clock.advance(500);
  const one = await api.osdDfOf(3);
  t.true((one?.pgs ?? 0) > 0, 'still serving PGs while they move');
  t.deepEqual(one, await row(3));
  const missing = recorded('osd-df-one-missing');
  t.deepEqual(await reply(cluster, ['osd', 'df', 'plain', 'osd.99']), {
    exitCode: missing.exitCode,
    stdout: missing.stdout,
    stderr: missing.stderr,
  });
  t.is(await api.osdDfOf(99), null);
});
