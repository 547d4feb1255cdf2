// The lab's Ceph answers the stop-gate questions (osd/mon/mds ok-to-stop) and the noout group
// flags from its own state, as strictly and in the same words as the recordings of Ceph 16.2.15
// (test/fixtures/ceph/record-stop-gates.sh): the cluster here is laid out like the recorded one
// (osd.0 and osd.1 on h1, osd.2 on h2, osd.3 on h3; 89 PGs of size 3 over a host rule, quarry-m1
// with min_size 1; mons a, b, c; an MDS with and without a standby).
import test from 'ava';
import { CommandError } from '../../src/errors.js';
import type { SimCephCluster } from '../../src/sim/ceph/cluster.js';
import { nooutOsds } from '../../src/sim/ceph/stop-gates.js';
import { adminClient, expectJson, recorded } from '../clients/ceph-fixtures.js';
import { FakeRunner } from '../helpers/fake-runner.js';
import { apiOf, newCluster, withMons, type ManualClock } from './ceph-helpers.js';

const POOLS: [string, number][] = [
  ['cephfs_metadata', 8],
  ['cephfs_data', 8],
  ['.rgw.root', 8],
  ['default.rgw.log', 8],
  ['default.rgw.control', 8],
  ['default.rgw.meta', 8],
  ['default.rgw.buckets.index', 8],
  ['default.rgw.buckets.data', 8],
  ['quarry-data', 16],
  ['quarry-m1', 8],
];
const ALL_PGS = 89;

function recordedLike(): { cluster: SimCephCluster; clock: ManualClock } {
  const { cluster, clock } = newCluster({ poolDefaultSize: 3, poolDefaultPgNum: 8 });
  withMons(cluster);
  cluster.startMgr('x', 'h1');
  for (const [id, host] of [
    [0, 'h1'],
    [1, 'h1'],
    [2, 'h2'],
    [3, 'h3'],
  ] as const) {
    cluster.createOsd(`00000000-0000-4000-8000-00000000000${id}`);
    cluster.startOsd(id, host, 2 * 1024 ** 3, 'hdd', { ip: '127.0.0.1', devicePath: `/dev/loop${id}` });
  }
  for (const [name, pgs] of POOLS) cluster.createPool(name, pgs);
  const m1 = cluster.osdmap.poolByName('quarry-m1');
  if (m1) m1.minSize = 1;
  cluster.newFs('cephfs', 'cephfs_metadata', 'cephfs_data');
  cluster.startMds('a', 'h1');
  return { cluster, clock };
}

/** One `ceph --format json VERB` against the sim, as exit code, stdout and stderr. */
async function call(cluster: SimCephCluster, verb: string[]): Promise<{ exitCode: number; stdout?: string; stderr: string }> {
  try {
    const r = await apiOf(cluster).runner.run('ceph', ['--format', 'json', ...verb], { timeoutMs: 30_000 });
    return { exitCode: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    if (!(err instanceof CommandError)) throw err;
    return { exitCode: err.exitCode ?? -1, stderr: err.stderr };
  }
}
const said = (name: string) => ({ exitCode: recorded(name).exitCode, stderr: recorded(name).stderr });

test('sim osd ok-to-stop: a set of OSDs is judged together, in the recorded words and JSON keys', async (t) => {
  const { cluster } = recordedLike();
  const api = apiOf(cluster);
  const host = await api.osdOkToStop([0, 1]);
  t.like(host, { ok: true, okPgs: ALL_PGS, notOkPgs: 0 });
  t.is(host.becomeDegraded.length, ALL_PGS, 'every PG has one replica on h1');
  t.like(await api.osdOkToStop([2]), { ok: true, okPgs: ALL_PGS });
  t.deepEqual(
    await call(cluster, ['osd', 'ok-to-stop', '0', '1', '2', '3']).then(({ exitCode, stderr }) => ({ exitCode, stderr })),
    said('osd-ok-to-stop-all'),
  );
  const two = await api.osdOkToStop([0, 2]);
  t.false(two.ok);
  t.is(two.notOkPgs + two.okPgs, ALL_PGS);
  t.is(two.becomeInactive.length, two.notOkPgs);
  t.is(two.reason, `unsafe to stop osd(s) at this time (${two.notOkPgs} PGs are or would become offline)`);
  t.deepEqual(
    two.becomeInactive,
    [...two.becomeInactive].sort(
      (a, b) =>
        Number(a.split('.')[0]) - Number(b.split('.')[0]) || parseInt(a.split('.')[1] ?? '', 16) - parseInt(b.split('.')[1] ?? '', 16),
    ),
    "PGs in Ceph's order",
  );
  t.like(await api.osdOkToStop([2, 99]), { ok: true, osds: [2, 99] });
  // The JSON has the recorded keys, lists only when not empty.
  const keys = (stdout: string | undefined) => Object.keys(JSON.parse(stdout ?? '{}') as object).sort();
  const raw = await apiOf(cluster).runner.run('ceph', ['--format', 'json', 'osd', 'ok-to-stop', '0', '1'], { timeoutMs: 30_000 });
  t.deepEqual(keys(raw.stdout), keys(recorded('osd-ok-to-stop-host').stdout));
});

test('sim osd ok-to-stop with a host down: the rest of a PG must keep min_size; degraded PGs become more degraded', async (t) => {
  const { cluster } = recordedLike();
  const api = apiOf(cluster);
  cluster.killOsd(3);
  const other = await call(cluster, ['osd', 'ok-to-stop', '2']);
  t.deepEqual({ exitCode: other.exitCode, stderr: other.stderr }, said('osd-ok-to-stop-degraded-other-host'));
  const r = await api.osdOkToStop([2]);
  t.is(r.becomeMoreDegraded.length, 8, 'quarry-m1 (min_size 1) stays available on one replica');
  t.true(r.becomeMoreDegraded.every((pg) => pg.startsWith(`${cluster.osdmap.poolByName('quarry-m1')?.id}.`)));
  t.like(await api.osdOkToStop([3]), { ok: true, okPgs: 0, notOkPgs: 0 }, 'the OSD already down is in no acting set');
  const same = await api.osdOkToStop([0]);
  t.false(same.ok);
  t.true(same.becomeInactive.length > 0 && same.becomeInactive.length < 81, 'only the PGs osd.0 holds');
});

test('sim osd ok-to-stop: a PG already inactive on the set is not ok; unknown PG states are EAGAIN', async (t) => {
  const { cluster } = recordedLike();
  cluster.killOsd(2);
  cluster.killOsd(3);
  const r = await apiOf(cluster).osdOkToStop([0]);
  t.false(r.ok);
  t.true(r.alreadyInactive.length > 0, 'PGs with one replica up left are peered, not active');
  t.deepEqual(
    r.becomeInactive.filter((pg) => !pg.startsWith(`${cluster.osdmap.poolByName('quarry-m1')?.id}.`)),
    [],
  );
  const { cluster: empty } = newCluster({ poolDefaultSize: 3, poolDefaultPgNum: 8 });
  withMons(empty);
  empty.startMgr('x', 'h1');
  empty.createPool('p', 4);
  const unknown = await call(empty, ['osd', 'ok-to-stop', '0']);
  t.is(unknown.exitCode, 11);
  t.is(unknown.stderr, 'Error EAGAIN: 5 pgs have unknown state; cannot draw any conclusions\n');
  t.like(await apiOf(empty).osdOkToStop([0]), { ok: false, unknown: ['1.0', '2.0', '2.1', '2.2', '2.3'] });
});

test('sim mon ok-to-stop: the quorum left must be a majority of the monmap, as recorded', async (t) => {
  const { cluster } = recordedLike();
  const asks: [string[], string][] = [
    [['a'], 'mon-ok-to-stop-one'],
    [['a', 'b'], 'mon-ok-to-stop-two'],
    [['z'], 'mon-ok-to-stop-unknown'],
    [['b', 'z'], 'mon-ok-to-stop-unknown-and-one'],
  ];
  for (const [names, name] of asks) {
    const r = await call(cluster, ['mon', 'ok-to-stop', ...names]);
    t.deepEqual({ exitCode: r.exitCode, stderr: r.stderr }, said(name), name);
  }
  cluster.killMon('c');
  for (const [names, name] of [
    [['a'], 'mon-ok-to-stop-one-down'],
    [['c'], 'mon-ok-to-stop-the-down-one'],
  ] as const) {
    const r = await call(cluster, ['mon', 'ok-to-stop', ...names]);
    t.deepEqual({ exitCode: r.exitCode, stderr: r.stderr }, said(name), name);
  }
  t.like(await apiOf(cluster).monOkToStop(['a']), { ok: false, remaining: ['b'] });
});

test("sim mds ok-to-stop: an active MDS needs an available standby, as recorded (gids are the sim's)", async (t) => {
  const { cluster } = recordedLike();
  const gid = (name: string) => String(cluster.fsmap.mds.get(name)?.gid);
  const asGids = (name: string, gids: Record<string, string>) => {
    const r = said(name);
    return { ...r, stderr: r.stderr.replace(/\b(4160|4474)\b/g, (g) => gids[g] ?? g) };
  };
  const alone = await call(cluster, ['mds', 'ok-to-stop', 'a']);
  t.deepEqual({ exitCode: alone.exitCode, stderr: alone.stderr }, asGids('mds-ok-to-stop-no-standby', { 4160: gid('a') }));
  cluster.startMds('b', 'h2');
  for (const [names, name] of [
    [['a'], 'mds-ok-to-stop-active'],
    [['b'], 'mds-ok-to-stop-standby'],
    [['a', 'b'], 'mds-ok-to-stop-both'],
    [['zz'], 'mds-ok-to-stop-unknown'],
  ] as const) {
    const r = await call(cluster, ['mds', 'ok-to-stop', ...names]);
    t.deepEqual({ exitCode: r.exitCode, stderr: r.stderr }, asGids(name, { 4160: gid('a'), 4474: gid('b') }), name);
  }
  t.like(await apiOf(cluster).mdsOkToStop(['a', 'b']), { ok: false, activeGids: [Number(gid('a'))], standbyGids: [Number(gid('b'))] });
  cluster.killMds('b');
  t.like(await apiOf(cluster).mdsOkToStop(['a']), { ok: false }, 'a stopped standby stands in for nobody');
});

test('sim osd set-group/unset-group noout: the recorded answers, osd dump and health, and what noout does', async (t) => {
  const { cluster, clock } = recordedLike();
  const api = apiOf(cluster);
  for (const [verb, name] of [
    [['osd', 'set-group', 'noout', 'h3'], 'osd-set-group-noout-host'],
    [['osd', 'set-group', 'noout', 'h3'], 'osd-set-group-noout-host-again'],
    [['osd', 'set-group', 'noout', 'osd.0', 'osd.1'], 'osd-set-group-noout-osds'],
    [['osd', 'set-group', 'noout', 'nosuchhost'], 'osd-set-group-noout-unknown'],
    [['osd', 'set-group', 'noout', 'osd.99'], 'osd-set-group-noout-unknown-osd'],
  ] as const) {
    const r = await call(cluster, [...verb]);
    t.deepEqual({ exitCode: r.exitCode, stderr: r.stderr }, said(name), name);
    if (r.exitCode === 0) t.is(r.stdout, recorded(name).stdout, name);
  }
  // The same typed values as the real client reads from the recordings.
  const real = new FakeRunner();
  expectJson(real, ['osd', 'dump'], 'osd-dump-noout');
  expectJson(real, ['osd', 'tree'], 'osd-tree-noout');
  expectJson(real, ['health', 'detail'], 'health-detail-noout-down');
  const recordedClient = adminClient(real);
  t.deepEqual(await api.osdNoout(), await recordedClient.osdNoout());
  // osd.3, all of h3, dies and stays down past mon_osd_down_out_interval: noout keeps it in.
  cluster.killOsd(3);
  clock.advance(cluster.options.downOutIntervalMs + 1);
  const flags = (h: Awaited<ReturnType<typeof api.health>>) => h.checks.find((c) => c.code === 'OSD_FLAGS');
  t.deepEqual(flags(await api.health()), flags(await recordedClient.health()));
  t.like(
    (await api.osdDump()).osds.find((o) => o.id === 3),
    { in: true, up: false, state: ['exists'] },
  );
  t.deepEqual(nooutOsds(cluster), [0, 1, 3]);
  // Unset: the next tick marks it out, as the mon does ("autoout").
  for (const [verb, name] of [
    [['osd', 'unset-group', 'noout', 'h3'], 'osd-unset-group-noout-host'],
    [['osd', 'unset-group', 'noout', 'h3'], 'osd-unset-group-noout-host-again'],
    [['osd', 'unset-group', 'noout', 'osd.0', 'osd.1'], 'osd-unset-group-noout-osds'],
  ] as const) {
    const r = await call(cluster, [...verb]);
    t.deepEqual({ exitCode: r.exitCode, stderr: r.stderr }, said(name), name);
  }
  cluster.tick();
  t.like(
    (await api.osdDump()).osds.find((o) => o.id === 3),
    { in: false, state: ['autoout', 'exists'] },
  );
  t.is(flags(await api.health()), undefined, 'OSD_FLAGS is gone');
  t.deepEqual(await api.osdNoout(), { cluster: false, osds: [], crushNodes: {}, deviceClasses: {}, effective: [] });
});

test('sim osd set-group: the API verbs, an epoch only on a change, and a purged OSD forgets its flags', async (t) => {
  const { cluster } = recordedLike();
  const api = apiOf(cluster);
  const epoch = cluster.osdmap.epoch;
  t.deepEqual(await api.osdSetGroup(['noout', 'noin'], ['osd.2', 'osd.7']), { missing: ['osd.7'] });
  t.is(cluster.osdmap.epoch, epoch + 1);
  await api.osdSetGroup(['noout', 'noin'], ['osd.2']);
  t.is(cluster.osdmap.epoch, epoch + 1, 'setting what is set changes nothing');
  const h = await api.health();
  t.deepEqual(h.checks.find((c) => c.code === 'OSD_FLAGS')?.detail, ['osd.2 has flags noin,noout']);
  await api.osdSetGroup(['noout'], ['default']);
  t.deepEqual((await api.osdNoout()).effective, [0, 1, 2, 3], 'the root holds every OSD under it');
  await api.osdUnsetGroup(['noout'], ['default']);
  cluster.killOsd(2);
  cluster.purgeOsd(2);
  t.deepEqual(await api.osdNoout(), { cluster: false, osds: [], crushNodes: {}, deviceClasses: {}, effective: [] });
  await t.throwsAsync(api.osdSetGroup(['noout'], ['nosuchhost']), {
    instanceOf: CommandError,
    message: /unable to parse osd id or crush node/,
  });
});
