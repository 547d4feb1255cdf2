// OSDs, pools and placement groups of the simulated cluster: counts, PG states, health checks
// and the safety gates, through the same typed calls the loops make.
import test from 'ava';
import { CommandError } from '../../src/errors.js';
import { apiOf, newCluster, TB, uuidOf, withMons, withOsds } from './ceph-helpers.js';

test('created OSDs are strays until they start, then count as up and in under their hosts', async (t) => {
  const { cluster } = newCluster();
  withMons(cluster);
  const api = apiOf(cluster);
  t.is(await api.osdNew(uuidOf(1)), 0);
  t.is(await api.osdNew(uuidOf(2)), 1);
  t.is(await api.osdNew(uuidOf(1)), 0, 'the same uuid again is the same id');
  let tree = await api.osdTree();
  t.deepEqual(
    tree.nodes.filter((n) => n.stray).map((n) => [n.name, n.status]),
    [
      ['osd.0', 'down'],
      ['osd.1', 'down'],
    ],
  );
  t.deepEqual(
    (await api.osdDump()).osds.map((o) => [o.id, o.up, o.in, o.state]),
    [
      [0, false, true, ['exists', 'new']],
      [1, false, true, ['exists', 'new']],
    ],
  );
  cluster.startOsd(0, 'h1', 4 * TB, 'hdd');
  cluster.startOsd(1, 'h2', 960_000_000_000, 'ssd');
  tree = await api.osdTree();
  const osds = tree.nodes.filter((n) => n.type === 'osd');
  t.deepEqual(
    osds.map((n) => [n.name, n.host, n.status, n.deviceClass, n.stray]),
    [
      ['osd.0', 'h1', 'up', 'hdd', false],
      ['osd.1', 'h2', 'up', 'ssd', false],
    ],
  );
  t.is(osds[0]?.crushWeight, Math.round(((4 * TB) / 2 ** 40) * 65536) / 65536, 'CRUSH weight is the size in TiB');
  const stat = await api.osdStat();
  t.deepEqual([stat.numOsds, stat.numUpOsds, stat.numInOsds], [2, 2, 2]);
  const s = await api.status();
  t.deepEqual([s.osdCount, s.osdUp, s.osdIn], [2, 2, 2]);
});

test('pools of size 3 on three hosts: every PG active+clean and HEALTH_OK', async (t) => {
  const { cluster } = newCluster();
  withOsds(cluster, 3);
  const api = apiOf(cluster);
  t.deepEqual(await api.poolCreate('rbd', 32), { created: true });
  t.deepEqual(await api.poolCreate('rbd', 64), { created: false }, 'an existing pool is success');
  const pools = await api.poolList();
  t.deepEqual(
    pools.map((p) => [p.name, p.size, p.minSize, p.pgNum]),
    [
      ['device_health_metrics', 3, 2, 1],
      ['rbd', 3, 2, 32],
    ],
  );
  const s = await api.status();
  t.deepEqual(s.pgStates, [{ state: 'active+clean', count: 33 }]);
  t.is(s.pgCount, 33);
  t.is(s.health, 'HEALTH_OK');
  t.deepEqual(await api.health(), { status: 'HEALTH_OK', checks: [] });
});

test('one OSD down: PGs degrade, HEALTH_WARN with the real check names, and the gates refuse', async (t) => {
  const { cluster } = newCluster();
  withOsds(cluster, 3);
  const api = apiOf(cluster);
  await api.poolCreate('rbd', 32);
  cluster.enableApplication('rbd', 'rbd');
  cluster.writeData('rbd', 300 * 1024 ** 3);
  cluster.killOsd(0);
  const s = await api.status();
  t.is(s.health, 'HEALTH_WARN');
  t.deepEqual([s.osdUp, s.osdIn], [2, 3], 'down but still in');
  t.deepEqual(s.pgStates, [{ state: 'active+undersized+degraded', count: 33 }]);
  const h = await api.health();
  t.deepEqual(
    h.checks.map((c) => c.code),
    ['OSD_DOWN', 'OSD_HOST_DOWN', 'PG_DEGRADED'],
  );
  const byCode = new Map(h.checks.map((c) => [c.code, c]));
  t.is(byCode.get('OSD_DOWN')?.message, '1 osds down');
  t.deepEqual(byCode.get('OSD_DOWN')?.detail, ['osd.0 (root=default,host=h1) is down']);
  t.is(byCode.get('OSD_HOST_DOWN')?.message, '1 host (1 osds) down');
  t.regex(
    byCode.get('PG_DEGRADED')?.message ?? '',
    /^Degraded data redundancy: \d+\/\d+ objects degraded \(33\.3\d\d%\), 33 pgs degraded, 33 pgs undersized$/,
  );
  t.regex(byCode.get('PG_DEGRADED')?.detail[0] ?? '', /^pg \d+\.[0-9a-f]+ is active\+undersized\+degraded, acting \[\d,\d\]$/);

  const second = await api.okToStop([1]);
  t.false(second.ok, 'a second OSD down would leave PGs below min_size');
  t.is(second.reason, 'unsafe to stop osd(s) at this time (33 PGs are or would become offline)');
  t.true((await api.okToStop([0])).ok, 'the OSD that is already down changes nothing');

  const down = await api.safeToDestroy([0]);
  t.false(down.safe, 'down, but its data is not re-replicated yet');
  // Ceph 16 counts a down OSD as without stats while PGs are not clean (recorded, and the
  // mgr's code): missing_stats, not stored_pgs as this sim said before.
  t.deepEqual(down.missingStatsIds, [0]);
  const up = await api.safeToDestroy([1]);
  t.false(up.safe);
  t.deepEqual(up.activeIds, [1]);
  t.true((await api.safeToDestroy([99])).safe, 'an OSD that does not exist is safe to destroy');
});

test('two of three OSDs down: PGs fall below min_size and become inactive', async (t) => {
  const { cluster } = newCluster();
  withOsds(cluster, 3);
  const api = apiOf(cluster);
  await api.poolCreate('rbd', 16);
  cluster.stopOsd(0);
  cluster.stopOsd(1);
  const s = await api.status();
  t.deepEqual(s.pgStates, [{ state: 'undersized+degraded+peered', count: 17 }]);
  const h = await api.health();
  t.is(h.checks.find((c) => c.code === 'PG_AVAILABILITY')?.message, 'Reduced data availability: 17 pgs inactive');
  t.is(h.checks.find((c) => c.code === 'OSD_DOWN')?.message, '2 osds down');
});

test('a down OSD marked out moves its data: safe to destroy once every PG is clean again', async (t) => {
  const { cluster } = newCluster();
  withOsds(cluster, 4);
  const api = apiOf(cluster);
  await api.poolCreate('rbd', 32);
  cluster.killOsd(2);
  t.false((await api.safeToDestroy([2])).safe);
  cluster.markOut(2);
  const s = await api.status();
  t.deepEqual(s.pgStates, [{ state: 'active+clean', count: 33 }], 'three hosts left for size 3');
  t.is(s.health, 'HEALTH_OK', 'a down OSD that is out is not OSD_DOWN');
  t.true((await api.safeToDestroy([2])).safe);
  cluster.destroyOsd(2);
  t.deepEqual(
    (await api.osdDump()).osds.map((o) => o.id),
    [0, 1, 3],
  );
  t.is(await api.osdNew(uuidOf(9)), 2, 'the lowest free id is given out again');
});

test('the mon marks a down OSD out after mon_osd_down_out_interval; booting marks it in again', async (t) => {
  const { cluster, clock } = newCluster();
  withOsds(cluster, 4);
  const api = apiOf(cluster);
  cluster.killOsd(3);
  clock.advance(599_000);
  t.is((await api.status()).osdIn, 4);
  clock.advance(1_000);
  t.is((await api.status()).osdIn, 3);
  cluster.startOsd(3, 'h4', 4 * TB, 'hdd');
  const s = await api.status();
  t.deepEqual([s.osdUp, s.osdIn], [4, 4]);
  cluster.markOut(1);
  cluster.stopOsd(1);
  cluster.startOsd(1, 'h2', 4 * TB, 'hdd');
  t.is((await api.status()).osdIn, 3, "an operator's out stays out");
});

test('capacity sums the in OSDs; data counts once per replica; pools see what is left', async (t) => {
  const { cluster } = newCluster();
  withOsds(cluster, 3);
  const api = apiOf(cluster);
  await api.poolCreate('rbd', 32);
  const GiB = 1024 ** 3;
  let df = await api.df();
  t.is(df.totalBytes, 12 * TB);
  t.is(df.usedBytes, 3 * GiB, 'a fresh BlueStore OSD shows about 1 GiB used');
  t.is(df.availableBytes, df.totalBytes - df.usedBytes);
  cluster.writeData('rbd', 100 * GiB);
  t.deepEqual(
    (await api.health()).checks.map((c) => c.code),
    ['POOL_APP_NOT_ENABLED'],
    'data in a pool nobody claimed',
  );
  df = await api.df();
  const rbd = df.pools.find((p) => p.name === 'rbd');
  t.is(rbd?.storedBytes, 100 * GiB);
  t.is(rbd?.usedBytes, 300 * GiB);
  t.is(df.usedBytes, 3 * GiB + 300 * GiB);
  t.true(
    Math.abs((rbd?.maxAvailableBytes ?? 0) - (0.95 * 12 * TB - df.usedBytes) / 3) < 0.01 * TB,
    'max_avail is what full_ratio leaves, over size',
  );
  const s = await api.status();
  t.deepEqual([s.totalBytes, s.usedBytes, s.availableBytes], [df.totalBytes, df.usedBytes, df.availableBytes]);
  cluster.markOut(2);
  t.is((await api.df()).totalBytes, 8 * TB, 'an out OSD no longer counts');
});

test('an OSD filling past the ratios raises OSD_NEARFULL, then OSD_FULL as an error', async (t) => {
  const { cluster } = newCluster();
  withOsds(cluster, 3, 100 * 1024 ** 3);
  await apiOf(cluster).poolCreate('rbd', 8);
  cluster.writeData('rbd', 87 * 1024 ** 3);
  t.true(cluster.health().checks.some((c) => c.code === 'OSD_NEARFULL'));
  cluster.writeData('rbd', 10 * 1024 ** 3);
  const h = cluster.health();
  t.is(h.status, 'HEALTH_ERR');
  t.is(h.checks.find((c) => c.code === 'OSD_FULL')?.message, '3 full osd(s)');
});

test('too few OSDs for the default pool size: TOO_FEW_OSDS and undersized PGs', async (t) => {
  const { cluster } = newCluster();
  withOsds(cluster, 2);
  const api = apiOf(cluster);
  await api.poolCreate('rbd', 8);
  const h = await api.health();
  t.is(h.checks.find((c) => c.code === 'TOO_FEW_OSDS')?.message, 'OSD count 2 < osd_pool_default_size 3');
  t.deepEqual((await api.status()).pgStates, [{ state: 'active+undersized', count: 9 }], 'nothing is missing, only too few copies');
});

test('creating a pool beyond mon_max_pg_per_osd fails with ERANGE', async (t) => {
  const { cluster } = newCluster();
  withOsds(cluster, 3);
  const err = await t.throwsAsync(apiOf(cluster).poolCreate('huge', 1024), { instanceOf: CommandError });
  t.is(err.exitCode, 34);
  t.regex(
    err.stderr,
    /^Error ERANGE: pg_num 1024 size 3 would mean \d+ total pgs, which exceeds max 750 \(mon_max_pg_per_osd 250 \* num_in_osds 3\)/,
  );
});

test('mgr verbs wait for an active mgr: without one, df dies at its deadline', async (t) => {
  const { cluster } = newCluster();
  withOsds(cluster, 3);
  cluster.killMgr('x');
  const api = apiOf(cluster);
  t.false((await api.status()).mgrAvailable);
  t.deepEqual(
    (await api.health()).checks.map((c) => c.code),
    ['MGR_DOWN'],
  );
  const err = await t.throwsAsync(api.df({ timeoutMs: 1_000 }), { instanceOf: CommandError });
  t.is(err.signal, 'SIGTERM');
  cluster.startMgr('y', 'h2');
  t.is((await api.mgrStat()).activeName, 'y');
  t.is((await api.df()).totalBytes, 12 * TB);
});
