// Document semantics, run against the memory store and the embedded store alike.
import test, { type ExecutionContext } from 'ava';
import { ConflictError, InputError, NotFoundError } from '../../src/errors.js';
import { createMemoryStore, openEmbeddedStore, type Store, type StoreEvent } from '../../src/store/index.js';
import { nodeSpec, tempDir, testDeps, tick } from './helpers.js';

type Factory = (t: ExecutionContext) => Promise<Store>;

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
];

for (const [name, open] of factories) {
  test(`${name} store creates a document with defaults`, async (t) => {
    const store = await open(t);
    const doc = await store.create({ kind: 'Node', name: 'n1', spec: nodeSpec() });
    t.is(doc.id, 'id-1');
    t.is(doc.metadata.generation, 1);
    t.is(doc.metadata.resourceVersion, 1);
    t.is(doc.metadata.createdAt, '2026-01-01T00:00:00.000Z');
    t.deepEqual(doc.metadata.labels, {});
    t.is(doc.metadata.source, null);
    t.deepEqual(doc.status, {});
    t.deepEqual(await store.mustGet('Node', 'id-1'), doc);
  });

  test(`${name} store refuses a second create of the same id`, async (t) => {
    const store = await open(t);
    await store.create({ kind: 'Node', id: 'a', name: 'n1', spec: nodeSpec() });
    const err = await t.throwsAsync(store.create({ kind: 'Node', id: 'a', name: 'n1', spec: nodeSpec() }), { instanceOf: ConflictError });
    t.is(err.message, 'Node a already exists');
    t.is(err.code, 'CONFLICT');
  });

  test(`${name} store refuses a stale resourceVersion`, async (t) => {
    const store = await open(t);
    const doc = await store.create({ kind: 'Node', id: 'a', name: 'n1', spec: nodeSpec() });
    await store.updateSpec('Node', 'a', nodeSpec({ power: 'off' }), { resourceVersion: doc.metadata.resourceVersion });
    const err = await t.throwsAsync(store.updateSpec('Node', 'a', nodeSpec({ role: 'master' }), { resourceVersion: 1 }), {
      instanceOf: ConflictError,
    });
    t.is(err.message, 'Node a was modified concurrently: resourceVersion 1 is stale (current 2)');
    t.is(err.code, 'CONFLICT');
    t.is((await store.mustGet<{ role: string }>('Node', 'a')).spec.role, 'worker');
  });

  test(`${name} store lets exactly one of two concurrent CAS writes win`, async (t) => {
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
    t.is(store.revision(), 2);
  });

  test(`${name} store bumps generation only when the spec changes`, async (t) => {
    const store = await open(t);
    const d1 = await store.create({ kind: 'Node', id: 'a', name: 'n1', spec: nodeSpec() });
    const d2 = await store.updateSpec('Node', 'a', nodeSpec(), { resourceVersion: 1, labels: { rack: 'r1' } });
    t.is(d2.metadata.generation, 1);
    t.is(d2.metadata.resourceVersion, 2);
    const d3 = await store.updateStatus('Node', 'a', { phase: 'active' });
    t.is(d3.metadata.generation, 1);
    const d4 = await store.updateSpec('Node', 'a', nodeSpec({ power: 'off' }), { resourceVersion: d3.metadata.resourceVersion });
    t.is(d4.metadata.generation, 2);
    t.is(d1.metadata.generation, 1);
  });

  test(`${name} store skips a spec write that changes nothing`, async (t) => {
    const store = await open(t);
    const doc = await store.create({ kind: 'Node', id: 'a', name: 'n1', spec: nodeSpec() });
    const same = await store.updateSpec('Node', 'a', nodeSpec(), { resourceVersion: 1, name: 'n1' });
    t.deepEqual(same, doc);
    t.is(store.revision(), 1);
  });

  test(`${name} store skips a status write equal to the stored one`, async (t) => {
    const store = await open(t);
    await store.create({ kind: 'Node', id: 'a', name: 'n1', spec: nodeSpec() });
    const first = await store.updateStatus('Node', 'a', { phase: 'active', bootCount: 1 });
    const events: StoreEvent[] = [];
    store.watch(store.revision(), (e) => events.push(e));
    const again = await store.updateStatus('Node', 'a', { bootCount: 1, phase: 'active' });
    await tick();
    t.deepEqual(again, first);
    t.is(store.revision(), 2);
    t.deepEqual(events, []);
  });

  test(`${name} store keeps a spec write made between a status read and its write`, async (t) => {
    const store = await open(t);
    await store.create({ kind: 'Node', id: 'a', name: 'n1', spec: nodeSpec() });
    const [, status] = await Promise.all([
      store.updateSpec('Node', 'a', nodeSpec({ power: 'off' }), { resourceVersion: 1 }),
      store.updateStatus('Node', 'a', { phase: 'offline' }),
    ]);
    const doc = await store.mustGet<{ power: string }, { phase: string }>('Node', 'a');
    t.is(doc.spec.power, 'off');
    t.is(doc.status.phase, 'offline');
    t.is(status.metadata.resourceVersion, 3);
  });

  test(`${name} store refuses an invalid spec naming the field and writes nothing`, async (t) => {
    const store = await open(t);
    await store.create({ kind: 'Node', id: 'a', name: 'n1', spec: nodeSpec() });
    const bad = { ...nodeSpec(), power: 'sideways' };
    const err = await t.throwsAsync(store.updateSpec('Node', 'a', bad, { resourceVersion: 1 }), { instanceOf: InputError });
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
    t.is(store.revision(), 1);
    t.is(await store.get('Node', 'b'), undefined);
  });

  test(`${name} store validates a TaskRun status only when one is given`, async (t) => {
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

  test(`${name} store mutateSpec retries until its increment lands`, async (t) => {
    const store = await open(t);
    await store.create({ kind: 'Node', id: 'a', name: 'n1', spec: nodeSpec() });
    const bump = () =>
      store.mutateSpec<ReturnType<typeof nodeSpec>>('Node', 'a', (d) => ({ ...d.spec, restartGeneration: d.spec.restartGeneration + 1 }));
    await Promise.all([bump(), bump(), bump(), bump(), bump()]);
    const doc = await store.mustGet<{ restartGeneration: number }>('Node', 'a');
    t.is(doc.spec.restartGeneration, 5);
    t.is(doc.metadata.generation, 6);
  });

  test(`${name} store deletes with CAS and reports a missing document`, async (t) => {
    const store = await open(t);
    await store.create({ kind: 'Node', id: 'a', name: 'n1', spec: nodeSpec() });
    await t.throwsAsync(store.delete('Node', 'a', { resourceVersion: 7 }), { instanceOf: ConflictError });
    await store.delete('Node', 'a', { resourceVersion: 1 });
    t.is(await store.get('Node', 'a'), undefined);
    const err = await t.throwsAsync(store.mustGet('Node', 'a'), { instanceOf: NotFoundError });
    t.is(err.message, 'Node a not found');
    await t.throwsAsync(store.delete('Node', 'a'), { instanceOf: NotFoundError });
  });

  test(`${name} store lists one kind in id order`, async (t) => {
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

  test(`${name} store hands out frozen documents: a caller cannot change the store by mutating one`, async (t) => {
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

  test(`${name} store watch reports kinds of change and specChanged`, async (t) => {
    const store = await open(t);
    const events: StoreEvent[] = [];
    store.watch(0, (e) => events.push(e));
    await store.create({ kind: 'Node', id: 'a', name: 'n1', spec: nodeSpec() });
    await store.updateStatus('Node', 'a', { phase: 'booting' });
    await store.updateSpec('Node', 'a', nodeSpec({ power: 'off' }), { resourceVersion: 2 });
    await store.delete('Node', 'a');
    await tick();
    t.deepEqual(
      events.map((e) => (e.type === 'relist' ? 'relist' : `${e.type}@${e.revision}:${e.specChanged}:${e.doc.metadata.resourceVersion}`)),
      ['added@1:true:1', 'modified@2:false:2', 'modified@3:true:3', 'deleted@4:true:4'],
    );
  });

  test(`${name} store watch resuming from the history tells a change from a create`, async (t) => {
    const store = await open(t);
    await store.create({ kind: 'Node', id: 'a', name: 'n1', spec: nodeSpec() });
    await store.updateStatus('Node', 'a', { phase: 'booting' });
    const events: StoreEvent[] = [];
    store.watch(0, (e) => events.push(e));
    await tick();
    t.deepEqual(
      events.map((e) => (e.type === 'relist' ? 'relist' : `${e.type}@${e.revision}:${e.specChanged}`)),
      ['added@1:true', 'modified@2:true'],
    );
  });

  test(`${name} store watch resumes from a revision with exactly the later events`, async (t) => {
    const store = await open(t);
    for (let i = 0; i < 5; i++) await store.create({ kind: 'Node', id: `n${i}`, name: `n${i}`, spec: nodeSpec() });
    const seen: number[] = [];
    store.watch(3, (e) => seen.push(e.revision));
    await store.updateStatus('Node', 'n0', { phase: 'active' });
    await tick();
    t.deepEqual(seen, [4, 5, 6]);
  });
}
