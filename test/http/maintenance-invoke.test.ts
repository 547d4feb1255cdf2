// node.maintenance and node.maintenance-exit over real HTTP (#15 part 3): each sets desired state
// only (spec.maintenance), offered by state; a refused target says why and changes nothing.
import test from 'ava';
import { Kind, type NodeSpec } from '../../src/model/kinds.js';
import type { InvokeResults } from './bodies.js';
import { allActive, startLab, waitFor } from '../lab/harness.js';
import { login } from '../lab/ceph-cluster.js';

test('maintenance invocations: offered by state, refused with a reason and nothing changed, and only admins invoke', async (t) => {
  const q = await startLab(t, 2);
  await allActive(q, 2);
  const c = await login(q);
  const [a, off] = [1, 2].map((i) => q.lab!.machine(i).nodeId!) as [string, string];
  q.lab!.machine(2).partition();
  await waitFor('offline', async () => (await q.nodeOf(2)).status.phase === 'offline');
  const spec = async (id: string) => (await q.store.mustGet<NodeSpec>(Kind.Node, id)).spec;
  const invoke = async (operation: string, ids: string[]) =>
    (await c.post<InvokeResults>('/invoke/node', { operation, nodeIds: ids })).json.results;

  const exitFirst = await invoke('node.maintenance-exit', [a]);
  t.like(exitFirst[0], { status: 'rejected', reason: 'node.maintenance-exit is offered only to a node in maintenance (or entering it)' });
  const r = await invoke('node.maintenance', [a, off]);
  t.deepEqual(
    r.map((x) => x.status),
    ['scheduled', 'rejected'],
  );
  t.regex(r[1]!.reason!, /offered only to active nodes; this node is offline/);
  t.is((await spec(a)).maintenance, true);
  t.is((await spec(off)).maintenance, undefined, 'the refused target is unchanged');
  t.like((await invoke('node.maintenance', [a]))[0], { status: 'rejected', reason: 'the node is in maintenance already (or entering it)' });
  t.true((await c.get<string[]>(`/nodes/${a}/operations`)).json.includes('node.maintenance-exit'));

  // A viewer reads but cannot invoke.
  await c.post('/users', { username: 'viewer', password: 'viewer-password', name: 'V', email: 'v@example.com' });
  const v = await login(q, 'viewer', 'viewer-password');
  t.is((await v.post('/invoke/node', { operation: 'node.maintenance-exit', nodeIds: [a] })).status, 403);
  t.is((await spec(a)).maintenance, true);

  t.like((await invoke('node.maintenance-exit', [a]))[0], { status: 'scheduled' });
  t.false('maintenance' in (await spec(a)), 'absent again: the default');
});
