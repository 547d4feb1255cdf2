// What only the etcd backend has: compaction (a watcher behind it gets relist), secrets sealed in
// etcd itself, lists longer than one etcd response, revisions moved by keys outside the prefix,
// and etcd out of reach as a retryable error.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { Etcd3 } from 'etcd3';
import { ServiceUnavailableError } from '../../src/errors.js';
import { ourEarlierAttempt } from '../../src/store/etcd-retry.js';
import { EtcdBackend, SecretBox, secretFieldsCodec, type RelistSignal, type StoredDoc, type WatchEvent } from '../../src/store/index.js';
import { etcdEndpoints, etcdPrefix, openEtcd, useEtcd } from './backends.js';
import { currentRequestId, inRequest } from '../../src/log.js';
import { until } from './helpers.js';
import { waitFor } from '../helpers/wait.js';

useEtcd(test);

const summary = (e: WatchEvent | RelistSignal, r: number): string =>
  e.type === 'relist' ? `relist@${e.revision - r}` : `${e.type} ${e.key}@${e.revision - r}`;

test.serial('etcd backend: a watcher from before a compaction gets relist, then the changes after it', async (t) => {
  const b = await openEtcd(t);
  const r = b.revision();
  for (let i = 1; i <= 4; i++) await b.put(`k${i}`, i);
  await b.compact(r + 3);
  const old: string[] = [];
  const recent: string[] = [];
  b.watch(r + 1, (e) => old.push(summary(e, r)));
  b.watch(r + 3, (e) => recent.push(summary(e, r)));
  await until(() => old.length >= 1 && recent.length >= 1, 'the relist and the kept event');
  await b.put('k5', 5);
  await until(() => old.length >= 2 && recent.length >= 2, 'the write after the compaction');
  t.deepEqual(old, ['relist@4', 'put k5@5']);
  t.deepEqual(recent, ['put k4@4', 'put k5@5']);
});

test.serial('etcd backend: a live watcher is not disturbed by a compaction behind it', async (t) => {
  const b = await openEtcd(t);
  const r = b.revision();
  const seen: string[] = [];
  b.watch(r, (e) => seen.push(summary(e, r)));
  await b.put('a', 1);
  await until(() => seen.length >= 1, 'the first write');
  await b.compact(b.revision());
  await b.put('b', 2);
  await until(() => seen.length >= 2, 'the second write');
  t.deepEqual(seen, ['put a@1', 'put b@2']);
});

test.serial('etcd backend: revisions move for keys outside the prefix, and nothing of them is seen', async (t) => {
  const b = await openEtcd(t);
  const other = await openEtcd(t);
  const r = b.revision();
  const seen: string[] = [];
  b.watch(r, (e) => seen.push(summary(e, r)));
  await b.put('mine', 1);
  await other.put('theirs', 1);
  await other.put('theirs', 2);
  t.is(await b.put('mine', 2), r + 4);
  await until(() => seen.length >= 2, 'both of ours');
  t.deepEqual(seen, ['put mine@1', 'put mine@4']);
  t.deepEqual(
    (await b.list('')).items.map((kv) => kv.key),
    ['mine'],
  );
});

test.serial('etcd backend: a list longer than one etcd response comes whole, in key order, at one revision', async (t) => {
  const b = await openEtcd(t);
  const n = 1234;
  const keys = Array.from({ length: n }, (_, i) => `item/${String(i).padStart(5, '0')}`);
  // 100 writes per transaction: etcd refuses more than 128 operations in one.
  for (let i = 0; i < n; i += 100) await b.txn(keys.slice(i, i + 100).map((key) => ({ op: 'put' as const, key, value: { key } })));
  const { items, revision } = await b.list('item/');
  t.is(revision, b.revision());
  t.is(items.length, n);
  t.deepEqual(
    items.map((kv) => kv.key),
    keys,
  );
  t.deepEqual(items[n - 1]?.value, { key: keys[n - 1] });
});

test.serial('etcd backend: etcd answers over 4 MiB (a watch catching up, a page of big values) are taken', async (t) => {
  // gRPC's default limit is 4 MiB; a refused watch response ended the stream, which resumed at
  // the same revision to be refused again, for ever (the heartbeat bench's cache never caught up).
  const prefix = etcdPrefix();
  const errors: string[] = [];
  const b = await openEtcd(t, { prefix, onWatchError: (err) => errors.push(String(err)) });
  const from = b.revision();
  const n = 1200;
  const big = 'x'.repeat(9_000);
  // 12 revisions of 900 kB each, under etcd's 1.5 MiB request limit; 10.8 MB to catch up on.
  const keys = Array.from({ length: n }, (_, i) => `big/${String(i).padStart(5, '0')}`);
  for (let i = 0; i < n; i += 100) await b.txn(keys.slice(i, i + 100).map((key) => ({ op: 'put' as const, key, value: { big } })));
  const caughtUp: string[] = [];
  b.watch(from, (e) => e.type === 'put' && caughtUp.push(e.key));
  await waitFor(
    () => `a watcher from before the writes to get them all: ${caughtUp.length} of ${n}; watch errors: ${errors.slice(0, 3).join('; ')}`,
    () => caughtUp.length >= n,
  );
  t.deepEqual(caughtUp, keys);
  const another = await openEtcd(t, { prefix, onWatchError: (err) => errors.push(String(err)) });
  t.is(another.cacheStats()?.keys, n, 'the cache listed pages of 500 values (4.5 MB each)');
  t.deepEqual(errors, []);
});

test.serial('etcd backend: secret fields are sealed in etcd and read back in the clear', async (t) => {
  const prefix = etcdPrefix();
  const box = new SecretBox(randomBytes(32), 'SECRETS_KEY');
  const b = await openEtcd<StoredDoc>(t, { prefix, codec: secretFieldsCodec(box) });
  const passwordHash = `scrypt$${randomBytes(16).toString('hex')}`;
  const doc: StoredDoc = {
    kind: 'User',
    id: 'u1',
    name: 'alice',
    metadata: { generation: 1, createdAt: 'now', updatedAt: 'now', labels: {}, source: null },
    spec: { username: 'alice', passwordHash },
    status: {},
  };
  const seen: StoredDoc[] = [];
  b.watch(b.revision(), (e) => e.type === 'put' && seen.push(e.value));
  await b.put('User/u1', doc);
  const raw = new Etcd3({ hosts: etcdEndpoints() });
  t.teardown(() => raw.close());
  const stored = await raw.get(`${prefix}User/u1`).string();
  t.truthy(stored);
  t.false(stored!.includes(passwordHash), 'the secret is not in etcd in the clear');
  t.true(stored!.includes('alice'), 'what is not secret is');
  t.deepEqual((await b.get('User/u1'))?.value.spec, doc.spec);
  t.deepEqual((await b.list('User/')).items[0]?.value.spec, doc.spec);
  await until(() => seen.length >= 1, 'the watch event');
  t.deepEqual(seen[0]?.spec, doc.spec);
});

test('etcd backend: etcd out of reach is a retryable STORE_UNAVAILABLE, not a crash', async (t) => {
  // A port nothing listens on: the client's connection is refused.
  const b = new EtcdBackend({ endpoints: ['http://127.0.0.1:1'], prefix: 'x/', requestTimeoutMs: 2_000 });
  const err = await t.throwsAsync(b.open(), { instanceOf: ServiceUnavailableError });
  t.is(err.code, 'STORE_UNAVAILABLE');
  t.is(err.status, 503);
  t.true((err as unknown as { retryable: boolean }).retryable);
  t.regex(err.message, /etcd/);
});

test('etcd backend: bad options are refused before anything connects', (t) => {
  t.throws(() => new EtcdBackend({ endpoints: [], prefix: 'x/' }), { message: /at least one endpoint/ });
  t.throws(() => new EtcdBackend({ endpoints: ['http://127.0.0.1:2379'], prefix: '' }), { message: /prefix/ });
});

test('etcd backend: a retried write whose first attempt landed is told from a real conflict', (t) => {
  const kv = (value: string, rev: string, key = 'k') =>
    ({ key: Buffer.from(key), value: Buffer.from(value), mod_revision: rev, create_revision: rev, version: '1', lease: '0' }) as const;
  const create = [{ op: 'put' as const, key: 'k', value: 1, pre: { modRevision: 0 } }];
  t.is(ourEarlierAttempt(create, ['1'], [kv('1', '42')]), 42, 'etcd holds the bytes we sent: ours');
  t.is(ourEarlierAttempt(create, ['1'], [kv('2', '42')]), undefined, 'other bytes: a conflict');
  t.is(ourEarlierAttempt(create, ['1'], [undefined]), undefined, 'nothing there: a conflict');
  const audited = [
    { op: 'put' as const, key: 'k', value: 1, pre: { modRevision: 7 } },
    { op: 'put' as const, key: 'log/2', value: 2, pre: { modRevision: 0 } },
    { op: 'del' as const, key: 'log/1', ifExists: true as const },
  ];
  t.is(ourEarlierAttempt(audited, ['1', '2', undefined], [kv('1', '43'), kv('2', '43', 'log/2'), undefined]), 43);
  t.is(ourEarlierAttempt(audited, ['1', '2', undefined], [kv('1', '43'), kv('2', '44', 'log/2'), undefined]), undefined, 'two revisions');
  t.is(ourEarlierAttempt(audited, ['1', '2', undefined], [kv('1', '43'), kv('2', '43', 'log/2'), kv('0', '3', 'log/1')]), undefined);
  const blind = [{ op: 'put' as const, key: 'k', value: 1 }];
  t.is(ourEarlierAttempt(blind, ['1'], [kv('1', '42')]), undefined, 'no precondition: nothing to judge');
});

test.serial('etcd backend: a value that is not JSON is reported without quoting it, and watches run outside the request', async (t) => {
  const prefix = etcdPrefix();
  const errors: unknown[] = [];
  const b = await openEtcd(t, { prefix, onWatchError: (e) => errors.push(e) });
  const raw = new Etcd3({ hosts: etcdEndpoints() });
  t.teardown(() => raw.close());
  const seen: (string | null)[] = [];
  inRequest('req-watch', () => b.watch(b.revision(), () => seen.push(currentRequestId())));
  await raw.put(`${prefix}k`).value('secret-not-json');
  // Another writer's value: the read cache and the watcher hear of it by their watches.
  await until(() => errors.length >= 2, 'the read cache and the watch to report it');
  t.false(String(errors[0]).includes('secret-not'));
  const err = await t.throwsAsync(b.get('k'));
  t.regex(err.message, /^k: the value in etcd is not JSON \(15 bytes\)/);
  t.false(err.message.includes('secret'));
  await t.throwsAsync(b.list(''), { message: /^k: the value in etcd is not JSON/ });
  // The good value replaced the bad one: the event comes, without the previous value.
  await b.put('k', { ok: true });
  t.deepEqual((await b.get('k'))?.value, { ok: true }, 'read from the cache again');
  await until(() => seen.length >= 1, 'the good value');
  t.deepEqual(seen, [null], 'the handler does not carry the id of the request that started the watch');
  t.is(errors.length, 3, 'the bad value (the cache, the watcher), then the bad previous value of the good event');
  t.true(errors.every((e) => !String(e).includes('secret-not')));
});

test.serial(
  'etcd backend: watchers from where the store stands share one etcd watch (each event decoded once); one from before gets its own',
  async (t) => {
    const b = await openEtcd<number>(t);
    await b.put('k0', 0);
    const r = b.revision();
    const seen = Array.from({ length: 8 }, () => [] as string[]);
    const stops = seen.map((s) => b.watch(b.revision(), (e) => s.push(summary(e, r))));
    t.deepEqual(b.watchStats(), { shared: 8, own: 0 });
    const older: string[] = [];
    b.watch(r - 1, (e) => older.push(summary(e, r)));
    t.deepEqual(b.watchStats(), { shared: 8, own: 1 });
    await b.put('k1', 1);
    await b.put('k2', 2);
    await until(() => seen.every((s) => s.length >= 2) && older.length >= 3, 'every watcher to see both writes');
    for (const s of seen) t.deepEqual(s, ['put k1@1', 'put k2@2']);
    t.deepEqual(older, ['put k0@0', 'put k1@1', 'put k2@2']);
    // A stopped watcher hears nothing more; the others go on.
    stops[0]?.();
    t.is(b.watchStats().shared, 7);
    await b.put('k3', 3);
    await until(() => (seen[1]?.length ?? 0) >= 3, 'the write after a stop');
    t.deepEqual(seen[0], ['put k1@1', 'put k2@2']);
  },
);
