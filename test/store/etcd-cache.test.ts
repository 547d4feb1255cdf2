// The etcd backend's read cache (src/store/etcd-cache.ts) on one real etcd member: a process
// reads its own writes at once, another client's writes appear by the watch, a resourceVersion
// from elsewhere is waited for, and a watcher told to list again makes the cache list too.
import test from 'ava';
import { Etcd3 } from 'etcd3';
import { DocumentStore, type StoredDoc } from '../../src/store/index.js';
import { waitFor } from '../helpers/wait.js';
import { etcdEndpoints, etcdPrefix, openEtcd, useEtcd } from './backends.js';
import { nodeSpec, testDeps } from './helpers.js';

useEtcd(test);

test.serial('etcd cache: every read right after a write sees it, from the cache', async (t) => {
  const b = await openEtcd<{ n: number }>(t);
  const hitsBefore = b.cacheStats()?.hits ?? 0;
  for (let n = 1; n <= 100; n++) {
    const rev = await b.put('k', { n });
    const kv = await b.get('k');
    t.is(kv?.value.n, n);
    t.is(kv?.modRevision, rev);
    t.deepEqual(
      (await b.list('')).items.map((x) => x.value.n),
      [n],
    );
    t.true(b.revision() >= rev, 'revision() covers the write');
  }
  await b.delete('k');
  t.is(await b.get('k'), undefined, 'a delete too');
  t.true((b.cacheStats()?.hits ?? 0) > hitsBefore, 'answered by the cache');
});

test.serial("etcd cache: its own writes are kept as written, not decoded again; another writer's value is decoded", async (t) => {
  const prefix = etcdPrefix();
  const b = await openEtcd<{ n: number }>(t, { prefix });
  const seen: { n: number }[] = [];
  b.watch(b.revision(), (e) => e.type === 'put' && seen.push(e.value));
  const mine = { n: 1 };
  await b.put('k', mine);
  // The watch brought the write back (the get waits for it): the cache holds the very object
  // written, as the embedded store does.
  t.is((await b.get('k'))?.value, mine);
  await waitFor('the watcher to hear of it', () => seen.length === 1);
  t.deepEqual(seen[0], mine);
  // A write refused by its precondition leaves nothing expected behind: another client's write
  // of the same bytes is decoded.
  const refused = { n: 2 };
  await t.throwsAsync(b.put('k', refused, { modRevision: 1 }));
  const raw = new Etcd3({ hosts: etcdEndpoints() });
  t.teardown(() => raw.close());
  await raw.put(`${prefix}k`).value(JSON.stringify({ n: 2 }));
  await waitFor('the other write', () => seen.length === 2);
  t.deepEqual(seen[1], { n: 2 });
  t.deepEqual((await b.get('k'))?.value, { n: 2 });
  t.not((await b.get('k'))?.value, refused);
});

test.serial('etcd cache: writes of one key make no read of another wait for the cache; the written key reads its writes', async (t) => {
  const b = await openEtcd<{ n: number }>(t);
  await b.put('other', { n: 0 });
  t.is((await b.get('other'))?.value.n, 0);
  const before = b.cacheStats();
  for (let n = 1; n <= 100; n++) {
    await b.put('busy', { n });
    t.is((await b.get('other'))?.value.n, 0);
  }
  const after = b.cacheStats();
  // A floor for all reads made each of these wait for the watch to bring the write of 'busy'
  // (the heartbeat records at 10,000 agents held every report that way).
  t.is((after?.waits ?? 0) - (before?.waits ?? 0), 0, 'no read of the other key waited');
  // Not necessarily all 100: a watch stream broken meanwhile sends reads to etcd, not waiting.
  t.true((after?.hits ?? 0) - (before?.hits ?? 0) > 0, 'answered by the cache');
  t.is((await b.get('busy'))?.value.n, 100);
  t.deepEqual(
    (await b.list('')).items.map((x) => x.value.n),
    [100, 0],
  );
});

test.serial('etcd cache: a document store reads its own writes (create, spec, status, delete)', async (t) => {
  const store = new DocumentStore(await openEtcd<StoredDoc>(t), testDeps());
  for (let i = 0; i < 20; i++) {
    const doc = await store.create({ kind: 'Node', id: `n${i}`, name: `n${i}`, spec: nodeSpec() });
    t.is((await store.mustGet('Node', `n${i}`)).metadata.resourceVersion, doc.metadata.resourceVersion);
    const next = await store.updateSpec('Node', `n${i}`, nodeSpec({ restartGeneration: 1 }), {
      resourceVersion: doc.metadata.resourceVersion,
    });
    t.is((await store.mustGet('Node', `n${i}`)).metadata.generation, 2);
    const status = await store.updateStatus('Node', `n${i}`, { phase: 'active' }, { resourceVersion: next.metadata.resourceVersion });
    t.is((await store.list('Node')).find((d) => d.id === `n${i}`)?.metadata.resourceVersion, status.metadata.resourceVersion);
  }
  await store.delete('Node', 'n0');
  t.is(await store.get('Node', 'n0'), undefined);
  t.is((await store.list('Node')).length, 19);
});

test.serial("etcd cache: another client's writes and deletes become visible through the watch", async (t) => {
  const prefix = etcdPrefix();
  const reader = await openEtcd<{ n: number }>(t, { prefix });
  const writer = await openEtcd<{ n: number }>(t, { prefix });
  await writer.put('a', { n: 1 });
  await writer.put('b', { n: 1 });
  await waitFor('both keys in the reader', async () => (await reader.list('')).items.length === 2);
  await writer.put('a', { n: 2 });
  await writer.delete('b');
  await waitFor('the change and the delete', async () => {
    const { items } = await reader.list('');
    return items.length === 1 && items[0]?.value.n === 2;
  });
  t.is((await reader.get('a'))?.value.n, 2);
  t.is(await reader.get('b'), undefined);
});

test.serial('etcd cache: a resourceVersion written by another controller is waited for, not refused as stale', async (t) => {
  const prefix = etcdPrefix();
  const a = new DocumentStore(await openEtcd<StoredDoc>(t, { prefix }), testDeps());
  const b = new DocumentStore(await openEtcd<StoredDoc>(t, { prefix }), testDeps());
  for (let i = 0; i < 10; i++) {
    const doc = await a.create({ kind: 'Node', id: `n${i}`, name: `n${i}`, spec: nodeSpec() });
    // At once, through the other store: its read must reflect the version the caller holds.
    const next = await b.updateSpec('Node', `n${i}`, nodeSpec({ restartGeneration: 1 }), {
      resourceVersion: doc.metadata.resourceVersion,
    });
    t.is(next.metadata.generation, 2);
    // And a conflict refused by etcd makes the retry read what refused it.
    const moved = await a.mutateSpec<ReturnType<typeof nodeSpec>>('Node', `n${i}`, (d) => ({ ...d.spec, restartGeneration: 2 }));
    t.is(moved.metadata.generation, 3);
  }
});

test.serial('etcd cache: a watcher told to list again (its revision compacted) lists what is current', async (t) => {
  const prefix = etcdPrefix();
  const b = await openEtcd<{ n: number }>(t, { prefix });
  const raw = new Etcd3({ hosts: etcdEndpoints() });
  t.teardown(() => raw.close());
  const old = b.revision();
  await b.put('k', { n: 1 });
  // Another client's writes, compacted away before the watcher below starts.
  await raw.put(`${prefix}k`).value(JSON.stringify({ n: 2 }));
  await raw.put(`${prefix}gone`).value(JSON.stringify({ n: 0 }));
  await raw.delete().key(`${prefix}gone`);
  const now = Number((await raw.get(`${prefix}k`).exec()).header.revision);
  await b.compact(now);
  const resyncs = b.cacheStats()?.resyncs ?? 0;
  const relists: number[] = [];
  b.watch(old, (e) => e.type === 'relist' && relists.push(e.revision));
  await waitFor('the relist', () => relists.length > 0);
  // What a watcher that lists again reads: at least its relist's revision.
  const { items, revision } = await b.list('');
  t.true(revision >= (relists[0] ?? Infinity));
  t.deepEqual(
    items.map((kv) => [kv.key, kv.value.n]),
    [['k', 2]],
  );
  // The cache lists again only if it had not reached that revision by its own watch.
  await waitFor('the cache synced', () => b.cacheStats()?.synced);
  t.true((b.cacheStats()?.resyncs ?? 0) <= resyncs + 1);
  t.is((await b.get('k'))?.value.n, 2);
  t.is(await b.get('gone'), undefined);
});
