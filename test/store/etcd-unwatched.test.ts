// Keys kept out of the watch (EtcdBackendOptions.unwatched: the agents' heartbeat records) are
// stored, read, listed and compared like any other, but no watcher hears of them, no read cache
// holds them, and they live outside the etcd range the watches cover, so etcd does not even
// send them. The store keeps UNWATCHED_KINDS there.
import test from 'ava';
import { Etcd3 } from 'etcd3';
import { ConflictError } from '../../src/errors.js';
import { docKey } from '../../src/model/document.js';
import { FleetKind, UNWATCHED_KINDS } from '../../src/model/fleet-kinds.js';
import { Kind } from '../../src/model/kinds.js';
import { openEtcdStores, unwatchedPrefixes } from '../../src/store/index.js';
import type { Store, StoreEvent } from '../../src/store/types.js';
import { nodeSpec } from '../runtime/fixtures.js';
import { etcdEndpoints, etcdPrefix, openEtcd, useEtcd } from './backends.js';
import { until } from './helpers.js';

useEtcd(test);

test.serial('etcd backend: unwatched keys are read, listed and compared like others, and no watcher or cache has them', async (t) => {
  const prefix = etcdPrefix();
  const b = await openEtcd<{ n: number }>(t, { prefix, unwatched: ['Beat/'] });
  const r = b.revision();
  const shared: string[] = [];
  b.watch(r, (e) => shared.push(e.type === 'relist' ? 'relist' : `${e.type} ${e.key}`));
  const beat = await b.put('Beat/n1', { n: 1 });
  await b.put('Node/n1', { n: 1 });
  await b.put('Beat/n2', { n: 2 }, { modRevision: 0 });
  await b.put('Beat/n1', { n: 11 }, { modRevision: beat });
  await t.throwsAsync(b.put('Beat/n1', { n: 12 }, { modRevision: beat }), { instanceOf: ConflictError });
  await b.delete('Beat/n2');
  const last = await b.put('Zone/z', { n: 3 });
  // A watcher from an older revision has a watch of its own: the same range.
  const own: string[] = [];
  b.watch(r, (e) => own.push(e.type === 'relist' ? 'relist' : `${e.type} ${e.key}`));
  // Events come in revision order: once the last write is heard, any of the others would have been.
  await until(() => shared.includes('put Zone/z') && own.includes('put Zone/z'), 'the last write');
  t.deepEqual(shared, ['put Node/n1', 'put Zone/z']);
  t.deepEqual(own, ['put Node/n1', 'put Zone/z']);
  await until(() => (b.cacheStats()?.revision ?? 0) >= last, 'the cache at the last write');
  t.is(b.cacheStats()?.keys, 2, 'the cache holds the watched keys only');

  t.deepEqual((await b.get('Beat/n1'))?.value, { n: 11 });
  t.is(await b.get('Beat/n2'), undefined);
  t.deepEqual(
    (await b.list('Beat/')).items.map((kv) => kv.key),
    ['Beat/n1'],
  );
  t.deepEqual(
    (await b.list('B')).items.map((kv) => kv.key),
    ['Beat/n1'],
    'a prefix of the unwatched one',
  );
  const all = await b.list('');
  t.deepEqual(
    all.items.map((kv) => kv.key),
    ['Beat/n1', 'Node/n1', 'Zone/z'],
    'one list, in key order',
  );
  t.true(all.revision >= last);

  const raw = new Etcd3({ hosts: etcdEndpoints() });
  t.teardown(() => raw.close());
  t.deepEqual(await raw.getAll().prefix(prefix).keys(), [`${prefix}Node/n1`, `${prefix}Zone/z`, `${prefix}~~/Beat/n1`]);
});

test.serial('etcd backend: another controller reads an unwatched key as soon as it is written', async (t) => {
  const prefix = etcdPrefix();
  const writer = await openEtcd<{ n: number }>(t, { prefix, unwatched: ['Beat/'] });
  const reader = await openEtcd<{ n: number }>(t, { prefix, unwatched: ['Beat/'] });
  for (let n = 1; n <= 3; n++) {
    await writer.put('Beat/x', { n });
    // From etcd, not a cache waiting for a watch that never brings it.
    t.deepEqual((await reader.get('Beat/x'))?.value, { n });
  }
});

/** Writes a heartbeat record, an inventory and then a node, and returns the kinds `store`'s watcher heard of
 * by the time it heard of the node. */
async function heardOf(store: Store): Promise<string[]> {
  const kinds: string[] = [];
  const stop = store.watch(store.revision(), (e: StoreEvent) => {
    if (e.type !== 'relist') kinds.push(e.doc.kind);
  });
  try {
    await store.create({ kind: FleetKind.NodeHeartbeat, id: 'n1', name: 'n1', spec: { nodeId: 'n1' } });
    await store.create({ kind: FleetKind.NodeInventory, id: 'n1', name: 'n1', spec: { nodeId: 'n1' } });
    await store.create({ kind: Kind.Node, name: 'n1', spec: nodeSpec(1) });
    await until(() => kinds.includes(Kind.Node), 'the node');
    return kinds;
  } finally {
    stop();
  }
}

test.serial('document store: no watcher hears of the unwatched kinds on etcd, where they live outside the watched range', async (t) => {
  const prefix = etcdPrefix();
  const { store } = await openEtcdStores({ endpoints: etcdEndpoints(), prefix });
  t.teardown(() => store.close());
  t.deepEqual(await heardOf(store), [Kind.Node]);
  t.deepEqual(
    (await store.list(FleetKind.NodeInventory)).map((d) => d.id),
    ['n1'],
  );
  t.deepEqual(unwatchedPrefixes().sort(), [...UNWATCHED_KINDS].map((k) => docKey(k, '')).sort());
  const raw = new Etcd3({ hosts: etcdEndpoints() });
  t.teardown(() => raw.close());
  t.truthy(await raw.get(`${prefix}~~/${docKey(FleetKind.NodeHeartbeat, 'n1')}`).string());
});
