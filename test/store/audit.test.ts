// The audit trail the document store writes with every desired-state change: who, which object,
// generations, changed fields; nothing for a no-op or a failed write; bounded; durable.
import test, { type ExecutionContext } from 'ava';
import { ConflictError } from '../../src/errors.js';
import { asActor, inRequest } from '../../src/log.js';
import { AuditKind, changedPaths, type AuditEntrySpec } from '../../src/model/audit-kinds.js';
import { createMemoryStore, DocumentStore, openEmbeddedStore, type Store, type StoredDoc } from '../../src/store/index.js';
import { etcdPrefix, openEtcd, useEtcd } from './backends.js';
import { nodeSpec, tempDir, testDeps } from './helpers.js';
import { waitFor } from '../helpers/wait.js';

useEtcd(test);

const entries = async (store: Store): Promise<AuditEntrySpec[]> =>
  (await store.list<AuditEntrySpec>(AuditKind.AuditEntry)).map((d) => d.spec);

type Open = (t: ExecutionContext, max?: number) => Promise<Store>;

// The trail is the document store's, over any backend: memory, and etcd (whose transactions
// give the change and its entry one revision).
const stores: [string, Open][] = [
  ['memory', (_t, max = 100) => createMemoryStore({ ...testDeps(), auditMaxEntries: max })],
  ['etcd', async (t, max = 100) => new DocumentStore(await openEtcd<StoredDoc>(t), { ...testDeps(), auditMaxEntries: max })],
];

for (const [name, open] of stores) {
  const it = name === 'etcd' ? test.serial : test;
  it(`${name}: audit records a create, a spec change and a delete with actor, generations, changed fields and request id`, async (t) => {
    const store = await open(t);
    const alice = { type: 'user' as const, name: 'alice' };
    const doc = await inRequest('req-1', () =>
      asActor(alice, () => store.create({ kind: 'Node', id: 'n', name: 'node-1', spec: nodeSpec() })),
    );
    await asActor({ type: 'token', name: 'alice/ci' }, () =>
      store.updateSpec('Node', 'n', nodeSpec({ power: 'off', hostname: 'node-one' }), { resourceVersion: doc.metadata.resourceVersion }),
    );
    await store.delete('Node', 'n');
    const [created, updated, deleted] = await entries(store);
    t.like(created, {
      actor: alice,
      action: 'create',
      kind: 'Node',
      objectId: 'n',
      objectName: 'node-1',
      names: { hostname: 'node-1' },
      generationBefore: null,
      generationAfter: 1,
      requestId: 'req-1',
    });
    t.true(created!.changedFields.includes('/hostname'));
    t.like(updated, {
      actor: { type: 'token', name: 'alice/ci' },
      action: 'update',
      generationBefore: 1,
      generationAfter: 2,
      changedFields: ['/hostname', '/power'],
      changedFieldCount: 2,
      requestId: null,
      names: { hostname: 'node-one' },
    });
    t.like(deleted, {
      actor: { type: 'system', name: 'quarry' },
      action: 'delete',
      generationBefore: 2,
      generationAfter: null,
      changedFields: [],
    });
    t.is(created!.at, '2026-01-01T00:00:00.000Z');
  });

  it(`${name}: audit records nothing for a no-op write, a status write, a failed compare-and-swap or a bookkeeping kind`, async (t) => {
    const store = await open(t);
    const doc = await store.create({ kind: 'Node', id: 'n', name: 'node-1', spec: nodeSpec() });
    await store.updateSpec('Node', 'n', nodeSpec(), { resourceVersion: doc.metadata.resourceVersion });
    await store.updateSpec('Node', 'n', nodeSpec(), { resourceVersion: doc.metadata.resourceVersion, labels: { rack: 'r1' } });
    await store.updateStatus('Node', 'n', { phase: 'active' });
    await t.throwsAsync(store.updateSpec('Node', 'n', nodeSpec({ power: 'off' }), { resourceVersion: 1 }), { instanceOf: ConflictError });
    await t.throwsAsync(store.create({ kind: 'Node', id: 'n', name: 'again', spec: nodeSpec() }), { instanceOf: ConflictError });
    await store.create({
      kind: 'Session',
      name: 'u',
      spec: { userId: 'agent:00000000-0000-4000-8000-000000000000', refreshJti: 'x'.repeat(16), expiresAt: '2026-02-01T00:00:00.000Z' },
    });
    t.deepEqual(
      (await entries(store)).map((e) => `${e.action} ${e.objectId}`),
      ['create n'],
    );
    // Numbers are not reused after a failed write: the next entry follows on.
    const cur = await store.mustGet('Node', 'n');
    await store.updateSpec('Node', 'n', nodeSpec({ power: 'off' }), { resourceVersion: cur.metadata.resourceVersion });
    const ids = (await store.list(AuditKind.AuditEntry)).map((d) => d.id);
    t.is(ids.length, 2);
    t.true(ids[0]! < ids[1]!);
  });

  it(`${name}: audit keeps at most the configured number of entries, dropping the oldest first`, async (t) => {
    const store = await open(t, 5);
    const doc = await store.create({ kind: 'Node', id: 'n', name: 'node-1', spec: nodeSpec() });
    let rv = doc.metadata.resourceVersion;
    for (let i = 1; i <= 8; i++)
      rv = (await store.updateSpec('Node', 'n', nodeSpec({ restartGeneration: i }), { resourceVersion: rv })).metadata.resourceVersion;
    const kept = await entries(store);
    t.is(kept.length, 5);
    t.deepEqual(
      kept.map((e) => e.generationAfter),
      [5, 6, 7, 8, 9],
    );
    // Concurrent writers: still bounded, and every entry of a write that succeeded is kept.
    await Promise.all(Array.from({ length: 12 }, (_, i) => store.create({ kind: 'Node', id: `c${i}`, name: `c${i}`, spec: nodeSpec() })));
    const after = await entries(store);
    t.is(after.length, 5);
    t.true(after.every((e) => e.action === 'create' && e.objectId.startsWith('c')));
  });
}

async function reopen(t: ExecutionContext, dir: string, max: number): Promise<Store> {
  const store = await openEmbeddedStore(dir, { ...testDeps(), auditMaxEntries: max });
  t.teardown(() => store.close());
  return store;
}

test.serial('audit entries survive a reopen of an etcd store too', async (t) => {
  const prefix = etcdPrefix();
  const first = new DocumentStore(await openEtcd<StoredDoc>(t, { prefix }), { ...testDeps(), auditMaxEntries: 2 });
  await first.create({ kind: 'Node', id: 'a', name: 'a', spec: nodeSpec() });
  await first.close();
  const second = new DocumentStore(await openEtcd<StoredDoc>(t, { prefix }), { ...testDeps(), auditMaxEntries: 2 });
  await second.create({ kind: 'Node', id: 'b', name: 'b', spec: nodeSpec() });
  await second.create({ kind: 'Node', id: 'c', name: 'c', spec: nodeSpec() });
  t.deepEqual(
    (await entries(second)).map((e) => e.objectId),
    ['b', 'c'],
  );
});

test.serial(
  'audit of two controllers on one etcd: entries numbered the same by both are renumbered, every change is made and recorded',
  async (t) => {
    const prefix = etcdPrefix();
    const a = new DocumentStore(await openEtcd<StoredDoc>(t, { prefix }), { ...testDeps(), auditMaxEntries: 1000 });
    const b = new DocumentStore(await openEtcd<StoredDoc>(t, { prefix }), { ...testDeps(), auditMaxEntries: 1000 });
    // Each store's trail numbers from what it loaded: their first entries collide.
    const ids = Array.from({ length: 20 }, (_, i) => `n${i}`);
    // Every create resolved: no change was refused for its entry.
    await Promise.all(ids.map((id, i) => (i % 2 ? a : b).create({ kind: 'Node', id, name: id, spec: nodeSpec() })));
    // b's writes reach a's read cache by its watch.
    await waitFor('every change in a', async () => (await a.list('Node')).length === ids.length);
    await waitFor('every entry in a', async () => (await entries(a)).length === ids.length);
    t.deepEqual((await entries(a)).map((e) => e.objectId).sort(), [...ids].sort(), 'one entry per change');
  },
);

test('audit entries survive a restart of the embedded store, and numbering and the bound carry on', async (t) => {
  const dir = await tempDir(t);
  const first = await openEmbeddedStore(dir, { ...testDeps(), auditMaxEntries: 3 });
  await asActor({ type: 'file', name: 'cluster.yaml' }, () => first.create({ kind: 'Node', id: 'a', name: 'a', spec: nodeSpec() }));
  await first.create({ kind: 'Node', id: 'b', name: 'b', spec: nodeSpec() });
  await first.close();
  const second = await reopen(t, dir, 3);
  t.deepEqual(
    (await entries(second)).map((e) => [e.objectId, e.actor.name]),
    [
      ['a', 'cluster.yaml'],
      ['b', 'quarry'],
    ],
  );
  await second.create({ kind: 'Node', id: 'c', name: 'c', spec: nodeSpec() });
  await second.create({ kind: 'Node', id: 'd', name: 'd', spec: nodeSpec() });
  t.deepEqual(
    (await entries(second)).map((e) => e.objectId),
    ['b', 'c', 'd'],
  );
  const ids = (await second.list(AuditKind.AuditEntry)).map((d) => d.id);
  t.deepEqual([...ids].sort(), ids);
  t.is(new Set(ids).size, 3);
});

test('audit is off unless the store is given a bound: one write per write', async (t) => {
  const store = await createMemoryStore(testDeps());
  await store.create({ kind: 'Node', id: 'n', name: 'node-1', spec: nodeSpec() });
  t.is(store.revision(), 1);
  t.deepEqual(await store.list(AuditKind.AuditEntry), []);
});

test('audit changed fields are JSON pointers of the differing leaves, arrays and scalars whole', (t) => {
  t.deepEqual(changedPaths({ a: 1, b: { c: [1], d: 'x' } }, { a: 1, b: { c: [1, 2], d: 'x', e: true } }), ['/b/c', '/b/e']);
  t.deepEqual(changedPaths({ 'x/y': 1, 'm~n': 2 }, {}), ['/m~0n', '/x~1y']);
  t.deepEqual(changedPaths({ a: 1 }, { a: 1 }), []);
  t.deepEqual(changedPaths(1, 2), ['/']);
});
