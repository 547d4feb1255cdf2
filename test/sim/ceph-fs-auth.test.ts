// CephFS, cephx entities and RGW users of the simulated cluster: the idempotency and the
// refusals of the real commands.
import test from 'ava';
import { CommandError } from '../../src/errors.js';
import { isCephxKey, newCephxKey } from '../../src/sim/ceph/keys.js';
import { seeded } from '../../src/sim/random.js';
import { apiOf, newCluster, rgwOf, uuidOf, withOsds } from './ceph-helpers.js';

test('fs new on a missing pool fails with ENOENT, then works once the pools exist', async (t) => {
  const { cluster } = newCluster();
  withOsds(cluster, 3);
  const api = apiOf(cluster);
  const err = await t.throwsAsync(api.fsNew('cephfs', 'cephfs_metadata', 'cephfs_data'), { instanceOf: CommandError });
  t.is(err.exitCode, 2);
  t.is(err.stderr, "Error ENOENT: pool 'cephfs_metadata' does not exist\n");
  await api.poolCreate('cephfs_metadata', 16);
  await api.poolCreate('cephfs_data', 32);
  t.deepEqual(await api.fsNew('cephfs', 'cephfs_metadata', 'cephfs_data'), { created: true });
  t.deepEqual(await api.fsNew('cephfs', 'cephfs_metadata', 'cephfs_data'), { created: false }, 'the same again is success');
  const list = await api.fsList();
  t.deepEqual(list, [{ name: 'cephfs', metadataPool: 'cephfs_metadata', metadataPoolId: 2, dataPools: ['cephfs_data'], dataPoolIds: [3] }]);
  const pools = await api.poolList();
  t.deepEqual(
    pools.filter((p) => p.name.startsWith('cephfs')).map((p) => p.applications),
    [['cephfs'], ['cephfs']],
  );
});

test('a filesystem without an MDS is offline; an MDS makes it active; losing it degrades it', async (t) => {
  const { cluster } = newCluster();
  withOsds(cluster, 3);
  const api = apiOf(cluster);
  await api.poolCreate('m', 16);
  await api.poolCreate('d', 16);
  await api.fsNew('fs1', 'm', 'd');
  let h = await api.health();
  t.is(h.status, 'HEALTH_ERR');
  t.deepEqual(
    h.checks.map((c) => [c.code, c.message]),
    [
      ['MDS_ALL_DOWN', '1 filesystem is offline'],
      ['MDS_UP_LESS_THAN_MAX', '1 filesystem is online with fewer MDS than max_mds'],
    ],
  );
  t.deepEqual(h.checks[0]?.detail, ['fs fs1 is offline because no MDS is active for it.'], 'the recorded detail line');
  cluster.startMds('a', 'h1');
  const mds = await api.mdsStat();
  t.deepEqual(
    mds.filesystems.map((f) => [f.name, f.daemons.map((d) => [d.name, d.state, d.rank])]),
    [['fs1', [['a', 'up:active', 0]]]],
  );
  t.is((await api.health()).status, 'HEALTH_OK');
  cluster.startMds('b', 'h2');
  t.deepEqual(
    (await api.mdsStat()).standbys.map((d) => [d.name, d.state]),
    [['b', 'up:standby']],
  );
  cluster.killMds('a');
  t.deepEqual(
    (await api.mdsStat()).filesystems[0]?.daemons.map((d) => d.name),
    ['b'],
    'the standby takes over',
  );
  cluster.killMds('b');
  h = await api.health();
  t.deepEqual(
    h.checks.map((c) => c.code),
    ['FS_DEGRADED', 'FS_WITH_FAILED_MDS', 'MDS_ALL_DOWN'],
  );
});

test('fs new refuses a metadata pool that already holds objects', async (t) => {
  const { cluster } = newCluster();
  withOsds(cluster, 3);
  const api = apiOf(cluster);
  await api.poolCreate('m', 16);
  await api.poolCreate('d', 16);
  cluster.writeData('m', 4096, 1);
  const err = await t.throwsAsync(api.fsNew('fs1', 'm', 'd'), { instanceOf: CommandError });
  t.is(err.exitCode, 22);
  t.regex(err.stderr, /pool 'm' already contains some objects/);
});

test('auth get-or-create returns the same key again and refuses other caps with EINVAL', async (t) => {
  const { cluster } = newCluster();
  withOsds(cluster, 3);
  const api = apiOf(cluster);
  const caps = { mon: 'allow r', osd: 'allow rw pool=rbd' };
  const first = await api.authGetOrCreate('client.node1', caps);
  t.true(isCephxKey(first.key));
  t.deepEqual(first.caps, caps);
  t.deepEqual(await api.authGetOrCreate('client.node1', caps), first);
  t.deepEqual(await api.authGetOrCreate('client.node1', { mon: 'allow r' }), first, 'a subset of the caps matches, as in AuthMonitor');
  const err = await t.throwsAsync(api.authGetOrCreate('client.node1', { mon: 'allow r', osd: 'allow rwx' }), { instanceOf: CommandError });
  t.is(err.exitCode, 22);
  t.is(err.stderr, 'Error EINVAL: key for client.node1 exists but cap osd does not match\n');
  t.deepEqual(await api.authGet('client.node1'), first);
  t.is(await api.authGet('client.nosuch'), undefined, 'ENOENT is undefined');
  t.deepEqual((await api.authGet('client.admin'))?.caps, { mds: 'allow *', mgr: 'allow *', mon: 'allow *', osd: 'allow *' });
});

test('osd new with a cephx secret registers the OSD key with the OSD profile', async (t) => {
  const { cluster } = newCluster();
  withOsds(cluster, 3);
  const api = apiOf(cluster);
  const secret = newCephxKey(seeded(3), Date.UTC(2026, 0, 1));
  const id = await api.osdNew(uuidOf(42), { cephxSecret: secret });
  t.deepEqual(await api.authGet(`osd.${id}`), {
    entity: `osd.${id}`,
    key: secret,
    caps: { mgr: 'allow profile osd', mon: 'allow profile osd', osd: 'allow *' },
  });
  await t.throwsAsync(api.osdNew(uuidOf(43), { cephxSecret: 'not-a-key' }), { instanceOf: CommandError, message: /exited with 22/ });
});

test('cephx keys have the type, timestamp and length header ceph-authtool writes', (t) => {
  const key = newCephxKey(seeded(1), 1_700_000_000_123);
  const raw = Buffer.from(key, 'base64');
  t.is(key.length, 40);
  t.true(key.startsWith('AQ'));
  t.deepEqual(
    [raw.readUInt16LE(0), raw.readUInt32LE(2), raw.readUInt32LE(6), raw.readUInt16LE(10), raw.length],
    [1, 1_700_000_000, 123_000_000, 16, 28],
  );
  t.true(isCephxKey('AQAAAAAAAAAAABAAcXVhcnJ5LWZha2Uta2V5IQ=='), "the fixtures' fake key is well-formed");
  t.is(newCephxKey(seeded(1), 0), newCephxKey(seeded(1), 0), 'a seeded lab gives the same keys');
});

test('RGW users: create generates S3 keys, info finds them, a second create is EEXIST', async (t) => {
  const { cluster } = newCluster();
  withOsds(cluster, 3);
  const rgw = rgwOf(cluster);
  const u = await rgw.userCreate({ uid: 'ci', displayName: 'CI user', email: 'ci@example.test' });
  t.is(u.userId, 'ci');
  t.is(u.email, 'ci@example.test');
  t.regex(u.keys[0]?.accessKey ?? '', /^[A-Z0-9]{20}$/);
  t.is(u.keys[0]?.secretKey.length, 40);
  t.deepEqual(await rgw.userInfo('ci'), u);
  t.is(await rgw.userInfo('nosuch'), undefined);
  const err = await t.throwsAsync(rgw.userCreate({ uid: 'ci', displayName: 'CI user' }), { instanceOf: CommandError });
  t.is(err.exitCode, 17);
  const given = await rgw.userCreate({ uid: 'app', displayName: 'App', accessKey: 'APPKEY00000000000001', secretKey: 's3cr3t' });
  t.deepEqual(given.keys, [{ user: 'app', accessKey: 'APPKEY00000000000001', secretKey: 's3cr3t' }]);
  t.is(given.email, undefined);
  t.true(cluster.osdmap.poolByName('.rgw.root') !== undefined, 'radosgw-admin created the zone pools');
  t.false(
    rgw.runner.calls.some((c) => c.includes('s3cr3t')),
    'the secret key never shows in a command line',
  );
});
