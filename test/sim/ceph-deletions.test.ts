// The lab's Ceph answers a deletion's verbs as Ceph 16 does: `fs rm` only once the filesystem
// is failed, `osd pool rm` only with mon_allow_pool_delete and not under a filesystem, each of
// them idempotent; radosgw-admin's `bucket stats` and `user rm --purge-data`.
import test from 'ava';
import { CommandError } from '../../src/errors.js';
import { apiOf, newCluster, rgwOf, withOsds } from './ceph-helpers.js';

test('sim deletions: a served filesystem is failed, removed, and its pools removed with pool deletion allowed', async (t) => {
  const { cluster } = newCluster();
  withOsds(cluster, 3);
  const api = apiOf(cluster);
  await api.poolCreate('m', 16);
  await api.poolCreate('d', 16);
  await api.fsNew('fs1', 'm', 'd');
  cluster.startMds('a', 'h1');
  const busy = await t.throwsAsync(api.fsRm('fs1'), { instanceOf: CommandError });
  t.is(busy.exitCode, 22);
  t.regex(busy.stderr, /all MDS daemons must be inactive\/failed before removing filesystem/);
  const inUse = await t.throwsAsync(api.poolRm('d'), { instanceOf: CommandError });
  t.is(inUse.exitCode, 16);
  t.regex(inUse.stderr, /pool 'd' is in use by CephFS/);

  t.deepEqual(await api.fsFail('fs1'), { removed: true });
  t.is((await api.mdsStat()).standbys.length, 1, 'its MDS is a standby again, and takes no rank of it');
  t.deepEqual(await api.fsRm('fs1'), { removed: true });
  t.deepEqual(await api.fsRm('fs1'), { removed: false }, 'gone already is success');
  t.deepEqual(await api.fsFail('fs1'), { removed: false }, 'ENOENT is "gone already"');
  t.deepEqual(await api.fsList(), []);

  const refused = await t.throwsAsync(api.poolRm('d'), { instanceOf: CommandError });
  t.is(refused.exitCode, 1);
  t.regex(refused.stderr, /pool deletion is disabled; you must first set the mon_allow_pool_delete config option to true/);
  t.is(await api.configGet('mon', 'mon_allow_pool_delete'), 'false');
  await api.configSet('mon', 'mon_allow_pool_delete', 'true');
  t.is(await api.configGet('mon', 'mon_allow_pool_delete'), 'true');
  t.deepEqual(await api.poolRm('d'), { removed: true });
  t.deepEqual(await api.poolRm('m'), { removed: true });
  t.deepEqual(await api.poolRm('m'), { removed: false }, 'gone already is success');
  await api.configRm('mon', 'mon_allow_pool_delete');
  t.is(await api.configGet('mon', 'mon_allow_pool_delete'), 'false', 'back to the default');
  t.false((await api.poolList()).some((p) => p.name === 'm' || p.name === 'd'));
});

test('sim deletions: an RGW user with buckets is listed with their usage and removed with --purge-data', async (t) => {
  const { cluster } = newCluster();
  withOsds(cluster, 3);
  const rgw = rgwOf(cluster);
  await rgw.userCreate({ uid: 'alice', displayName: 'Alice' });
  cluster.buckets.create('alice', 'photos');
  cluster.buckets.put('alice', 'photos', 'a', Buffer.alloc(100), 'application/octet-stream');
  cluster.buckets.create('alice', 'empty');
  t.deepEqual(await rgw.bucketStats('alice'), [
    { bucket: 'empty', objects: 0, bytes: 0 },
    { bucket: 'photos', objects: 1, bytes: 100 },
  ]);
  t.deepEqual(await rgw.bucketStats('nobody'), [], 'a user RGW does not know owns nothing');
  t.deepEqual(await rgw.userRm('alice'), { removed: true });
  t.is(await rgw.userInfo('alice'), undefined);
  t.deepEqual(cluster.buckets.owned('alice'), []);
  t.deepEqual(await rgw.userRm('alice'), { removed: false }, 'gone already is success');
});
