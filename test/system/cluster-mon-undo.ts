// #16 for real: a monitor declared absent is taken out of the monmap and off its node; declared
// again it is made afresh (a new store from the current monmap, a join) and rejoins the quorum,
// 3/3, with no restart of the store that was removed. Monitors are declared through the store,
// as the specs folder does (no API operation removes one).
import type { ExecutionContext } from 'ava';
import { Kind, type NodeSpec } from '../../src/model/kinds.js';
import type { NetnsCluster } from './netns-cluster.js';
import { until } from './node-sandbox.js';

async function quorumNames(c: NetnsCluster): Promise<string[]> {
  const out = (await c.runner.run('ceph', c.ceph.args(['quorum_status']), { timeoutMs: 20_000 })).stdout;
  return (JSON.parse(out) as { quorum_names: string[] }).quorum_names;
}

async function monmapNames(c: NetnsCluster): Promise<string[]> {
  const out = (await c.runner.run('ceph', c.ceph.args(['mon', 'dump']), { timeoutMs: 20_000 })).stdout;
  return (JSON.parse(out) as { mons: Array<{ name: string }> }).mons.map((m) => m.name);
}

export async function monRemovedAndDeclaredAgain(t: ExecutionContext, c: NetnsCluster): Promise<void> {
  const n = c.nodes[2]!;
  const node = await c.q.store.mustGet<NodeSpec>(Kind.Node, n.id);
  const name = node.spec.hostname;
  const mon = node.spec.daemons.mon!;
  t.is((await quorumNames(c)).length, 3);

  const { mon: _removed, ...others } = node.spec.daemons;
  await c.q.store.mutateSpec<NodeSpec>(Kind.Node, n.id, (d) => ({ ...d.spec, daemons: others }));
  await until(
    'out of the monmap',
    () => monmapNames(c),
    (names) => !names.includes(name),
    120_000,
  );
  await until(
    'its daemon stopped and its store removed',
    () => n.host.pidOf('mon', name),
    (p) => p === null,
    120_000,
  );
  t.deepEqual((await quorumNames(c)).length, 2, 'two monitors left, in quorum');

  const since = Date.now();
  await c.q.store.mutateSpec<NodeSpec>(Kind.Node, n.id, (d) => ({ ...d.spec, daemons: { ...d.spec.daemons, mon } }));
  const names = await until(
    'back in the quorum, 3/3',
    () => quorumNames(c),
    (q) => q.length === 3 && q.includes(name),
    180_000,
  );
  t.is(names.length, 3);
  const runs = (await c.q.tasks.recent(200)).filter((r) => r.spec.targetId === n.id && Date.parse(r.metadata.createdAt) >= since);
  const taskNames = runs.map((r) => r.spec.taskName);
  t.true(taskNames.includes('ceph.mon.join'), `made afresh by a join: ${taskNames.join(', ')}`);
  t.false(
    runs.some((r) => r.spec.taskName === 'ceph.daemon.restart' && r.spec.args.daemon === 'mon'),
    `never restarted from the removed store: ${taskNames.join(', ')}`,
  );
  t.is(runs.filter((r) => r.spec.taskName === 'ceph.mon.join' && r.status.state === 'completed').length, 1, 'one join');
}
