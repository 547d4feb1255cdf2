// Removing a monitor no longer desired, through the store (no API operation removes one; GitOps
// will, with `state: absent`): held while it would break quorum, done once it would not.
import test from 'ava';
import { Kind, type NodeSpec, type NodeStatusFields } from '../../src/model/kinds.js';
import type { Doc } from '../../src/model/document.js';
import { Client } from '../http/client.js';
import { ADMIN_PASSWORD, allActive, startLab, waitFor } from './harness.js';

type NodeDoc = Doc<NodeSpec, NodeStatusFields>;

test('mon loop: an undesired monitor waits while removing it would break quorum, then is removed', async (t) => {
  const q = await startLab(t, 3);
  const nodes = await allActive(q, 3);
  const c = new Client(q.url);
  t.is((await c.post('/user/login', { username: 'admin', password: ADMIN_PASSWORD })).status, 200);
  const disks = (await c.get('/disks')).json as Array<{ id: string; nodeId: string; eligible: boolean }>;
  for (const n of nodes) {
    const disk = disks.find((d) => d.nodeId === n.id && d.eligible)!;
    t.is((await c.post('/ceph/mon/create', { nodeId: n.id, diskId: disk.id })).status, 200);
  }
  const ceph = q.lab!.ceph;
  await waitFor('three monitors in quorum', () => ceph.mons.quorum()?.length === 3, 30_000);
  const byHost = (h: string) => nodes.find((n) => n.spec.hostname === h)!;
  const [first, second, third] = ceph.mons.mons.map((m) => byHost(m.name)) as [NodeDoc, NodeDoc, NodeDoc];

  // The third node loses power: two of three monitors up. Removing the first would leave one
  // of two up, so it is held.
  const thirdMachine = q.lab!.machine(third.spec.macs[0]!);
  thirdMachine.powerOff();
  await waitFor('quorum of two', () => ceph.mons.quorum()?.length === 2);
  await q.store.mutateSpec<NodeSpec>(Kind.Node, first.id, (d) => ({ ...d.spec, daemons: {} }));
  const held = await waitFor('the removal held', async () => {
    const s = (await q.store.get<NodeSpec, NodeStatusFields>(Kind.Node, first.id))?.status.ceph?.mon;
    return s?.reason === 'QuorumWouldBreak' ? s : undefined;
  });
  t.is(held.phase, 'blocked');
  t.regex(held.message, /would leave 1 of 2 monitors up/);
  t.deepEqual(ceph.mons.mons.map((m) => m.name).sort(), [first, second, third].map((n) => n.spec.hostname).sort(), 'nothing removed');
  t.false((await q.tasks.recent(1000)).some((r) => r.spec.taskName.startsWith('ceph.mon.') && r.spec.taskName.includes('remove')));

  // Power back: its monitor starts again, three are up, and the first one goes.
  thirdMachine.powerOn();
  await waitFor('the first monitor out of the monmap', () => !ceph.mons.get(first.spec.hostname), 30_000);
  t.deepEqual(ceph.mons.mons.map((m) => m.name).sort(), [second, third].map((n) => n.spec.hostname).sort());
  t.is(ceph.mons.quorum()?.length, 2);
  const gone = await waitFor(
    'the first node reports no monitor and carries no monitor state',
    async () => {
      const n = await q.store.get<NodeSpec, NodeStatusFields>(Kind.Node, first.id);
      return n && n.status.daemons?.mon === false && n.status.ceph?.mon === undefined ? n : undefined;
    },
    30_000,
  );
  t.is(gone.status.ceph?.mon, undefined);
  t.false(ceph.monStores.has(first.spec.hostname), 'its store is deleted');
  t.true(ceph.monStores.has(second.spec.hostname));
  const runs = (await q.tasks.recent(1000)).filter((r) => r.spec.targetId === first.id && r.spec.taskName.includes('remove'));
  const names = runs
    .filter((r) => r.status.state === 'completed')
    .map((r) => r.spec.taskName)
    .sort();
  t.deepEqual(names, ['ceph.mon.monmap-remove', 'ceph.mon.remove']);
  t.deepEqual(runs.find((r) => r.spec.taskName === 'ceph.mon.remove')?.spec.args, { monName: first.spec.hostname });
});

test('mon loop: the last monitor is never removed', async (t) => {
  const q = await startLab(t, 1);
  const [only] = await allActive(q, 1);
  const c = new Client(q.url);
  t.is((await c.post('/user/login', { username: 'admin', password: ADMIN_PASSWORD })).status, 200);
  const disks = (await c.get('/disks')).json as Array<{ id: string; nodeId: string; eligible: boolean }>;
  const disk = disks.find((d) => d.nodeId === only!.id && d.eligible)!;
  t.is((await c.post('/ceph/mon/create', { nodeId: only!.id, diskId: disk.id })).status, 200);
  const ceph = q.lab!.ceph;
  await waitFor('one monitor in quorum', () => ceph.mons.quorum()?.length === 1, 30_000);
  await q.store.mutateSpec<NodeSpec>(Kind.Node, only!.id, (d) => ({ ...d.spec, daemons: {} }));
  const held = await waitFor('the removal held', async () => {
    const s = (await q.store.get<NodeSpec, NodeStatusFields>(Kind.Node, only!.id))?.status.ceph?.mon;
    return s?.reason === 'LastMonitor' ? s : undefined;
  });
  t.is(held.phase, 'blocked');
  t.is(ceph.mons.mons.length, 1);
  t.true(ceph.hasQuorum());
});
