// The lab's Ceph answers a deletion's verbs as Ceph 16 does: `fs rm` only once the filesystem
// is failed, `osd pool rm` only with mon_allow_pool_delete and not under a filesystem, each of
// them idempotent; radosgw-admin's `bucket stats` and `user rm --purge-data`.
import test from 'ava';
import { CommandError } from '../../src/errors.js';
import type { SimCephCluster } from '../../src/sim/ceph/cluster.js';
import { SimCephRunner } from '../../src/sim/ceph/runner.js';
import { recorded } from '../clients/ceph-fixtures.js';
import { apiOf, instant, newCluster, rgwOf, withOsds } from './ceph-helpers.js';

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

// ---- the very replies recorded from Ceph 16.2.15 (test/fixtures/ceph/record-fs-delete.sh) ----
async function reply(cluster: SimCephCluster, cmd: 'ceph' | 'radosgw-admin', verb: string[]) {
  const runner = new SimCephRunner(cluster, { sleep: instant });
  try {
    const r = await runner.run(cmd, ['--format', 'json', ...verb], { timeoutMs: 30_000 });
    return { exitCode: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    if (!(err instanceof CommandError)) throw err;
    return { exitCode: err.exitCode, stderr: err.stderr };
  }
}

test('sim deletions answer fs fail/rm, osd pool rm, config and radosgw-admin user rm with the recorded words and exit codes', async (t) => {
  const { cluster } = newCluster();
  withOsds(cluster, 3);
  const api = apiOf(cluster);
  await api.poolCreate('cephfs_metadata', 8);
  await api.poolCreate('cephfs_data', 8);
  await api.fsNew('cephfs', 'cephfs_metadata', 'cephfs_data');
  cluster.startMds('a', 'h1');
  const same = async (name: string, verb: string[], cmd: 'ceph' | 'radosgw-admin' = 'ceph') => {
    const r = recorded(name);
    const got = await reply(cluster, cmd, verb);
    // A refusal's stdout is not the runner's to give (the client reads stderr and the code).
    const want =
      got.exitCode === 0 ? { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr } : { exitCode: r.exitCode, stderr: r.stderr };
    t.deepEqual(got, want, name);
  };
  await same('fs-rm-active', ['fs', 'rm', 'cephfs', '--yes-i-really-mean-it']);
  await same('pool-rm-in-use', ['osd', 'pool', 'rm', 'cephfs_data', 'cephfs_data', '--yes-i-really-really-mean-it']);
  await same('fs-fail', ['fs', 'fail', 'cephfs']);
  await same('fs-rm', ['fs', 'rm', 'cephfs', '--yes-i-really-mean-it']);
  await same('fs-rm-again', ['fs', 'rm', 'cephfs', '--yes-i-really-mean-it']);
  await same('fs-fail-missing', ['fs', 'fail', 'cephfs']);
  await same('config-get-allow-pool-delete', ['config', 'get', 'mon', 'mon_allow_pool_delete']);
  await same('config-set-allow-pool-delete', ['config', 'set', 'mon', 'mon_allow_pool_delete', 'true']);
  await same('config-get-allow-pool-delete-true', ['config', 'get', 'mon', 'mon_allow_pool_delete']);
  await same('pool-rm', ['osd', 'pool', 'rm', 'cephfs_data', 'cephfs_data', '--yes-i-really-really-mean-it']);
  await same('pool-rm-again', ['osd', 'pool', 'rm', 'cephfs_data', 'cephfs_data', '--yes-i-really-really-mean-it']);
  await same('config-rm-allow-pool-delete', ['config', 'rm', 'mon', 'mon_allow_pool_delete']);
  await same('config-get-allow-pool-delete-after', ['config', 'get', 'mon', 'mon_allow_pool_delete']);
  await rgwOf(cluster).userCreate({ uid: 'qdel', displayName: 'Qdel' });
  await same('rgw-bucket-stats-none', ['bucket', 'stats', '--uid=qdel'], 'radosgw-admin');
  await same('rgw-user-rm', ['user', 'rm', '--uid=qdel', '--purge-data'], 'radosgw-admin');
  await same('rgw-user-rm-missing', ['user', 'rm', '--uid=nobody', '--purge-data'], 'radosgw-admin');
});
