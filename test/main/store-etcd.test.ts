// STORE=etcd: the settings refused with a clear message, and Quarry started on a real etcd,
// stopped and started again on the same state, which is in etcd and not under STATE_DIR.
import test from 'ava';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { loadConfig } from '../../src/config.js';
import { InputError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { startQuarry } from '../../src/main.js';
import { etcdEndpoints, etcdPrefix, useEtcd } from '../store/backends.js';
import { etcdQuarryConfig } from './etcd-quarry.js';

useEtcd(test);

test('store config: embedded is the default; STORE=etcd reads the endpoints, the prefix and the TLS files', (t) => {
  const plain = loadConfig({});
  t.is(plain.store, 'embedded');
  t.is(plain.etcd, null);
  const c = loadConfig(
    {
      STORE: 'etcd',
      ETCD_ENDPOINTS: 'https://10.0.0.1:2379, https://10.0.0.2:2379',
      ETCD_PREFIX: 'site-a/quarry/',
      ETCD_CA_FILE: 'tls/ca.pem',
      ETCD_CERT_FILE: '/etc/quarry/client.pem',
      ETCD_KEY_FILE: '/etc/quarry/client-key.pem',
      LEADER_LEASE_TTL_S: '5',
      ADVERTISE_URL: 'https://quarry-1.example:8080/',
    },
    '/srv',
  );
  t.is(c.store, 'etcd');
  t.deepEqual(c.etcd, {
    endpoints: ['https://10.0.0.1:2379', 'https://10.0.0.2:2379'],
    prefix: 'site-a/quarry/',
    caFile: '/srv/tls/ca.pem',
    certFile: '/etc/quarry/client.pem',
    keyFile: '/etc/quarry/client-key.pem',
    leaderLeaseTtlS: 5,
    advertiseUrl: 'https://quarry-1.example:8080',
  });
  t.like(loadConfig({ STORE: 'etcd', ETCD_ENDPOINTS: 'http://127.0.0.1:2379' }).etcd, {
    prefix: 'quarry/',
    leaderLeaseTtlS: 2,
    advertiseUrl: null,
  });
});

test('store config: bad settings are refused naming the variable and the fix', (t) => {
  const cases: [Record<string, string>, RegExp][] = [
    [{ STORE: 'postgres' }, /^STORE must be "embedded" or "etcd", got "postgres"$/],
    [{ STORE: 'etcd' }, /^STORE=etcd needs ETCD_ENDPOINTS/],
    [{ STORE: 'etcd', ETCD_ENDPOINTS: 'http://127.0.0.1:2379', LEADER_LEASE_TTL_S: '1' }, /LEADER_LEASE_TTL_S/],
    [
      { STORE: 'etcd', ETCD_ENDPOINTS: 'http://127.0.0.1:2379', ADVERTISE_URL: 'ftp://x:1' },
      /^ADVERTISE_URL must be an http\(s\):\/\/host:port URL/,
    ],
    [{ ADVERTISE_URL: 'http://x:1' }, /^ADVERTISE_URL is set but STORE is not "etcd"/],
    [{ ETCD_ENDPOINTS: 'http://127.0.0.1:2379' }, /^ETCD_ENDPOINTS is set but STORE is not "etcd": set STORE=etcd/],
    [{ STORE: 'etcd', ETCD_ENDPOINTS: '127.0.0.1:2379' }, /^ETCD_ENDPOINTS must list http\(s\):\/\/host:port URLs, got "127.0.0.1:2379"$/],
    [{ STORE: 'etcd', ETCD_ENDPOINTS: 'http://127.0.0.1' }, /must list http\(s\):\/\/host:port/],
    [{ STORE: 'etcd', ETCD_ENDPOINTS: 'http://u:p@127.0.0.1:2379' }, /must list http\(s\):\/\/host:port/],
    [{ STORE: 'etcd', ETCD_ENDPOINTS: 'http://a:2379,https://b:2379' }, /mixes http:\/\/ and https:\/\//],
    [{ STORE: 'etcd', ETCD_ENDPOINTS: 'https://a:2379' }, /^https:\/\/ ETCD_ENDPOINTS need ETCD_CA_FILE/],
    [{ STORE: 'etcd', ETCD_ENDPOINTS: 'http://a:2379', ETCD_CA_FILE: 'ca.pem' }, /^ETCD_CA_FILE is set but ETCD_ENDPOINTS are http:\/\//],
    [
      { STORE: 'etcd', ETCD_ENDPOINTS: 'https://a:2379', ETCD_CA_FILE: 'ca.pem', ETCD_CERT_FILE: 'c.pem' },
      /^ETCD_CERT_FILE and ETCD_KEY_FILE go together/,
    ],
    [{ STORE: 'etcd', ETCD_ENDPOINTS: 'http://a:2379', ETCD_PREFIX: 'quarry' }, /^ETCD_PREFIX must be .* ending with "\/", got "quarry"$/],
    [{ STORE: 'etcd', ETCD_ENDPOINTS: 'http://a:2379', ETCD_PREFIX: '/' }, /^ETCD_PREFIX must be/],
  ];
  for (const [env, message] of cases) t.throws(() => loadConfig(env), { instanceOf: InputError, message }, JSON.stringify(env));
});

test.serial('quarry runs on etcd: its documents are in etcd, secrets sealed, and a restart finds them', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'quarry-etcd-start-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const prefix = etcdPrefix();
  const config = etcdQuarryConfig(dir, prefix);
  const first = await startQuarry({ config, log: silentLogger, print: () => {} });
  const users = await first.store.list<{ username: string; passwordHash: string }>('User');
  await first.stop();
  t.deepEqual(
    users.map((u) => u.spec.username),
    ['admin'],
  );
  const raw = new Etcd3({ hosts: etcdEndpoints() });
  t.teardown(() => raw.close());
  const stored = await raw.getAll().prefix(`${prefix}User/`).strings();
  t.is(Object.keys(stored).length, 1);
  t.false(Object.values(stored)[0]!.includes(users[0]!.spec.passwordHash), 'the password hash is sealed in etcd');
  t.false((await readdir(join(dir, 'state'))).includes('store'), 'no embedded store was made');
  const again = await startQuarry({ config, log: silentLogger, print: () => {} });
  t.teardown(() => again.stop());
  t.deepEqual(
    (await again.store.list('User')).map((u) => u.id),
    users.map((u) => u.id),
  );
});
