// The embedded store with a secrets key: what reaches the journal and the snapshot, reopening
// with the same and another key, and state written before encryption.
import test, { type ExecutionContext } from 'ava';
import { randomBytes, randomUUID } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import {
  DocumentStore,
  EmbeddedBackend,
  openEmbeddedStore,
  SecretBox,
  SecretKeyError,
  secretFieldsCodec,
  type Store,
  type StoredDoc,
} from '../../src/store/index.js';
import { tempDir } from './helpers.js';

const box = (key: Buffer = randomBytes(32)): SecretBox => new SecretBox(key, 'SECRETS_KEY');

/** One more write, after a compaction, so the newest segment is not empty. */
const another = (store: Store): Promise<unknown> =>
  store.create({
    kind: 'User',
    name: 'bob',
    spec: { username: 'bob', name: 'Bob', email: '', isAdmin: false, passwordHash: `scrypt$${randomBytes(8).toString('hex')}` },
  });

interface Secrets {
  passwordHash: string;
  refreshJti: string;
  initialSecret: string;
  secretHash: string;
  cephxKey: string;
  rgwSecret: string;
}

function newSecrets(): Secrets {
  return {
    passwordHash: `scrypt$17$8$1$${randomBytes(16).toString('base64url')}$${randomBytes(32).toString('base64url')}`,
    refreshJti: randomBytes(16).toString('hex'),
    initialSecret: randomBytes(32).toString('base64url'),
    secretHash: randomBytes(32).toString('hex'),
    cephxKey: `${randomBytes(28).toString('base64').slice(0, 38)}==`,
    rgwSecret: randomBytes(30).toString('base64url'),
  };
}

/** One document of every kind that holds a secret. */
async function putSecrets(store: Store, s: Secrets): Promise<void> {
  const now = new Date().toISOString();
  const userId = randomUUID();
  await store.create({
    kind: 'User',
    id: userId,
    name: 'alice',
    spec: { username: 'alice', name: 'Alice', email: 'a@example.com', isAdmin: false, passwordHash: s.passwordHash },
  });
  await store.create({ kind: 'Session', name: 's', spec: { userId, refreshJti: s.refreshJti, expiresAt: now } });
  const nodeId = randomUUID();
  await store.create({
    kind: 'AgentCredential',
    id: nodeId,
    name: nodeId,
    spec: { nodeId, secretHash: s.secretHash, initialSecret: s.initialSecret, issuedAt: now, firstUsedAt: null, rotatedAt: null },
  });
  await store.create({
    kind: 'Keyring',
    id: 'client.admin',
    name: 'client.admin',
    spec: { entity: 'client.admin', nodeId: null, caps: {} },
    status: { key: s.cephxKey },
  });
  await store.create({
    kind: 'RgwUserSecret',
    id: 'alice',
    name: 'alice',
    spec: { userId: 'alice', accessKey: 'AK1' },
    status: { secretKey: s.rgwSecret, shownAt: null },
  });
}

const needles = (s: Secrets): string[] => Object.values(s) as string[];

/** Every file's bytes under dir. */
async function filesOf(dir: string): Promise<Array<{ name: string; bytes: Buffer }>> {
  const out = [];
  for (const name of await readdir(dir)) out.push({ name, bytes: await readFile(join(dir, name)) });
  return out;
}

function plaintextIn(files: Array<{ name: string; bytes: Buffer }>, s: Secrets): string[] {
  const found = [];
  for (const f of files) for (const n of needles(s)) if (f.bytes.includes(n)) found.push(`${f.name} holds ${n.slice(0, 6)}...`);
  return found;
}

async function openWith(
  t: ExecutionContext,
  dir: string,
  secrets: SecretBox | undefined,
): Promise<{ store: DocumentStore; backend: EmbeddedBackend<StoredDoc> }> {
  const backend = new EmbeddedBackend<StoredDoc>(dir, secrets ? { codec: secretFieldsCodec(secrets) } : {});
  const store = new DocumentStore(backend);
  await store.open();
  t.teardown(() => store.close());
  return { store, backend };
}

async function readAll(store: Store): Promise<unknown[]> {
  const out = [];
  for (const kind of ['User', 'Session', 'AgentCredential', 'Keyring', 'RgwUserSecret'])
    out.push(...(await store.list(kind)).map((d) => ({ ...d, metadata: { ...d.metadata } })));
  return out;
}

test('secrets at rest: the journal and the snapshot hold no plaintext secret, and reads give them back', async (t) => {
  const dir = await tempDir(t);
  const keyBytes = randomBytes(32);
  const s = newSecrets();
  const { store, backend } = await openWith(t, dir, box(keyBytes));
  await putSecrets(store, s);
  const written = await readAll(store);
  t.true(JSON.stringify(written).includes(s.cephxKey), 'documents in memory stay plaintext');
  t.deepEqual(plaintextIn(await filesOf(dir), s), [], 'journal');
  await backend.compact();
  await another(store);
  t.true((await readdir(dir)).includes('snapshot.json'));
  t.deepEqual(plaintextIn(await filesOf(dir), s), [], 'snapshot and journal');
  const all = await readAll(store);
  await store.close();
  const again = await openWith(t, dir, box(keyBytes));
  t.deepEqual(await readAll(again.store), all);
  t.deepEqual(
    all.filter((d) => (d as { name: string }).name !== 'bob'),
    written,
  );
});

test('secrets at rest: a store opened with another key fails with a clear error naming both keys', async (t) => {
  const dir = await tempDir(t);
  const s = newSecrets();
  const first = box();
  const { store } = await openWith(t, dir, first);
  await putSecrets(store, s);
  await store.close();
  const other = box();
  const err = await t.throwsAsync(openEmbeddedStore(dir, { secrets: other }), { instanceOf: SecretKeyError });
  t.regex(err.message, new RegExp(`was encrypted with key ${first.keyId}, but SECRETS_KEY is key ${other.keyId}`));
  for (const n of needles(s)) t.false(err.message.includes(n));
  // The lock was released: the right key still opens it.
  t.is((await openEmbeddedStore(dir, { secrets: first })).revision(), 5);
});

test('secrets at rest: plaintext state written before encryption is re-encrypted at open, and nothing is lost', async (t) => {
  const dir = await tempDir(t);
  const s = newSecrets();
  const plain = await openWith(t, dir, undefined);
  await putSecrets(plain.store, s);
  await plain.backend.compact(); // some in the snapshot ...
  // A key that always differs: an unchanged status is a skipped no-op, which would leave the
  // journal empty (a random key starts with 'B' one time in 64).
  s.cephxKey = `${s.cephxKey.startsWith('B') ? 'C' : 'B'}${s.cephxKey.slice(1)}`;
  await plain.store.updateStatus('Keyring', 'client.admin', { key: s.cephxKey }); // ... some in the journal
  const before = await readAll(plain.store);
  await plain.store.close();
  t.true(plaintextIn(await filesOf(dir), s).length > 0, 'the old files hold plaintext');

  const key = box();
  const migrated = await openWith(t, dir, key);
  t.is(migrated.backend.recovery.reencoded, 6, 'five in the snapshot, the key again in the journal');
  t.deepEqual(await readAll(migrated.store), before);
  t.deepEqual(plaintextIn(await filesOf(dir), s), []);
  t.deepEqual(
    (await readdir(dir)).filter((f) => f.startsWith('journal.')),
    ['journal.3.log'],
    'the old segments are gone',
  );
  await another(migrated.store);
  await migrated.store.close();
  const reopened = await openWith(t, dir, key);
  t.is(reopened.backend.recovery.reencoded, undefined, 'nothing left to migrate');
  t.is((await reopened.store.get<unknown, { key: string }>('Keyring', 'client.admin'))!.status.key, s.cephxKey);
  t.deepEqual(plaintextIn(await filesOf(dir), s), []);
});

test("secrets at rest: the store's files are 0600 and its directory 0700", async (t) => {
  const dir = join(await tempDir(t), 'store');
  const { store, backend } = await openWith(t, dir, box());
  await putSecrets(store, newSecrets());
  await backend.compact();
  await another(store);
  t.is((await stat(dir)).mode & 0o777, 0o700);
  const modes = await Promise.all((await readdir(dir)).map(async (f) => [f, ((await stat(join(dir, f))).mode & 0o777).toString(8)]));
  t.true(modes.length >= 3, JSON.stringify(modes));
  t.deepEqual(
    modes.filter(([, m]) => m !== '600'),
    [],
  );
});
