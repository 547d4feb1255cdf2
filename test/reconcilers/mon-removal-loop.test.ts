// Two reconciles that both observed "nobody is removing" must not both take a monitor out of
// the monmap: the loop claims the one removal slot before anything is awaited.
import test from 'ava';
import { monLoop } from '../../reconcilers/mon/loop.js';
import { CLUSTER_ID, CephKind } from '../../src/model/ceph-kinds.js';
import { ManualClock } from '../../src/model/clock.js';
import { Kind, type NodeSpec, type NodeStatusFields } from '../../src/model/kinds.js';
import { newNodeSpec } from '../../src/fleet/discovery.js';
import { createMemoryStore } from '../../src/store/index.js';
import type { CephApi } from '../../src/clients/ceph-api.js';
import type { StartRequest, TaskRun } from '../../src/tasks/types.js';

test('mon loop starts one monmap removal at a time, even when two were planned at once', async (t) => {
  const store = await createMemoryStore();
  await store.create({
    kind: CephKind.Cluster,
    id: CLUSTER_ID,
    name: 'ceph',
    spec: {
      fsid: '3b5c0c6e-7f4c-4f0e-9a52-2a3e1b1c9d10',
      publicNetwork: null,
      clusterNetwork: null,
      monPort: 3300,
      poolDefaults: { size: 3, minSize: 2 },
    },
  });
  const names = ['a', 'b', 'c', 'd', 'e'];
  for (const [i, n] of names.entries()) {
    await store.create({
      kind: Kind.Node,
      id: `node-${n}`,
      name: n,
      spec: newNodeSpec(`52:54:00:00:00:0${i + 1}`, n),
      status: {
        phase: 'active',
        daemons: { mon: true, mgr: false, mds: false, rgw: false },
        ceph: { mon: { phase: 'running', reason: 'Running', message: '' } },
      },
    });
  }
  const starts: StartRequest[] = [];
  const ceph = {
    quorumStatus: async () => ({ quorumNames: names, monmap: { mons: names.map((name) => ({ name })) } }),
  } as unknown as CephApi;
  const loop = monLoop({
    store,
    ceph,
    clock: new ManualClock(),
    retryBaseMs: 1_000,
    startGraceMs: 1_000,
    blockedRecheckMs: 500,
    runTimeoutMs: 60_000,
    monGatherMs: 0,
    tasks: { start: async (req) => (starts.push(req), { id: `run-${starts.length}` } as TaskRun), latestFor: async () => undefined },
  });
  const ctx = { signal: new AbortController().signal };
  const [oa, ob] = [await loop.observe('node-a', ctx), await loop.observe('node-b', ctx)];
  const [pa, pb] = [loop.plan(oa!), loop.plan(ob!)];
  t.is(pa.step?.kind, 'monmap-remove');
  t.is(pb.step?.kind, 'monmap-remove', 'both observed nobody removing');
  const [ra, rb] = await Promise.all([loop.apply(oa!, pa, ctx), loop.apply(ob!, pb, ctx)]);
  t.deepEqual(
    starts.map((s) => [s.taskName, s.args]),
    [['ceph.mon.monmap-remove', { monName: 'a' }]],
  );
  t.is(ra.type, 'done');
  t.like(rb, { type: 'blocked', reason: 'RemovalInProgress' });
  const b = await store.get<NodeSpec, NodeStatusFields>(Kind.Node, 'node-b');
  t.is(b?.status.ceph?.mon?.reason, 'RemovalInProgress');
  // From the store too: the next look at c sees a's state and waits.
  const pc = loop.plan((await loop.observe('node-c', ctx))!);
  t.is(pc.status?.reason, 'RemovalInProgress');
  t.is(pc.step, null);
  await store.close();
});
