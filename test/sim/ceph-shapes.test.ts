// The simulation cannot drift from reality: its raw JSON has the keys the real Ceph 16.2.15
// printed (test/fixtures/ceph), nothing invented and nothing left out beyond the list below,
// and the typed values SimCephApi returns have the same shape as those the real CephClient
// parses from the recorded outputs.
import test from 'ava';
import { readFileSync } from 'node:fs';
import type { SimCephCluster } from '../../src/sim/ceph/cluster.js';
import { SimCephRunner } from '../../src/sim/ceph/runner.js';
import { adminClient, expectJson, expectRecorded } from '../clients/ceph-fixtures.js';
import { FakeRunner } from '../helpers/fake-runner.js';
import { apiOf, FSID, instant, newCluster } from './ceph-helpers.js';

const DIR = new URL('../../../test/fixtures/ceph/', import.meta.url);
const fixture = (name: string): unknown => JSON.parse(readFileSync(new URL(`${name}.json`, DIR), 'utf8'));

/** Keys whose children are data (daemon names, check codes, gids), not fields. */
const DATA_KEYED = [
  /(^|\.)checks$/,
  /services$/,
  /daemons$/,
  /\.info$/,
  /mdsmap\.up$/,
  /application_metadata$/,
  /stats_by_class$/,
  /erasure_code_profiles$/,
  /options$/,
  /metadata$/,
  /^(mon|mgr|osd|mds|rgw|overall)$/,
  /(^|\.)caps$/,
  /byType(\.\*)?$/,
];

/** Every key path of a JSON value: arrays merge their items, data-keyed maps become `*`. */
function paths(v: unknown, prefix = '', out = new Set<string>()): Set<string> {
  if (Array.isArray(v)) {
    for (const x of v) paths(x, `${prefix}[]`, out);
  } else if (v !== null && typeof v === 'object') {
    const data = DATA_KEYED.some((r) => r.test(prefix));
    for (const [k, x] of Object.entries(v)) {
      const p = prefix === '' ? (data ? '*' : k) : `${prefix}.${data ? '*' : k}`;
      out.add(p);
      paths(x, p, out);
    }
  }
  return out;
}

/** The recorded cluster (what record.sh recorded, docs/real-components.md "Output shapes"): 1 mon, 1 mgr, 2 OSDs on one host, size-1
 * pools of 8 PGs, CephFS with an active MDS, one RGW with a user. */
function recordedLike(): SimCephCluster {
  const { cluster } = newCluster({ poolDefaultSize: 1, poolDefaultPgNum: 8, failureDomain: 'osd' });
  cluster.bootstrap(FSID, { name: 'a', addr: '127.0.0.1:27400', host: 'vm' });
  cluster.startMon('a');
  cluster.startMgr('x', 'vm');
  for (const i of [0, 1]) {
    cluster.createOsd(`46d19248-0243-482c-a750-e9efd959e19${i}`);
    cluster.startOsd(i, 'vm', 2 * 1024 ** 3, 'hdd', { ip: '127.0.0.1', devicePath: `/dev/loop${i}` });
  }
  cluster.createPool('cephfs_metadata');
  cluster.createPool('cephfs_data');
  cluster.newFs('cephfs', 'cephfs_metadata', 'cephfs_data');
  cluster.startMds('a', 'vm', '127.0.0.1');
  cluster.startRgw('gw1', 27402, 'vm');
  cluster.accounts.createUser({ uid: 'quarry-fixture', displayName: 'Quarry Fixture', email: 'fixture@quarry.test' });
  cluster.accounts.getOrCreate('client.quarry-fixture', { mon: 'allow r', osd: 'allow rw pool=quarry-fixture' });
  return cluster;
}

async function raw(cluster: SimCephCluster, cmd: string, verb: string[]): Promise<unknown> {
  const { stdout } = await new SimCephRunner(cluster, { sleep: instant }).run(cmd, ['--format', 'json', ...verb], { timeoutMs: 30_000 });
  return JSON.parse(stdout);
}

/** Fixture paths the sim leaves out, and why. */
const NOT_SIMULATED: Record<string, RegExp[]> = {
  // Client I/O rates: the sim has no I/O (Ceph also omits them when idle, see status-degraded).
  status: [/^pgmap\.(read|write)_(bytes|op)_(sec|per_sec)$/],
  'pg-stat': [/^pg_summary\.(read_bytes_sec|write_bytes_sec|io_sec)$/],
  // Per-OSD and per-pool internals nobody reads: heartbeat addresses, xinfo, PG merge and
  // cache-tier tuning.
  'osd-dump': [
    /heartbeat_/,
    /^osd_xinfo\[\]\./,
    /^pools\[\]\.(peering_crush|last_pg_merge_meta|last_force_op|hit_set|cache_|target_max|min_(read|write)_recency|grade_|use_gmt)/,
  ],
  'osd-pool-ls-detail': [
    /^\[\]\.(peering_crush|last_pg_merge_meta|last_force_op|hit_set|cache_|target_max|min_(read|write)_recency|grade_|use_gmt)/,
  ],
  // MDS feature bits.
  'mds-stat': [/compat/],
  'fs-dump': [/compat/],
};

const RAW: [string, string, string[]][] = [
  ['status', 'ceph', ['status']],
  ['health-detail', 'ceph', ['health', 'detail']],
  ['df', 'ceph', ['df']],
  ['osd-tree', 'ceph', ['osd', 'tree']],
  ['osd-stat', 'ceph', ['osd', 'stat']],
  ['osd-dump', 'ceph', ['osd', 'dump']],
  ['osd-pool-ls-detail', 'ceph', ['osd', 'pool', 'ls', 'detail']],
  ['mon-dump', 'ceph', ['mon', 'dump']],
  ['mon-stat', 'ceph', ['mon', 'stat']],
  ['quorum-status', 'ceph', ['quorum_status']],
  ['mgr-stat', 'ceph', ['mgr', 'stat']],
  ['mds-stat', 'ceph', ['mds', 'stat']],
  ['fs-dump', 'ceph', ['fs', 'dump']],
  ['fs-ls', 'ceph', ['fs', 'ls']],
  ['fs-status', 'ceph', ['fs', 'status']],
  ['pg-stat', 'ceph', ['pg', 'stat']],
  ['versions', 'ceph', ['versions']],
  ['auth-get', 'ceph', ['auth', 'get', 'client.quarry-fixture']],
  ['osd-df', 'ceph', ['osd', 'df']],
];

for (const [name, cmd, verb] of RAW) {
  test(`sim ${cmd} ${verb.join(' ')} has the keys of the recorded ${name}.json`, async (t) => {
    const real = paths(fixture(name));
    const sim = paths(await raw(recordedLike(), cmd, verb));
    t.deepEqual(
      [...sim].filter((p) => !real.has(p)),
      [],
      'keys Ceph does not print',
    );
    const allowed = NOT_SIMULATED[name] ?? [];
    t.deepEqual(
      [...real].filter((p) => !sim.has(p) && !allowed.some((r) => r.test(p))),
      [],
      'keys Ceph prints that the sim lacks',
    );
  });
}

/** recordedLike with OSD 1 stopped and destroyed; with `fresh`, a new OSD 2 of class ssd too. */
function withDestroyed(fresh: boolean): SimCephCluster {
  const cluster = recordedLike();
  cluster.stopOsd(1);
  cluster.destroyOsdKeepingId(1);
  if (fresh) cluster.createOsd('e5875f0e-05f1-4655-b787-e92ce09ef0e8', { deviceClass: 'ssd' });
  return cluster;
}

for (const [name, verb, fresh] of [
  ['osd-dump-destroyed', ['osd', 'dump'], false],
  ['osd-tree-destroyed', ['osd', 'tree'], false],
  ['osd-tree-reused-ssd', ['osd', 'tree'], true],
  ['osd-df-destroyed', ['osd', 'df'], false],
] as const) {
  test(`sim ceph ${verb.join(' ')} with a destroyed OSD has the keys of the recorded ${name}.json`, async (t) => {
    const real = paths(fixture(name));
    const sim = paths(await raw(withDestroyed(fresh), 'ceph', [...verb]));
    const allowed = NOT_SIMULATED['osd-dump'] ?? [];
    t.deepEqual(
      [...sim].filter((p) => !real.has(p)),
      [],
      'keys Ceph does not print',
    );
    t.deepEqual(
      [...real].filter((p) => !sim.has(p) && !allowed.some((r) => r.test(p))),
      [],
      'keys Ceph prints that the sim lacks',
    );
  });
}

test('sim radosgw-admin user info has the keys of the recorded one', async (t) => {
  const recorded = JSON.parse(readFileSync(new URL('rgw-user-info.result.json', DIR), 'utf8')) as { stdout: string };
  const sim = await raw(recordedLike(), 'radosgw-admin', ['user', 'info', '--uid=quarry-fixture']);
  t.deepEqual([...paths(sim)].sort(), [...paths(JSON.parse(recorded.stdout))].sort());
});

test('sim health detail with failing checks has the keys of the recorded degraded one', async (t) => {
  const cluster = recordedLike();
  cluster.createPool('quarryfs_metadata');
  cluster.createPool('quarryfs_data');
  cluster.newFs('quarryfs', 'quarryfs_metadata', 'quarryfs_data');
  const h = await raw(cluster, 'ceph', ['health', 'detail']);
  t.deepEqual([...paths(h)].sort(), [...paths(fixture('health-detail-degraded'))].sort());
  t.deepEqual(h, fixture('health-detail-degraded'), 'the very same checks, messages and detail lines');
});

// ---- typed values: the sim through SimCephApi vs the recordings through the real CephClient ---
type Query = (c: ReturnType<typeof adminClient>) => Promise<unknown>;
const TYPED: [string, string[], string, Query, boolean?][] = [
  ['status', ['status'], 'status', (c) => c.status()],
  ['health', ['health', 'detail'], 'health-detail-degraded', (c) => c.health()],
  ['df', ['df'], 'df', (c) => c.df()],
  ['osdTree', ['osd', 'tree'], 'osd-tree-degraded', (c) => c.osdTree()],
  ['osdStat', ['osd', 'stat'], 'osd-stat', (c) => c.osdStat()],
  ['osdDump', ['osd', 'dump'], 'osd-dump', (c) => c.osdDump()],
  ['poolList', ['osd', 'pool', 'ls', 'detail'], 'osd-pool-ls-detail', (c) => c.poolList()],
  ['monDump', ['mon', 'dump'], 'mon-dump', (c) => c.monDump()],
  ['monStat', ['mon', 'stat'], 'mon-stat', (c) => c.monStat()],
  ['quorumStatus', ['quorum_status'], 'quorum-status', (c) => c.quorumStatus()],
  ['mgrStat', ['mgr', 'stat'], 'mgr-stat', (c) => c.mgrStat()],
  ['mdsStat', ['mds', 'stat'], 'mds-stat', (c) => c.mdsStat()],
  ['fsDump', ['fs', 'dump'], 'fs-dump', (c) => c.fsDump()],
  ['fsList', ['fs', 'ls'], 'fs-ls', (c) => c.fsList()],
  ['fsStatus', ['fs', 'status'], 'fs-status', (c) => c.fsStatus()],
  ['pgStat', ['pg', 'stat'], 'pg-stat', (c) => c.pgStat()],
  ['versions', ['versions'], 'versions', (c) => c.versions()],
  ['authGet', ['auth', 'get', 'client.quarry-fixture'], 'auth-get', (c) => c.authGet('client.quarry-fixture')],
  [
    'authGetOrCreate',
    ['auth', 'get-or-create', 'client.quarry-fixture', 'mon', 'allow r', 'osd', 'allow rw pool=quarry-fixture'],
    'auth-get-or-create',
    (c) => c.authGetOrCreate('client.quarry-fixture', { mon: 'allow r', osd: 'allow rw pool=quarry-fixture' }),
  ],
  ['okToStop', ['osd', 'ok-to-stop', '0'], 'osd-ok-to-stop-0', (c) => c.okToStop([0]), true],
  ['safeToDestroy', ['osd', 'safe-to-destroy', '0'], 'osd-safe-to-destroy-0', (c) => c.safeToDestroy([0]), true],
  [
    'osdNew',
    ['osd', 'new', 'e5875f0e-05f1-4655-b787-e92ce09ef0e8'],
    'osd-new',
    (c) => c.osdNew('e5875f0e-05f1-4655-b787-e92ce09ef0e8'),
    true,
  ],
  ['poolCreate', ['osd', 'pool', 'create', 'quarry-fixture', '8'], 'osd-pool-create', (c) => c.poolCreate('quarry-fixture', 8), true],
  ['osdDf', ['osd', 'df'], 'osd-df', (c) => c.osdDf()],
  ['osdPurge', ['osd', 'purge', 'osd.7', '--yes-i-really-mean-it'], 'osd-purge-again', (c) => c.osdPurge(7), true],
];

for (const [method, verb, name, query, isResult] of TYPED) {
  test(`SimCephApi.${method} returns the shape the real client parses from ${name}`, async (t) => {
    const runner = new FakeRunner();
    if (isResult) expectRecorded(runner, verb, name);
    else expectJson(runner, verb, name);
    const real = await query(adminClient(runner));
    const cluster = recordedLike();
    if (method === 'health' || method === 'osdTree') {
      // The recordings of a degraded cluster: a filesystem without an MDS, an OSD not booted.
      cluster.createPool('quarryfs_metadata');
      cluster.createPool('quarryfs_data');
      cluster.newFs('quarryfs', 'quarryfs_metadata', 'quarryfs_data');
      cluster.createOsd('e5875f0e-05f1-4655-b787-e92ce09ef0e8');
    }
    const sim = await query(apiOf(cluster).client);
    t.deepEqual([...paths(sim)].sort(), [...paths(real)].sort());
  });
}
