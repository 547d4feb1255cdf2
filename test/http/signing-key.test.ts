// The token signing key is the store's (src/http/auth/signing-key.ts): one per store whoever
// asks first, sealed at rest by the store's codec, and an older Quarry's STATE_DIR key file
// moved in on the first start after the upgrade, then removed.
import test, { type ExecutionContext } from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SIGNING_KEY_FILE } from '../../src/http/auth/secret-files.js';
import { sharedSigningKey } from '../../src/http/auth/signing-key.js';
import { silentLogger, type Logger } from '../../src/log.js';
import { SIGNING_KEY_ID, TokenKind, type SigningKeySpec } from '../../src/model/token-kinds.js';
import { createMemoryStore, EmbeddedBackend, openEmbeddedStore, SecretBox, SecretKeyError, type StoredDoc } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';

async function tempDir(t: ExecutionContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'quarry-signing-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const text = (key: Uint8Array): string => Buffer.from(key).toString('base64url');
const stored = async (store: Store): Promise<SigningKeySpec | undefined> =>
  (await store.get<SigningKeySpec>(TokenKind.SigningKey, SIGNING_KEY_ID))?.spec;
const exists = (path: string): Promise<boolean> =>
  stat(path).then(
    () => true,
    () => false,
  );
/** What an older Quarry wrote: the key, sealed with the secrets key when it had one. */
const legacyFile = (dir: string, key: string, box?: SecretBox): Promise<void> =>
  writeFile(join(dir, SIGNING_KEY_FILE), `${box ? box.seal(key, `file:${SIGNING_KEY_FILE}`) : key}\n`, { mode: 0o600 });

test('signing key is made once per store and every controller reads the same one, whatever its STATE_DIR', async (t) => {
  const store = await createMemoryStore();
  const first = await sharedSigningKey(store, { stateDir: await tempDir(t), logger: silentLogger });
  t.is(first.length, 32);
  t.deepEqual(await sharedSigningKey(store, { stateDir: await tempDir(t), logger: silentLogger }), first);
  t.deepEqual(await stored(store), { key: text(first), origin: 'generated' });
  t.is((await store.list(TokenKind.SigningKey)).length, 1);
  t.notDeepEqual(
    await sharedSigningKey(await createMemoryStore(), { stateDir: await tempDir(t), logger: silentLogger }),
    first,
    'another store, another key',
  );
});

test('signing key controllers starting at once on one store all end with the winner of the create', async (t) => {
  const store = await createMemoryStore();
  const dirs = await Promise.all([1, 2, 3, 4, 5, 6].map(() => tempDir(t)));
  // Two of them bring an old key file each: one key wins, both files go.
  const old = [randomBytes(32).toString('base64url'), randomBytes(32).toString('base64url')];
  await legacyFile(dirs[0]!, old[0]!);
  await legacyFile(dirs[1]!, old[1]!);
  const logged: string[] = [];
  const logger: Logger = (_level, message) => logged.push(message);
  const keys = (await Promise.all(dirs.map((stateDir) => sharedSigningKey(store, { stateDir, logger })))).map(text);
  t.is(new Set(keys).size, 1, keys.join(' '));
  t.is((await store.list(TokenKind.SigningKey)).length, 1);
  t.is((await stored(store))?.key, keys[0]);
  t.false(await exists(join(dirs[0]!, SIGNING_KEY_FILE)));
  t.false(await exists(join(dirs[1]!, SIGNING_KEY_FILE)));
  t.is(logged.filter((m) => /^(created|moved) the token signing key/.test(m)).length, 1, logged.join('\n'));
});

test('signing key file of an older Quarry is moved into the store, sealed or plain, and then removed', async (t) => {
  for (const sealed of [true, false]) {
    const dir = await tempDir(t);
    const box = new SecretBox(randomBytes(32));
    const old = randomBytes(32).toString('base64url');
    await legacyFile(dir, old, sealed ? box : undefined);
    const store = await createMemoryStore();
    const logged: string[] = [];
    const key = await sharedSigningKey(store, { stateDir: dir, logger: (_l, m) => logged.push(m), secrets: box });
    t.is(text(key), old, 'the sessions it signed stay valid');
    t.deepEqual(await stored(store), { key: old, origin: 'migrated' });
    t.false(await exists(join(dir, SIGNING_KEY_FILE)), 'the file is no longer the source of truth');
    t.deepEqual(logged, [
      'moved the token signing key from STATE_DIR into the store',
      'removed the token signing key file: the store holds the key now',
    ]);
  }
});

test('signing key file that cannot be read leaves the store without a key and the file in place', async (t) => {
  const dir = await tempDir(t);
  await legacyFile(dir, randomBytes(32).toString('base64url'), new SecretBox(randomBytes(32)));
  const store = await createMemoryStore();
  const deps = { stateDir: dir, logger: silentLogger };
  await t.throwsAsync(sharedSigningKey(store, { ...deps, secrets: new SecretBox(randomBytes(32)) }), {
    instanceOf: SecretKeyError,
    message: /file:jwt-hs256\.key was encrypted with key/,
  });
  await t.throwsAsync(sharedSigningKey(store, deps), { message: /is encrypted: start Quarry with its secrets key/ });
  await legacyFile(dir, randomBytes(16).toString('base64url'));
  await t.throwsAsync(sharedSigningKey(store, deps), { message: /shorter than 256 bits/ });
  t.is(await stored(store), undefined, 'no key was made in place of the one that could not be read');
  t.true(await exists(join(dir, SIGNING_KEY_FILE)));
});

test('signing key file found beside a store that has a key is removed, and the store keeps its own', async (t) => {
  const store = await createMemoryStore();
  const key = await sharedSigningKey(store, { stateDir: await tempDir(t), logger: silentLogger });
  const dir = await tempDir(t);
  await legacyFile(dir, randomBytes(32).toString('base64url'));
  t.deepEqual(await sharedSigningKey(store, { stateDir: dir, logger: silentLogger }), key);
  t.false(await exists(join(dir, SIGNING_KEY_FILE)));
});

test('signing key is sealed in the backend: the raw stored value and the files on disk hold no plaintext', async (t) => {
  const dir = await tempDir(t);
  const box = new SecretBox(randomBytes(32));
  const store = await openEmbeddedStore(join(dir, 'store'), { secrets: box });
  const key = text(await sharedSigningKey(store, { stateDir: dir, logger: silentLogger }));
  await store.close();

  // The backend without the codec: what the journal holds.
  const raw = new EmbeddedBackend<StoredDoc>(join(dir, 'store'));
  await raw.open();
  const value = (await raw.get(`${TokenKind.SigningKey}/${SIGNING_KEY_ID}`))?.value;
  await raw.close();
  const sealed = (value?.spec as { key?: unknown } | undefined)?.key;
  t.true(typeof sealed === 'string' && sealed.startsWith(`enc:v1:${box.keyId}:`), String(sealed));
  t.false(JSON.stringify(value).includes(key));
  for (const name of await readdir(join(dir, 'store'))) {
    const bytes = await readFile(join(dir, 'store', name));
    for (const form of [key, Buffer.from(key, 'base64url').toString('base64'), Buffer.from(key, 'base64url').toString('hex')])
      t.false(bytes.includes(form), `${name} holds the key`);
    t.false(bytes.includes(Buffer.from(key, 'base64url')), `${name} holds the key's bytes`);
  }
  const again = await openEmbeddedStore(join(dir, 'store'), { secrets: box });
  t.is((await stored(again))?.key, key, 'and it opens with the secrets key');
  await again.close();
});
