// Two controllers over one real etcd (STORE=etcd, issue #18): they agree on the token signing
// key however they start, etcd holds it sealed, and a cookie one issued is good at the other.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { SIGNING_KEY_FILE } from '../../src/http/auth/secret-files.js';
import { sharedSigningKey } from '../../src/http/auth/signing-key.js';
import { silentLogger } from '../../src/log.js';
import { startQuarry } from '../../src/main.js';
import { SIGNING_KEY_ID, TokenKind, type SigningKeySpec } from '../../src/model/token-kinds.js';
import { openEtcdStore, SecretBox } from '../../src/store/index.js';
import { Client } from '../http/client.js';
import { etcdEndpoints, etcdPrefix, useEtcd } from '../store/backends.js';
import { ETCD_ADMIN_PASSWORD, etcdQuarryConfig } from './etcd-quarry.js';

useEtcd(test);

async function tempDir(t: { teardown(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'quarry-etcd-key-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test.serial('signing key on etcd: two controllers starting at once end with one key, sealed in etcd', async (t) => {
  const prefix = etcdPrefix();
  const box = new SecretBox(randomBytes(32));
  const stores = await Promise.all([0, 1].map(() => openEtcdStore({ endpoints: etcdEndpoints(), prefix, secrets: box })));
  t.teardown(() => Promise.all(stores.map((s) => s.close())).then(() => undefined));
  const dirs = [await tempDir(t), await tempDir(t)];
  const keys = await Promise.all(stores.map((store, i) => sharedSigningKey(store, { stateDir: dirs[i]!, logger: silentLogger })));
  t.deepEqual(keys[0], keys[1]);
  const key = Buffer.from(keys[0]!).toString('base64url');

  const raw = new Etcd3({ hosts: etcdEndpoints() });
  t.teardown(() => raw.close());
  const value = await raw.get(`${prefix}${TokenKind.SigningKey}/${SIGNING_KEY_ID}`).string();
  t.truthy(value);
  t.true(value!.includes(`enc:v1:${box.keyId}:`), value!);
  for (const form of [key, Buffer.from(key, 'base64url').toString('base64'), Buffer.from(key, 'base64url').toString('hex')])
    t.false(value!.includes(form), 'etcd holds the key only sealed');
});

test.serial("signing key on etcd: a session one controller's Quarry issued is accepted by another's", async (t) => {
  const prefix = etcdPrefix();
  const secretsKey = randomBytes(32).toString('base64');
  const start = async (dir: string) => {
    const config = etcdQuarryConfig(dir, prefix, secretsKey);
    const q = await startQuarry({ config, log: silentLogger, print: () => {}, auth: { scrypt: { N: 2 ** 10, r: 8, p: 1 } } });
    t.teardown(() => q.stop());
    return q;
  };
  const first = await start(await tempDir(t));
  const c = new Client(first.url);
  t.is((await c.post('/user/login', { username: 'admin', password: ETCD_ADMIN_PASSWORD })).status, 200);

  // The second brings a key file of its own from before: the store's key wins, the file goes.
  const dir = await tempDir(t);
  await mkdir(join(dir, 'state'), { mode: 0o700 });
  await writeFile(join(dir, 'state', SIGNING_KEY_FILE), `${randomBytes(32).toString('base64url')}\n`, { mode: 0o600 });
  const second = await start(dir);
  const me = await c.clone(second.url).get<{ username: string }>('/user/me');
  t.is(me.status, 200, me.text);
  t.is(me.json.username, 'admin');
  await t.throwsAsync(stat(join(dir, 'state', SIGNING_KEY_FILE)), { code: 'ENOENT' });
  const spec = (await second.store.get<SigningKeySpec>(TokenKind.SigningKey, SIGNING_KEY_ID))?.spec;
  t.is(spec?.origin, 'generated', "the first controller's key, not the file's");
});
