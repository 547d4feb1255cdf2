import test from 'ava';
import type { DiskSpec } from '../../src/model/kinds.js';
import { readyCondition, withConditions } from '../../src/runtime/conditions.js';
import { done, type Reconciler } from '../../src/runtime/types.js';
import { createMemoryStore } from '../../src/store/index.js';
import { createNode, createRun, detachedWatch, harness, proxyStore, toyNodeLoop, total, type NodeDoc } from './fixtures.js';

/** A Disk loop that only records which ids it was asked to look at. */
function diskLoop(diskOfNode: Map<string, string>) {
  const seen: string[] = [];
  const loop: Reconciler<string, null> & { seen: string[] } = {
    name: 'disk',
    kind: 'Disk',
    seen,
    watches: [{ kind: 'Node', map: (doc) => (diskOfNode.has(doc.id) ? [diskOfNode.get(doc.id) ?? ''] : []) }],
    dependsOn: ['node'],
    observe: async (id) => (seen.push(id), id),
    plan: () => null,
    apply: async () => done(),
  };
  return loop;
}

test('Manager wakes the target loop when a TaskRun changes', async (t) => {
  const h = await harness();
  const node = await createNode(h.store);
  const loop = toyNodeLoop(h.store, h.clock);
  h.manager.register(loop);
  await h.manager.start();
  await h.manager.idle();
  const before = loop.counts.get(node.id) ?? 0;
  const run = await createRun(h.store, { kind: 'Node', id: node.id });
  await h.manager.idle();
  t.is(loop.counts.get(node.id), before + 1);
  await h.store.updateStatus('TaskRun', run.id, {
    state: 'running',
    startedAt: h.clock.iso(),
    completedAt: null,
    error: null,
    question: null,
    result: null,
  });
  await h.manager.idle();
  t.is(loop.counts.get(node.id), before + 2);
  await h.manager.stop();
});

test('Manager wakes a watching loop through its mapping', async (t) => {
  const h = await harness();
  const node = await createNode(h.store);
  const spec: DiskSpec = { nodeId: node.id, serial: 'S1', osd: false, wipeGeneration: 0 };
  const disk = await h.store.create({ kind: 'Disk', name: 'sda', spec });
  const disks = diskLoop(new Map([[node.id, disk.id]]));
  h.manager.register(toyNodeLoop(h.store, h.clock));
  h.manager.register(disks);
  await h.manager.start();
  await h.manager.idle();
  disks.seen.length = 0;
  await h.store.mutateSpec<NodeDoc['spec']>('Node', node.id, (d) => ({ ...d.spec, power: 'off' }));
  await h.manager.idle();
  t.true(disks.seen.length >= 1);
  t.true(disks.seen.every((id) => id === disk.id));
  t.deepEqual(h.manager.loopsFor('Node'), ['node', 'disk']);
  t.deepEqual(h.manager.describe()[1], { name: 'disk', kind: 'Disk', watches: ['Node'], dependsOn: ['node'] });
  await h.manager.stop();
});

/** A Node loop that polls something always moving: each turn writes a new status message. It
 * stops writing after `cap` writes, so a loop woken by its own writes ends instead of spinning. */
function pollingLoop(h: Awaited<ReturnType<typeof harness>>, wakesOn: 'any' | 'spec', cap: number) {
  let turns = 0;
  let writes = 0;
  const loop: Reconciler<NodeDoc, null> & { turns: () => number } = {
    name: 'node',
    kind: 'Node',
    wakesOn,
    turns: () => turns,
    observe: (id) => (turns++, h.store.get('Node', id)),
    plan: () => null,
    async apply(doc) {
      if (++writes > cap) return done();
      const ready = readyCondition(true, `Polled${writes}`);
      await h.store.updateStatus('Node', doc.id, withConditions({ ...doc.status }, [ready], doc.metadata.generation, h.clock.iso()));
      return done();
    },
  };
  return loop;
}

test("Manager: a loop that wakes on spec changes only is not woken by status writes, its own or another's", async (t) => {
  const h = await harness();
  const node = await createNode(h.store);
  const loop = pollingLoop(h, 'spec', 50);
  h.manager.register(loop);
  await h.manager.start();
  await h.manager.idle();
  t.is(loop.turns(), 1, 'its status write did not wake it again');
  await h.store.updateStatus('Node', node.id, {
    ...(await h.store.mustGet<NodeDoc['spec'], NodeDoc['status']>('Node', node.id)).status,
    phase: 'offline',
  });
  await h.manager.idle();
  t.is(loop.turns(), 1, "another writer's status write did not wake it");
  await h.store.mutateSpec<NodeDoc['spec']>('Node', node.id, (d) => ({ ...d.spec, power: 'off' }));
  await h.manager.idle();
  t.is(loop.turns(), 2, 'a spec change did');
  await createNode(h.store, 2);
  await h.store.delete('Node', node.id);
  await h.manager.idle();
  t.is(loop.turns(), 4, 'a creation and a deletion did');
  await h.manager.stop();
});

test('Manager: by default a loop is woken by every change of its kind, its own status writes included', async (t) => {
  const h = await harness();
  await createNode(h.store);
  const loop = pollingLoop(h, 'any', 5);
  h.manager.register(loop);
  await h.manager.start();
  await h.manager.idle();
  t.is(loop.turns(), 6, 'each of its five writes woke it once more');
  await h.manager.stop();
});

test('Manager relists everything when told its watch history is gone', async (t) => {
  const real = await createMemoryStore();
  const { store, emit } = detachedWatch(real);
  const h = await harness({}, store);
  const loop = toyNodeLoop(h.store, h.clock);
  h.manager.register(loop);
  await h.manager.start();
  const missed = await createNode(real, 7);
  await h.manager.idle();
  t.is(loop.counts.get(missed.id), undefined, 'the detached watch delivered nothing');
  emit({ type: 'relist', revision: real.revision() });
  await h.manager.idle();
  t.is((await real.mustGet<NodeDoc['spec'], NodeDoc['status']>('Node', missed.id)).status.phase, 'active');
  t.true(h.logs.some(([level, msg]) => level === 'warn' && msg.includes('relisting')));
  await h.manager.stop();
});

test('Manager recovers from a real relist when writes outrun the store history during start', async (t) => {
  const real = await createMemoryStore({ historySize: 1 });
  let lists = 0;
  const late: string[] = [];
  const store = proxyStore(real, {
    list: async <S, T>(kind: string) => {
      const docs = await real.list<S, T>(kind);
      // Two writes after the first list's snapshot push its start revision out of the history:
      // only the relist can find them.
      if (lists++ === 0) for (const n of [8, 9]) late.push((await createNode(real, n)).id);
      return docs;
    },
  });
  const h = await harness({}, store);
  const loop = toyNodeLoop(h.store, h.clock);
  h.manager.register(loop);
  await h.manager.start();
  await h.manager.idle();
  t.true(h.logs.some(([level, msg]) => level === 'warn' && msg.includes('relisting')));
  t.is(late.length, 2);
  for (const id of late) t.is((await real.mustGet<NodeDoc['spec'], NodeDoc['status']>('Node', id)).status.phase, 'active');
  await h.manager.stop();
});

test('Manager resync enqueues every id of every loop periodically', async (t) => {
  const h = await harness({ resyncMs: 60_000 });
  await createNode(h.store, 1);
  await createNode(h.store, 2);
  const loop = toyNodeLoop(h.store, h.clock);
  h.manager.register(loop);
  await h.manager.start();
  await h.manager.idle();
  const before = total(loop.counts);
  t.deepEqual(h.timers.delays(), [60_000]);
  h.timers.advance(60_000);
  await h.manager.idle();
  t.is(total(loop.counts), before + 2);
  t.deepEqual(h.timers.delays(), [60_000], 'the next resync is scheduled');
  await h.manager.stop();
  t.deepEqual(h.timers.delays(), [], 'stop cancels the resync timer');
});

test('Manager survives a watch mapping that throws', async (t) => {
  const h = await harness();
  const node = await createNode(h.store);
  const bad: Reconciler<string, null> = {
    name: 'bad',
    kind: 'Disk',
    watches: [
      {
        kind: 'Node',
        map: () => {
          throw new Error('mapping bug');
        },
      },
    ],
    observe: async (id) => id,
    plan: () => null,
    apply: async () => done(),
  };
  const loop = toyNodeLoop(h.store, h.clock);
  h.manager.register(loop);
  h.manager.register(bad);
  await h.manager.start();
  await h.manager.idle();
  t.is((await h.store.mustGet<NodeDoc['spec'], NodeDoc['status']>('Node', node.id)).status.phase, 'active');
  t.true(h.logs.some(([level, msg]) => level === 'error' && msg === 'watch mapping failed'));
  await h.manager.stop();
});
