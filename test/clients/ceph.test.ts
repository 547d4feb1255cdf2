// CephClient's read-only queries, replayed from real Ceph 16.2.15 outputs
// (test/fixtures/ceph, recorded by record.sh).
//
// The tests against a live cluster at the end are registered ONLY when QUARRY_REAL_CEPH_CONF
// names a running cluster's ceph.conf (e.g. one from ceph-mini-cluster.sh); without it they do
// not exist at all, rather than being counted as skipped.
import test from 'ava';
import { FakeRunner } from '../helpers/fake-runner.js';
import { adminClient, cephArgs, expectJson, RECORDED } from './ceph-fixtures.js';
import { registerRealClusterTests } from './ceph-real.js';

const replay = (verb: string[], name: string) => {
  const runner = expectJson(new FakeRunner(), verb, name);
  return { runner, ceph: adminClient(runner) };
};

test('ceph status parses a healthy cluster: fsid, health, counts, bytes and PG states', async (t) => {
  const { runner, ceph } = replay(['status'], 'status');
  const s = await ceph.status();
  t.deepEqual(s, {
    fsid: RECORDED.fsid,
    health: 'HEALTH_OK',
    healthChecks: [],
    monCount: 1,
    quorumNames: ['a'],
    osdCount: 2,
    osdUp: 2,
    osdIn: 2,
    pgCount: 65,
    poolCount: 9,
    usedBytes: RECORDED.usedBytes,
    availableBytes: RECORDED.availableBytes,
    totalBytes: RECORDED.totalBytes,
    pgStates: [{ state: 'active+clean', count: 65 }],
    mgrAvailable: true,
  });
  runner.verify();
});

test('ceph status sends -c, --connect-timeout, -n, -k and --format json before the verb', async (t) => {
  const { runner, ceph } = replay(['status'], 'status');
  await ceph.status();
  const call = runner.calls[0];
  t.is(call?.cmd, 'ceph');
  t.deepEqual(call?.args, cephArgs('status'));
  t.is(call?.opts.timeoutMs, 30_000);
  t.is(call?.opts.onLine, undefined, 'stdout may hold keys: it is never streamed to a log');
});

test('ceph status of a degraded cluster lists the health checks and the down OSD', async (t) => {
  const { ceph } = replay(['status'], 'status-degraded');
  const s = await ceph.status();
  t.is(s.health, 'HEALTH_ERR');
  t.deepEqual(
    s.healthChecks.map((c) => [c.code, c.severity]),
    [
      ['MDS_ALL_DOWN', 'HEALTH_ERR'],
      ['MDS_UP_LESS_THAN_MAX', 'HEALTH_WARN'],
    ],
  );
  t.is(s.healthChecks[0]?.message, '1 filesystem is offline');
  t.deepEqual(s.healthChecks[0]?.detail, [], 'status carries no detail lines');
  t.deepEqual([s.osdCount, s.osdUp, s.osdIn, s.poolCount, s.pgCount], [3, 2, 3, 12, 89]);
});

test('ceph health detail: OK, and an error with its detail lines', async (t) => {
  t.deepEqual(await replay(['health', 'detail'], 'health-detail').ceph.health(), { status: 'HEALTH_OK', checks: [] });
  const h = await replay(['health', 'detail'], 'health-detail-degraded').ceph.health();
  t.is(h.status, 'HEALTH_ERR');
  t.deepEqual(h.checks[0], {
    code: 'MDS_ALL_DOWN',
    severity: 'HEALTH_ERR',
    message: '1 filesystem is offline',
    count: 1,
    detail: ['fs quarryfs is offline because no MDS is active for it.'],
    muted: false,
  });
});

test('ceph df gives the totals and every pool', async (t) => {
  const df = await replay(['df'], 'df').ceph.df();
  t.is(df.totalBytes, RECORDED.totalBytes);
  t.is(df.availableBytes, RECORDED.availableBytes);
  t.is(df.usedRawBytes, RECORDED.usedBytes);
  t.is(df.pools.length, 9);
  t.deepEqual(
    df.pools.find((p) => p.name === 'cephfs_metadata'),
    {
      id: 2,
      name: 'cephfs_metadata',
      storedBytes: 2306,
      objects: 22,
      usedBytes: 32768,
      percentUsed: RECORDED.metadataPercentUsed,
      maxAvailableBytes: RECORDED.poolMaxAvail,
    },
  );
});

test('ceph osd tree gives each OSD its status and host', async (t) => {
  const tree = await replay(['osd', 'tree'], 'osd-tree').ceph.osdTree();
  t.deepEqual(
    tree.nodes.map((n) => [n.id, n.name, n.type]),
    [
      [-1, 'default', 'root'],
      [-3, RECORDED.host, 'host'],
      [0, 'osd.0', 'osd'],
      [1, 'osd.1', 'osd'],
    ],
  );
  t.deepEqual(tree.nodes[2], {
    id: 0,
    name: 'osd.0',
    type: 'osd',
    children: [],
    status: 'up',
    host: RECORDED.host,
    deviceClass: 'hdd',
    crushWeight: 0.0019989013671875,
    reweight: 1,
    stray: false,
  });
  t.deepEqual(tree.nodes[1]?.children, [1, 0]);
});

test('ceph osd tree includes a new OSD that never booted as stray, down and without host', async (t) => {
  const tree = await replay(['osd', 'tree'], 'osd-tree-degraded').ceph.osdTree();
  const osd2 = tree.nodes.find((n) => n.id === 2);
  t.like(osd2, { name: 'osd.2', type: 'osd', status: 'down', stray: true });
  t.is(osd2?.host, undefined);
});

test('ceph osd stat and osd dump', async (t) => {
  t.deepEqual(await replay(['osd', 'stat'], 'osd-stat').ceph.osdStat(), {
    epoch: RECORDED.osdMapEpoch,
    numOsds: 2,
    numUpOsds: 2,
    numInOsds: 2,
    numRemappedPgs: 0,
  });
  const dump = await replay(['osd', 'dump'], 'osd-dump').ceph.osdDump();
  t.is(dump.fsid, RECORDED.fsid);
  t.deepEqual(dump.flags, ['sortbitwise', 'recovery_deletes', 'purged_snapdirs', 'pglog_hardlimit']);
  t.deepEqual(dump.osds[0], { id: 0, uuid: RECORDED.osd0Uuid, up: true, in: true, state: ['exists', 'up'] });
  t.deepEqual(dump.pools[1], { id: 2, name: 'cephfs_metadata', size: 1, minSize: 1, pgNum: 8, applications: ['cephfs'] });
});

test('ceph osd pool ls detail lists pools with their applications', async (t) => {
  const pools = await replay(['osd', 'pool', 'ls', 'detail'], 'osd-pool-ls-detail').ceph.poolList();
  t.deepEqual(
    pools.map((p) => p.name),
    [
      'device_health_metrics',
      'cephfs_metadata',
      'cephfs_data',
      '.rgw.root',
      'default.rgw.log',
      'default.rgw.control',
      'default.rgw.meta',
      'default.rgw.buckets.index',
      'default.rgw.buckets.data',
    ],
  );
  t.deepEqual(pools[2], {
    id: 3,
    name: 'cephfs_data',
    size: 1,
    minSize: 1,
    pgNum: 8,
    autoscaleMode: 'off',
    applications: ['cephfs'],
  });
});

test('ceph mon dump, mon stat and quorum_status', async (t) => {
  const dump = await replay(['mon', 'dump'], 'mon-dump').ceph.monDump();
  const v2 = `127.0.0.1:${RECORDED.monPort}`;
  const v1 = `127.0.0.1:${RECORDED.monPort + 1}`;
  const monA = {
    name: 'a',
    rank: 0,
    addr: `${v1}/0`,
    addrs: [
      { type: 'v2', addr: v2 },
      { type: 'v1', addr: v1 },
    ],
  };
  t.deepEqual(dump, { epoch: 1, fsid: RECORDED.fsid, mons: [monA], quorum: [0] });
  t.deepEqual(await replay(['mon', 'stat'], 'mon-stat').ceph.monStat(), {
    epoch: 1,
    numMons: 1,
    leader: 'a',
    quorum: [{ rank: 0, name: 'a' }],
  });
  t.deepEqual(await replay(['quorum_status'], 'quorum-status').ceph.quorumStatus(), {
    electionEpoch: 3,
    quorum: [0],
    quorumNames: ['a'],
    leader: 'a',
    monmap: { epoch: 1, fsid: RECORDED.fsid, mons: [monA] },
  });
});

test('ceph mgr stat', async (t) => {
  const m = await replay(['mgr', 'stat'], 'mgr-stat').ceph.mgrStat();
  t.deepEqual(m, { epoch: 4, available: true, activeName: 'x', numStandby: 0 });
});

test('ceph mds stat and fs dump read the FSMap: one fs with mds.a up:active', async (t) => {
  const expected = {
    epoch: 6,
    filesystems: [
      {
        id: 1,
        name: 'cephfs',
        maxMds: 1,
        metadataPoolId: 2,
        dataPoolIds: [3],
        daemons: [{ name: 'a', gid: RECORDED.mdsGid, rank: 0, state: 'up:active' }],
      },
    ],
    standbys: [],
  };
  t.deepEqual(await replay(['mds', 'stat'], 'mds-stat').ceph.mdsStat(), expected);
  t.deepEqual(await replay(['fs', 'dump'], 'fs-dump').ceph.fsDump(), expected);
});

test('ceph fs ls and fs status', async (t) => {
  const two = await replay(['fs', 'ls'], 'fs-ls-two').ceph.fsList();
  t.deepEqual(two[1], {
    name: 'quarryfs',
    metadataPool: 'quarryfs_metadata',
    metadataPoolId: 11,
    dataPools: ['quarryfs_data'],
    dataPoolIds: [12],
  });
  t.deepEqual(
    (await replay(['fs', 'ls'], 'fs-ls').ceph.fsList()).map((f) => f.name),
    ['cephfs'],
  );
  const st = await replay(['fs', 'status'], 'fs-status').ceph.fsStatus();
  t.deepEqual(st.mds, [{ name: 'a', rank: 0, state: 'active' }]);
  t.deepEqual(st.clients, [{ fs: 'cephfs', clients: 0 }]);
  t.like(st.pools[0], { id: 2, name: 'cephfs_metadata', type: 'metadata', usedBytes: 32768 });
});

test('ceph pg stat and versions', async (t) => {
  t.deepEqual(await replay(['pg', 'stat'], 'pg-stat').ceph.pgStat(), {
    ready: true,
    numPgs: 65,
    pgStates: [{ state: 'active+clean', count: 65 }],
  });
  const v = await replay(['versions'], 'versions').ceph.versions();
  t.deepEqual(v.overall, { [RECORDED.version]: 6 });
  t.deepEqual(Object.keys(v.byType), ['mon', 'mgr', 'osd', 'mds', 'rgw']);
  t.deepEqual(v.byType.osd, { [RECORDED.version]: 2 });
});

registerRealClusterTests(test);
