// The simulated cephx is as strict as Ceph 16's: a monitor's mkfs takes the keys of its keyring
// and makes up the initial ones it lacks (client.admin among them), so after a mkfs with only
// mon. the master's client.admin key is refused until the master imports it as mon.
import test, { type ExecutionContext } from 'ava';
import { randomBytes } from 'node:crypto';
import { CommandError } from '../../src/errors.js';
import { keyringText, newCephxKey } from '../../src/model/keyring.js';
import { SimCephApi, SimRgwApi } from '../../src/sim/ceph/api.js';
import { FSID, instant, newCluster } from './ceph-helpers.js';

const key = (): string => newCephxKey(Date.now(), randomBytes);
const ADMIN_CAPS = { mds: 'allow *', mgr: 'allow *', mon: 'allow *', osd: 'allow *' };

/** The sim as the master calls it: `keyOf` shows a key for the caller, `files` are keyrings by path. */
function api(
  cluster: ConstructorParameters<typeof SimCephApi>[0],
  keys: Record<string, string>,
  files: Record<string, string> = {},
): SimCephApi {
  return new SimCephApi(cluster, {
    sleep: instant,
    keyOf: async (entity) => keys[entity],
    readFile: async (p) => {
      const text = files[p];
      if (text === undefined) throw new Error(`ENOENT: ${p}`);
      return text;
    },
  });
}

function cluster(monKey: string, extra: Array<{ entity: string; key: string; caps: Record<string, string> }> = []) {
  const { cluster } = newCluster();
  cluster.bootstrap(FSID, { name: 'a', addr: '10.0.0.1', host: 'h1' }, undefined, [
    { entity: 'mon.', key: monKey, caps: { mon: 'allow *' } },
    ...extra,
  ]);
  cluster.startMon('a');
  return cluster;
}

const refusedAsCephx = (t: ExecutionContext, err: unknown): void => {
  t.true(err instanceof CommandError);
  t.is((err as CommandError).exitCode, 13);
  t.regex((err as CommandError).stderr, /\[errno 13\] RADOS permission denied \(error connecting to the cluster\)/);
};

test('sim cephx refuses the master client.admin after a mkfs with only mon., and takes it once imported as mon.', async (t) => {
  const [monKey, adminKey] = [key(), key()];
  const c = cluster(monKey);
  const files = { '/tmp/mon.keyring': keyringText({ entity: 'mon.', key: monKey, caps: {} }) };
  const master = api(c, { 'client.admin': adminKey }, files);
  // client.admin exists (the monitor made it up) but with a key nobody holds.
  t.true(c.accounts.entities.has('client.admin'));
  t.not(c.accounts.entities.get('client.admin')?.key, adminKey);
  refusedAsCephx(t, await master.status().catch((e: unknown) => e));
  refusedAsCephx(
    t,
    await master.authImport(keyringText({ entity: 'client.admin', key: adminKey, caps: ADMIN_CAPS })).catch((e: unknown) => e),
  );
  await master.authImport(keyringText({ entity: 'client.admin', key: adminKey, caps: ADMIN_CAPS }), {
    as: { name: 'mon.', keyring: '/tmp/mon.keyring' },
  });
  t.is((await master.status()).quorumNames.join(), 'a');
  t.deepEqual((await master.authGet('client.admin'))?.caps, ADMIN_CAPS);
  // Importing the same key again changes nothing.
  await master.authImport(keyringText({ entity: 'client.admin', key: adminKey, caps: ADMIN_CAPS }), {
    as: { name: 'mon.', keyring: '/tmp/mon.keyring' },
  });
  t.is((await master.status()).monCount, 1);
});

test('sim cephx lets client.admin in at once when the mkfs keyring carried it (the flow that gave every monitor node the admin key)', async (t) => {
  const [monKey, adminKey] = [key(), key()];
  const c = cluster(monKey, [{ entity: 'client.admin', key: adminKey, caps: ADMIN_CAPS }]);
  t.is((await api(c, { 'client.admin': adminKey }).status()).monCount, 1);
});

test('sim cephx refuses an import as mon. with a key that is not the cluster mon. key', async (t) => {
  const c = cluster(key());
  const files = { '/k': keyringText({ entity: 'mon.', key: key(), caps: {} }), '/empty': '' };
  const master = api(c, {}, files);
  const admin = keyringText({ entity: 'client.admin', key: key(), caps: ADMIN_CAPS });
  refusedAsCephx(t, await master.authImport(admin, { as: { name: 'mon.', keyring: '/k' } }).catch((e: unknown) => e));
  refusedAsCephx(t, await master.authImport(admin, { as: { name: 'mon.', keyring: '/empty' } }).catch((e: unknown) => e));
  refusedAsCephx(t, await master.authImport(admin, { as: { name: 'mon.', keyring: '/missing' } }).catch((e: unknown) => e));
});

test('sim cephx auth import needs mon allow *: a daemon key cannot import client.admin', async (t) => {
  const [monKey, adminKey, mgrKey] = [key(), key(), key()];
  const c = cluster(monKey, [{ entity: 'client.admin', key: adminKey, caps: ADMIN_CAPS }]);
  c.accounts.put('mgr.x', { mon: 'allow profile mgr' }, mgrKey);
  const asMgr = api(c, {}, { '/mgr': keyringText({ entity: 'mgr.x', key: mgrKey, caps: {} }) });
  const err = await asMgr
    .authImport(keyringText({ entity: 'client.admin', key: key(), caps: ADMIN_CAPS }), { as: { name: 'mgr.x', keyring: '/mgr' } })
    .catch((e: unknown) => e);
  t.true(err instanceof CommandError);
  t.regex((err as CommandError).stderr, /Error EACCES: access denied/);
  t.is(c.accounts.entities.get('client.admin')?.key, adminKey, 'client.admin is unchanged');
});

test('sim cephx refuses a monitor mkfs without the mon. key, and a later monitor with another mon. key', (t) => {
  const { cluster: c } = newCluster();
  t.throws(
    () => c.bootstrap(FSID, { name: 'a', addr: '10.0.0.1' }, undefined, [{ entity: 'client.admin', key: key(), caps: ADMIN_CAPS }]),
    { message: /holds no mon\. key/ },
  );
  t.false(c.mons.bootstrapped);
  const monKey = key();
  c.bootstrap(
    FSID,
    { name: 'a', addr: '10.0.0.1' },
    [
      { name: 'a', addr: '10.0.0.1' },
      { name: 'b', addr: '10.0.0.2' },
    ],
    [{ entity: 'mon.', key: monKey, caps: { mon: 'allow *' } }],
  );
  t.throws(() => c.checkMonKey('b', [{ entity: 'mon.', key: key(), caps: {} }]), { message: /not the cluster's/ });
  t.notThrows(() => c.checkMonKey('b', [{ entity: 'mon.', key: monKey, caps: {} }]));
});

test('sim cephx refuses radosgw-admin with an unknown client.admin key too', async (t) => {
  const c = cluster(key());
  const rgw = new SimRgwApi(c, { sleep: instant, keyOf: async () => key() });
  const err = await rgw.userInfo('someone').catch((e: unknown) => e);
  t.true(err instanceof CommandError);
  t.regex((err as CommandError).stderr, /handle_auth_bad_method/);
});
