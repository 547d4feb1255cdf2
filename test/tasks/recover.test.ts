import test from 'ava';
import { Kind, type TaskRunSpec, type TaskRunStatus } from '../../src/model/kinds.js';
import { createMemoryStore } from '../../src/store/index.js';
import { harness, idGen, NODE_A } from './harness.js';

const spec = (over: Partial<TaskRunSpec>): TaskRunSpec => ({
  taskName: 'disk.wipe',
  targetKind: 'Disk',
  targetId: 'dddddddd-0000-4000-8000-000000000001',
  generation: 1,
  nodeId: null,
  nodeHostname: null,
  args: {},
  timeoutMs: 60_000,
  attempt: 1,
  ...over,
});

const status = (state: TaskRunStatus['state']): TaskRunStatus => ({
  state,
  startedAt: state === 'pending' ? null : '2025-12-31T23:00:00.000Z',
  completedAt: state === 'completed' ? '2025-12-31T23:30:00.000Z' : null,
  error: null,
  question: null,
  result: null,
});

/** A store as a crashed Quarry left it. */
async function leftovers() {
  const store = await createMemoryStore();
  const put = async (name: string, s: Partial<TaskRunSpec>, state: TaskRunStatus['state']): Promise<string> =>
    (await store.create({ kind: Kind.TaskRun, name: 'disk.wipe', spec: spec(s), status: status(state), labels: { case: name } })).id;
  const ids = {
    running: await put('running', { targetId: 'dddddddd-0000-4000-8000-000000000001' }, 'running'),
    runningNode: await put(
      'runningNode',
      { targetId: 'dddddddd-0000-4000-8000-000000000002', nodeId: NODE_A.id, nodeHostname: 'node-a' },
      'running',
    ),
    sameTarget: await put('sameTarget', { targetId: 'dddddddd-0000-4000-8000-000000000002', taskName: 'osd.create' }, 'pending'),
    pendingNode: await put(
      'pendingNode',
      { targetId: 'dddddddd-0000-4000-8000-000000000003', nodeId: NODE_A.id, nodeHostname: 'node-a' },
      'pending',
    ),
    completed: await put('completed', { targetId: 'dddddddd-0000-4000-8000-000000000004' }, 'completed'),
  };
  return { store, ids };
}

test('TaskService recover fails interrupted runs and returns their targets once each', async (t) => {
  const { store, ids } = await leftovers();
  const h = await harness(t, { store, ids: idGen('e') });
  const targets = await h.service.recover();
  t.deepEqual(targets.map((x) => x.id).sort(), ['dddddddd-0000-4000-8000-000000000001', 'dddddddd-0000-4000-8000-000000000002']);
  // (…0002 for its master-level pending run, sameTarget.)
  t.true(targets.every((x) => x.kind === 'Disk'));

  const state = async (id: string) => (await h.service.get(id)).status;
  t.is((await state(ids.running)).state, 'failed');
  t.is((await state(ids.running)).error, 'interrupted: Quarry restarted while this run was running');
  t.deepEqual(h.states(ids.running), ['failed']);
  // A node-level run may still be under way on its node: it waits for its agent.
  t.is((await state(ids.runningNode)).state, 'running');
  t.is((await state(ids.sameTarget)).error, 'interrupted: Quarry restarted before this run started');
  t.is((await state(ids.pendingNode)).state, 'pending');
  t.is((await state(ids.completed)).state, 'completed');
  t.regex((await h.service.logs(ids.running))[0]?.message ?? '', /^failed: interrupted/);
});

test('TaskService recover keeps a node-level pending run claimable', async (t) => {
  const { store, ids } = await leftovers();
  const h = await harness(t, { store, ids: idGen('e') });
  await h.service.recover();
  const claimed = await h.service.agents.claim(NODE_A.id, 0);
  t.is(claimed?.id, ids.pendingNode);
  t.is(claimed?.status.state, 'running');
});

test('TaskService recover leaves the runs of this process alone and can run twice', async (t) => {
  const { store } = await leftovers();
  const h = await harness(t, { store, ids: idGen('e') });
  await h.service.recover();
  const mine = await h.service.start({
    taskName: 'q',
    target: { kind: 'Disk', id: 'x', generation: 1 },
    script: async (ctx) => ({ a: await ctx.ask('go?', ['yes']) }),
  });
  t.deepEqual(await h.service.recover(), []);
  t.is((await h.service.get(mine.id)).status.state, 'running');
  t.is((await h.service.latestFor('Disk', 'x'))?.id, mine.id);
});

test('TaskService indexes runs of an earlier process for recent and latestFor', async (t) => {
  const { store, ids } = await leftovers();
  const h = await harness(t, { store, ids: idGen('e') });
  t.is((await h.service.recent()).length, 5);
  t.is((await h.service.latestFor('Disk', 'dddddddd-0000-4000-8000-000000000004'))?.id, ids.completed);
  t.is((await h.service.latestFor('Disk', 'dddddddd-0000-4000-8000-000000000002', 'disk.wipe'))?.id, ids.runningNode);
});

test('TaskService recover adopts a node-level run left running: its agent finishes it once, and a claim without it fails it as lost', async (t) => {
  const { store, ids } = await leftovers();
  const h = await harness(t, { store, ids: idGen('e') });
  await h.service.recover();
  // The agent was still carrying it: its result is taken, not refused, and nothing runs again.
  await h.service.agents.finish(NODE_A.id, ids.runningNode, { ok: true });
  t.is((await h.service.get(ids.runningNode)).status.state, 'completed');

  const again = await leftovers();
  const h2 = await harness(t, { store: again.store, ids: idGen('f') });
  await h2.service.recover();
  // The agent claims carrying nothing: the run never reached it (or died with its boot).
  const claimed = await h2.service.agents.claim(NODE_A.id, 0, undefined, []);
  t.is(claimed?.id, again.ids.pendingNode);
  await waitFor(async () => (await h2.service.get(again.ids.runningNode)).status.state === 'failed');
  t.regex((await h2.service.get(again.ids.runningNode)).status.error ?? '', /^interrupted: its agent does not carry it/);
});

async function waitFor(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 500 && !(await check()); i++) await new Promise((r) => setTimeout(r, 5));
}
