// Document semantics, run against the memory, embedded and etcd stores alike. Revisions are
// counted from the store's when the test began (`r`): etcd's does not start at 0, and its tests
// run one at a time so their writes still get the revisions that follow.
import test, { type ExecutionContext } from 'ava';
import { ConflictError, InputError, NotFoundError } from '../../src/errors.js';
import { createMemoryStore, DocumentStore, openEmbeddedStore, type Store, type StoreEvent, type StoredDoc } from '../../src/store/index.js';
import { openEtcd, useEtcd } from './backends.js';
import { BootKind } from '../../src/model/boot-kinds.js';
import { nodeSpec, tempDir, testDeps, tick, until } from './helpers.js';

type Factory = (t: ExecutionContext) => Promise<Store>;

useEtcd(test);

const factories: [string, Factory][] = [
  ['memory', async () => createMemoryStore(testDeps())],
  [
    'embedded',
    async (t) => {
      const store = await openEmbeddedStore(await tempDir(t), testDeps());
      t.teardown(() => store.close());
      return store;
    },
  ],
  // Opened by openEtcd, and closed with the test.
  ['etcd', async (t) => new DocumentStore(await openEtcd<StoredDoc>(t), testDeps())],
];

for (const [name, open] of factories) {
  const test_ = name === 'etcd' ? test.serial : test;
  test_(`${name} store creates a document with defaults`, async (t) => {
    const store = await open(t);
    const r = store.revision();
    const doc = await store.create({ kind: 'Node', name: 'n1', spec: nodeSpec() });
    t.is(doc.id, 'id-1');
    t.is(doc.metadata.generation, 1);
    t.is(doc.metadata.resourceVersion, r + 1);
    t.is(doc.metadata.createdAt, '2026-01-01T00:00:00.000Z');
    t.deepEqual(doc.metadata.labels, {});
    t.is(doc.metadata.source, null);
    t.deepEqual(doc.status, {});
    t.deepEqual(await store.mustGet('Node', 'id-1'), doc);
  });

  test_(`${name} store refuses a second create of the same id`, async (t) => {
    const store = await open(t);
    await store.create({ kind: 'Node', id: 'a', name: 'n1', spec: nodeSpec() });
    const err = await t.throwsAsync(store.create({ kind: 'Node', id: 'a', name: 'n1', spec: nodeSpec() }), { instanceOf: ConflictError });
    t.is(err.message, 'Node a already exists');
    t.is(err.code, 'CONFLICT');
  });

  test_(`${name} store refuses a stale resourceVersion`, async (t) => {
    const store = await open(t);
    const doc = await store.create({ kind: 'Node', id: 'a', name: 'n1', spec: nodeSpec() });
    const rv = doc.metadata.resourceVersion;
    await store.updateSpec('Node', 'a', nodeSpec({ power: 'off' }), { resourceVersion: rv });
    const err = await t.throwsAsync(store.updateSpec('Node', 'a', nodeSpec({ role: 'master' }), { resourceVersion: rv }), {
      instanceOf: ConflictError,
    });
    t.is(err.message, `Node a was modified concurrently: resourceVersion ${rv} is stale (current ${rv + 1})`);
    t.is(err.code, 'CONFLICT');
    t.is((await store.mustGet<{ role: string }>('Node', 'a')).spec.role, 'worker');
  });

  test_(`${name} store lets exactly one of two concurrent CAS writes win`, async (t) => {
    const store = await open(t);
    const doc = await store.create({ kind: 'Node', id: 'a', name: 'n1', spec: nodeSpec() });
    const rv = doc.metadata.resourceVersion;
    const results = await Promise.allSettled([
      store.updateSpec('Node', 'a', nodeSpec({ power: 'off' }), { resourceVersion: rv }),
      store.updateSpec('Node', 'a', nodeSpec({ role: 'master' }), { resourceVersion: rv }),
    ]);
    t.is(results.filter((r) => r.status === 'fulfilled').length, 1);
    const lost = results.find((r) => r.status === 'rejected');
    t.true(lost?.status === 'rejected' && lost.reason instanceof ConflictError);
    t.is(store.revision(), rv + 1);
  });

  test_(`${name} store bumps generation only when the spec changes`, async (t) => {
    const store = await open(t);
    const d1 = await store.create({ kind: 'Node', id: 'a', name: 'n1', spec: nodeSpec() });
    const rv = d1.metadata.resourceVersion;
    const d2 = await store.updateSpec('Node', 'a', nodeSpec(), { resourceVersion: rv, labels: { rack: 'r1' } });
    t.is(d2.metadata.generation, 1);
    t.is(d2.metadata.resourceVersion, rv + 1);
    const d3 = await store.updateStatus('Node', 'a', { phase: 'active' });
    t.is(d3.metadata.generation, 1);
    const d4 = await store.updateSpec('Node', 'a', nodeSpec({ power: 'off' }), { resourceVersion: d3.metadata.resourceVersion });
    t.is(d4.metadata.generation, 2);
    t.is(d1.metadata.generation, 1);
  });

  test_(`${name} store skips a spec write that changes nothing`, async (t) => {
    const store = await open(t);
    const doc = await store.create({ kind: 'Node', id: 'a', name: 'n1', spec: nodeSpec() });
    const rv = doc.metadata.resourceVersion;
    const same = await store.updateSpec('Node', 'a', nodeSpec(), { resourceVersion: rv, name: 'n1' });
    t.deepEqual(same, doc);
    t.is(store.revision(), rv);
  });

  test_(`${name} store skips a status write equal to the stored one`, async (t) => {
    const store = await open(t);
    await store.create({ kind: 'Node', id: 'a', name: 'n1', spec: nodeSpec() });
    const first = await store.updateStatus('Node', 'a', { phase: 'active', bootCount: 1 });
    const rv = first.metadata.resourceVersion;
    const events: StoreEvent[] = [];
    store.watch(store.revision(), (e) => events.push(e));
    const again = await store.updateStatus('Node', 'a', { bootCount: 1, phase: 'active' });
    // A write after it, which the watch must see first if the skipped one had gone through.
    await store.create({ kind: 'Node', id: 'b', name: 'n2', spec: nodeSpec() });
    await until(() => events.length >= 1, 'the later write');
    t.deepEqual(again, first);
    t.is(store.revision(), rv + 1);
    t.deepEqual(
      events.map((e) => (e.type === 'relist' ? 'relist' : `${e.type} ${e.doc.id}@${e.revision - rv}`)),
      ['added b@1'],
    );
  });

  test_(`${name} store keeps a spec write made between a status read and its write`, async (t) => {
    const store = await open(t);
    const { metadata } = await store.create({ kind: 'Node', id: 'a', name: 'n1', spec: nodeSpec() });
    const rv = metadata.resourceVersion;
    const [spec, status] = await Promise.allSettled([
      store.updateSpec('Node', 'a', nodeSpec({ power: 'off' }), { resourceVersion: rv }),
      store.updateStatus('Node', 'a', { phase: 'offline' }),
    ]);
    const doc = await store.mustGet<{ power: string }, { phase: string }>('Node', 'a');
    if (status.status === 'rejected') throw status.reason;
    t.is(doc.status.phase, 'offline');
    // etcd serves two requests in flight in either order: when the status write went first, the
    // spec write's CAS must have been refused (and nothing of it kept).
    if (name === 'etcd' && spec.status === 'rejected') {
      t.true(spec.reason instanceof ConflictError);
      t.is(doc.spec.power, 'on');
      t.is(status.value.metadata.resourceVersion, rv + 1);
      return;
    }
    t.is(spec.status, 'fulfilled');
    t.is(doc.spec.power, 'off');
    t.is(status.value.metadata.resourceVersion, rv + 2);
  });

  test_(`${name} store refuses an invalid spec naming the field and writes nothing`, async (t) => {
    const store = await open(t);
    const { metadata } = await store.create({ kind: 'Node', id: 'a', name: 'n1', spec: nodeSpec() });
    const rv = metadata.resourceVersion;
    const bad = { ...nodeSpec(), power: 'sideways' };
    const err = await t.throwsAsync(store.updateSpec('Node', 'a', bad, { resourceVersion: rv }), { instanceOf: InputError });
    t.is(err.message, 'invalid Node spec: /spec/power must be equal to one of the allowed values');
    t.deepEqual(
      err.errors.map((e) => e.path),
      ['/spec/power'],
    );
    const err2 = await t.throwsAsync(store.create({ kind: 'Node', id: 'b', name: 'n2', spec: nodeSpec(), status: { bootCount: -1 } }), {
      instanceOf: InputError,
    });
    t.deepEqual(
      err2.errors.map((e) => e.path),
      ['/status/bootCount'],
    );
    t.is(store.revision(), rv);
    t.is(await store.get('Node', 'b'), undefined);
  });

  test_(`${name} store validates a TaskRun status only when one is given`, async (t) => {
    const store = await open(t);
    const spec = {
      taskName: 'node.boot',
      targetKind: 'Node',
      targetId: 'a',
      generation: 1,
      nodeId: null,
      nodeHostname: null,
      args: {},
      timeoutMs: 1000,
      attempt: 1,
    };
    await store.create({ kind: 'TaskRun', id: 't1', name: 'boot', spec });
    const err = await t.throwsAsync(store.updateStatus('TaskRun', 't1', { state: 'running' }), { instanceOf: InputError });
    t.true(err.errors.some((e) => e.path === '/status/startedAt'));
  });

  test_(`${name} store mutateSpec retries until its increment lands`, async (t) => {
    const store = await open(t);
    await store.create({ kind: 'Node', id: 'a', name: 'n1', spec: nodeSpec() });
    const bump = () =>
      store.mutateSpec<ReturnType<typeof nodeSpec>>('Node', 'a', (d) => ({ ...d.spec, restartGeneration: d.spec.restartGeneration + 1 }));
    await Promise.all([bump(), bump(), bump(), bump(), bump()]);
    const doc = await store.mustGet<{ restartGeneration: number }>('Node', 'a');
    t.is(doc.spec.restartGeneration, 5);
    t.is(doc.metadata.generation, 6);
  });

  test_(`${name} store deletes with CAS and reports a missing document`, async (t) => {
    const store = await open(t);
    const { metadata } = await store.create({ kind: 'Node', id: 'a', name: 'n1', spec: nodeSpec() });
    await t.throwsAsync(store.delete('Node', 'a', { resourceVersion: metadata.resourceVersion + 7 }), { instanceOf: ConflictError });
    await store.delete('Node', 'a', { resourceVersion: metadata.resourceVersion });
    t.is(await store.get('Node', 'a'), undefined);
    const err = await t.throwsAsync(store.mustGet('Node', 'a'), { instanceOf: NotFoundError });
    t.is(err.message, 'Node a not found');
    await t.throwsAsync(store.delete('Node', 'a'), { instanceOf: NotFoundError });
  });

  test_(`${name} store lists one kind in id order`, async (t) => {
    const store = await open(t);
    for (const id of ['c', 'a', 'b']) await store.create({ kind: 'Node', id, name: id, spec: nodeSpec() });
    await store.create({
      kind: 'Disk',
      id: 'd',
      name: 'd',
      spec: { nodeId: '6f1c0a8e-0d2b-4c3e-9f4a-1b2c3d4e5f60', serial: 's', osd: false, wipeGeneration: 0 },
    });
    t.deepEqual(
      (await store.list('Node')).map((d) => d.id),
      ['a', 'b', 'c'],
    );
  });

  test_(`${name} store hands out frozen documents: a caller cannot change the store by mutating one`, async (t) => {
    const store = await open(t);
    const spec = nodeSpec();
    const doc = await store.create({ kind: 'Node', id: 'a', name: 'n1', spec });
    spec.macs.push('52:54:00:00:00:03');
    t.throws(() => doc.spec.macs.push('52:54:00:00:00:02'), { instanceOf: TypeError });
    const read = await store.mustGet<{ macs: string[] }>('Node', 'a');
    t.throws(
      () => {
        read.spec.macs.length = 0;
      },
      { instanceOf: TypeError },
    );
    t.deepEqual(
      (await store.mustGet<{ macs: string[] }>('Node', 'a')).spec.macs,
      ['52:54:00:00:00:01'],
      'the input object was copied, not kept',
    );
  });

  test_(`${name} store watch reports kinds of change and specChanged`, async (t) => {
    const store = await open(t);
    const r = store.revision();
    const events: StoreEvent[] = [];
    store.watch(r, (e) => events.push(e));
    await store.create({ kind: 'Node', id: 'a', name: 'n1', spec: nodeSpec() });
    await store.updateStatus('Node', 'a', { phase: 'booting' });
    await store.updateSpec('Node', 'a', nodeSpec({ power: 'off' }), { resourceVersion: r + 2 });
    await store.delete('Node', 'a');
    await until(() => events.length >= 4, 'four events');
    t.deepEqual(
      events.map((e) =>
        e.type === 'relist' ? 'relist' : `${e.type}@${e.revision - r}:${e.specChanged}:${e.doc.metadata.resourceVersion - r}`,
      ),
      ['added@1:true:1', 'modified@2:false:2', 'modified@3:true:3', 'deleted@4:true:4'],
    );
  });

  test_(`${name} store watch resuming from the history tells a change from a create`, async (t) => {
    const store = await open(t);
    const r = store.revision();
    await store.create({ kind: 'Node', id: 'a', name: 'n1', spec: nodeSpec() });
    await store.updateStatus('Node', 'a', { phase: 'booting' });
    const events: StoreEvent[] = [];
    store.watch(r, (e) => events.push(e));
    await until(() => events.length >= 2, 'two events');
    // Without the previous value (memory, embedded history) the spec may have moved; etcd
    // keeps it and knows this one did not.
    t.deepEqual(
      events.map((e) => (e.type === 'relist' ? 'relist' : `${e.type}@${e.revision - r}:${e.specChanged}`)),
      ['added@1:true', `modified@2:${name !== 'etcd'}`],
    );
  });

  test_(`${name} store watch resumes from a revision with exactly the later events`, async (t) => {
    const store = await open(t);
    const r = store.revision();
    for (let i = 0; i < 5; i++) await store.create({ kind: 'Node', id: `n${i}`, name: `n${i}`, spec: nodeSpec() });
    const seen: number[] = [];
    store.watch(r + 3, (e) => seen.push(e.revision - r));
    await store.updateStatus('Node', 'n0', { phase: 'active' });
    await until(() => seen.length >= 3, 'three events');
    await tick();
    t.deepEqual(seen, [4, 5, 6]);
  });

  test_(`${name} store writes a status batch in one transaction, all or nothing, refusing audited kinds`, async (t) => {
    const store = await open(t);
    // Boot records: an unaudited kind every store's watch carries (etcd's leaves heartbeat records out).
    const seenAt = (at: string) => ({ boots: [], seenAt: at });
    const hb = (id: string, at: string) => ({
      create: { kind: BootKind.NodeBoots, id, name: id, spec: { nodeId: id }, status: seenAt(at) },
    });
    const seen: string[] = [];
    const r = store.revision();
    store.watch(r, (e) => seen.push(e.type === 'relist' ? 'relist' : `${e.type} ${e.doc.id}`));
    const [a, b] = await store.writeStatuses([hb('a', '2026-01-01T00:00:01.000Z'), hb('b', '2026-01-01T00:00:01.000Z')]);
    t.deepEqual(await store.get(BootKind.NodeBoots, 'a'), a);
    t.deepEqual(await store.get(BootKind.NodeBoots, 'b'), b);
    const [a2] = await store.writeStatuses([{ base: a!, status: seenAt('2026-01-01T00:00:09.000Z') }]);
    t.deepEqual(a2?.status, seenAt('2026-01-01T00:00:09.000Z'));
    t.is(a2?.metadata.generation, 1, 'a status write is no spec change');
    t.true(a2!.metadata.resourceVersion > a!.metadata.resourceVersion);
    // `a` is stale now: the whole batch is refused, `c` included.
    await t.throwsAsync(
      store.writeStatuses([hb('c', '2026-01-01T00:00:02.000Z'), { base: a!, status: seenAt('2026-01-01T00:00:03.000Z') }]),
      {
        instanceOf: ConflictError,
      },
    );
    t.is(await store.get(BootKind.NodeBoots, 'c'), undefined);
    await t.throwsAsync(store.writeStatuses([{ base: a2!, status: seenAt('yesterday') }]), { instanceOf: InputError });
    await t.throwsAsync(store.writeStatuses([{ create: { kind: 'Node', id: 'n', name: 'n', spec: nodeSpec() } }]), { message: /audited/ });
    await until(() => seen.length >= 3, 'the writes');
    t.deepEqual(seen, ['added a', 'added b', 'modified a']);
  });
}
