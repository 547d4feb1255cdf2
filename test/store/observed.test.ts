// observeWrites: every write timed by operation (refused ones too), reads untouched, and a
// closed store is seen as closed (GET /readyz).
import test from 'ava';
import type { NodeSpec } from '../../src/model/kinds.js';
import { createMemoryStore } from '../../src/store/index.js';
import { observeWrites, type StoreWrite } from '../../src/store/observed.js';
import { createNode } from '../runtime/fixtures.js';

test('observed store times each write by operation, refused ones too, and knows when it is closed', async (t) => {
  const seen: Array<[StoreWrite, number]> = [];
  const store = observeWrites(await createMemoryStore(), { written: (op, s) => seen.push([op, s]) });
  const node = await createNode(store);
  await t.throwsAsync(store.create({ kind: 'Nope', name: 'x', spec: {} }));
  await store.updateStatus('Node', node.id, { phase: 'active' });
  const rv = (await store.mustGet('Node', node.id)).metadata.resourceVersion;
  await store.updateSpec<NodeSpec>('Node', node.id, { ...node.spec, hostname: 'h2' }, { resourceVersion: rv });
  await store.mutateSpec<NodeSpec>('Node', node.id, (d) => ({ ...d.spec, hostname: 'h3' }));
  await t.throwsAsync(store.updateSpec<NodeSpec>('Node', node.id, { ...node.spec, hostname: 'h4' }, { resourceVersion: rv }));
  await store.get('Node', node.id);
  await store.list('Node');
  await store.delete('Node', node.id);
  t.deepEqual(
    seen.map(([op]) => op),
    ['create', 'create', 'status', 'spec', 'spec', 'spec', 'delete'],
  );
  for (const [, s] of seen) t.true(s >= 0 && s < 10);
  t.true(store.isOpen());
  await store.close();
  t.false(store.isOpen());
});
