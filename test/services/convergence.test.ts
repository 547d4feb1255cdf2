// The convergence service: a fixed number of store reads whatever the fleet's size, and per
// specs file what blocks it (its objects, a node's daemons, pending names, a failed apply).
import test from 'ava';
import { Daemon } from '../../src/catalogue/index.js';
import type { FileStatus } from '../../src/gitops/folder.js';
import { Kind } from '../../src/model/kinds.js';
import { ensureCluster } from '../../src/services/cluster.js';
import { Convergence } from '../../src/services/convergence.js';
import { createMemoryStore, type Store } from '../../src/store/index.js';
import { nodeSpec } from '../store/helpers.js';

const at = '2026-01-01T00:00:00.000Z';
const activeStatus = {
  phase: 'active',
  observedGeneration: 1,
  conditions: [{ type: 'Ready', status: 'True', reason: 'Active', message: '', lastTransitionTime: at, observedGeneration: 1 }],
};
const mac = (i: number) => `52:54:00:00:${((i >> 8) & 255).toString(16).padStart(2, '0')}:${(i & 255).toString(16).padStart(2, '0')}`;

/** Counts the store's reads. */
function counting(store: Store): { store: Store; reads: () => number } {
  let n = 0;
  const wrapped: Store = Object.create(store) as Store;
  wrapped.list = (kind) => (n++, store.list(kind));
  wrapped.get = (kind, id) => (n++, store.get(kind, id));
  return { store: wrapped, reads: () => n };
}

test('convergence summary reads each kind once, whatever the number of nodes', async (t) => {
  const store = await createMemoryStore();
  t.teardown(() => store.close());
  await ensureCluster(store);
  for (let i = 0; i < 300; i++) {
    const n = await store.create({ kind: Kind.Node, name: `h${i}`, spec: nodeSpec({ hostname: `h${i}`, macs: [mac(i)] }) });
    await store.updateStatus(Kind.Node, n.id, activeStatus);
  }
  const c = counting(store);
  const s = await new Convergence(c.store).summary();
  t.is(c.reads(), 7, 'six lists and the Cluster');
  t.deepEqual(
    s.convergence.find((x) => x.kind === 'Node'),
    { kind: 'Node', ready: 300, total: 300 },
  );
  t.is(s.health.status, 'UNKNOWN', 'Ceph has not answered');
  t.false(s.converged, 'the Cluster has not been observed');
  t.deepEqual(
    s.blocked.map((b) => `${b.kind}:${b.reason}`),
    ['Cluster:NotObserved'],
  );
});

test('convergence files: a node file waits on its daemons, pending names and a failed apply block too', async (t) => {
  const store = await createMemoryStore();
  t.teardown(() => store.close());
  const n = await store.create({
    kind: Kind.Node,
    name: 'h1',
    spec: nodeSpec({ hostname: 'h1', daemons: { [Daemon.mgr]: {} } }),
  });
  await store.updateStatus(Kind.Node, n.id, {
    ...activeStatus,
    ceph: { [Daemon.mgr]: { phase: 'blocked', reason: 'NoQuorum', message: 'waiting' } },
  });
  const file = (over: Partial<FileStatus>): FileStatus => ({
    file: 'a.yaml',
    state: 'applied',
    documents: 1,
    appliedAt: at,
    lastError: null,
    objects: [{ kind: Kind.Node, id: n.id, name: 'h1', document: 0 }],
    pending: [],
    orphans: [],
    ...over,
  });
  const [applied, pending, failed, empty] = await new Convergence(store).files([
    file({}),
    file({
      file: 'b.yaml',
      state: 'pending',
      objects: [],
      pending: [{ document: 0, kind: 'Node', name: 'h9', reason: 'NotSeen', message: 'not booted' }],
    }),
    file({ file: 'c.yaml', state: 'failed', objects: [], lastError: { message: 'c.yaml: 1 error(s)', errors: [] } }),
    file({ file: 'd.yaml', objects: [] }),
  ]);
  t.like(applied, { state: 'applied', converged: false });
  t.deepEqual(applied!.blocking, [
    { kind: 'Daemon', id: `${n.id}/${Daemon.mgr}`, name: `${Daemon.mgr}.h1`, reason: 'Blocked', message: 'waiting' },
  ]);
  t.deepEqual(pending!.blocking, [{ kind: 'Node', id: '', name: 'h9', reason: 'NotSeen', message: 'not booted' }]);
  t.like(failed, {
    converged: false,
    blocking: [{ kind: 'File', id: '', name: 'c.yaml', reason: 'ApplyFailed', message: 'c.yaml: 1 error(s)' }],
  });
  t.like(empty, { converged: true, blocking: [] });
});
