// The loop kit (src/runtime/loop-kit): the status writer's CAS and scope, the one Plan → Result
// mapping, the generic apply's order, and the grace rule's edges.
import test from 'ava';
import { ConflictError } from '../../src/errors.js';
import { Kind, type NodeStatusFields } from '../../src/model/kinds.js';
import { newNodeSpec } from '../../src/fleet/discovery.js';
import { createMemoryStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import type { StartRequest, TaskRun } from '../../src/tasks/types.js';
import {
  applyPlan,
  completedAt,
  graceWait,
  patchOwned,
  resultOf,
  writeOwned,
  writeStatus,
  WRITE_RETRIES,
  type LoopPlan,
  type StatusOwner,
} from '../../src/runtime/loop-kit/index.js';
import { requeueAfter } from '../../src/runtime/types.js';

const MON: StatusOwner = { loop: 'mon', kind: Kind.Node, fields: ['ceph.mon'] };
const NODE: StatusOwner = { loop: 'node', kind: Kind.Node, fields: ['phase', 'conditions'] };
const running = { phase: 'running' as const, reason: 'Running', message: 'the monitor runs' };

async function nodeStore(status: NodeStatusFields = { phase: 'active' }): Promise<Store> {
  const store = await createMemoryStore();
  await store.create({ kind: Kind.Node, id: 'n1', name: 'a', spec: newNodeSpec('52:54:00:00:00:01', 'a'), status });
  return store;
}

/** The store, with updateStatus counted and failing with a conflict the first `conflicts` times. */
function flaky(store: Store, conflicts: number): { store: Store; calls: () => number } {
  let calls = 0;
  const wrapped = Object.create(store) as Store;
  wrapped.updateStatus = async (kind, id, status, opts) => {
    calls++;
    if (calls <= conflicts) throw new ConflictError(`${kind} ${id} changed`);
    return store.updateStatus(kind, id, status, opts);
  };
  return { store: wrapped, calls: () => calls };
}

test('loop kit writer skips a status that did not change', async (t) => {
  const base = await nodeStore({ phase: 'active', ceph: { mon: running } });
  const before = (await base.get(Kind.Node, 'n1'))!.metadata.resourceVersion;
  const { store, calls } = flaky(base, 0);
  t.is(await writeOwned<NodeStatusFields>(store, MON, 'n1', { ceph: { mon: running } }), 'unchanged');
  t.is(calls(), 0);
  t.is((await base.get(Kind.Node, 'n1'))!.metadata.resourceVersion, before);
});

test('loop kit writer removes an absent entry without inventing an empty map', async (t) => {
  const store = await nodeStore({ phase: 'active' });
  t.is(await writeOwned<NodeStatusFields>(store, MON, 'n1', { ceph: {} }), 'unchanged');
  t.deepEqual(patchOwned<NodeStatusFields>(MON, { phase: 'active', ceph: { mon: running, mgr: running } }, { ceph: {} }), {
    phase: 'active',
    ceph: { mgr: running },
  });
});

test('loop kit writer changes only its own entry and keeps the others', async (t) => {
  const store = await nodeStore({ phase: 'active', ceph: { mgr: running } });
  t.is(await writeOwned<NodeStatusFields>(store, MON, 'n1', { ceph: { mon: running } }), 'written');
  t.deepEqual((await store.get<unknown, NodeStatusFields>(Kind.Node, 'n1'))!.status, {
    phase: 'active',
    ceph: { mgr: running, mon: running },
  });
});

test('loop kit writer retries a conflict and then writes', async (t) => {
  const { store, calls } = flaky(await nodeStore(), 3);
  t.is(await writeOwned<NodeStatusFields>(store, MON, 'n1', { ceph: { mon: running } }), 'written');
  t.is(calls(), 4);
  t.deepEqual((await store.get<unknown, NodeStatusFields>(Kind.Node, 'n1'))!.status.ceph, { mon: running });
});

test('loop kit writer gives up after its retries with the conflict', async (t) => {
  const { store, calls } = flaky(await nodeStore(), Infinity);
  await t.throwsAsync(writeOwned<NodeStatusFields>(store, MON, 'n1', { ceph: { mon: running } }), { instanceOf: ConflictError });
  t.is(calls(), WRITE_RETRIES + 1);
  const few = flaky(await nodeStore(), Infinity);
  await t.throwsAsync(writeOwned<NodeStatusFields>(few.store, MON, 'n1', { ceph: { mon: running } }, { retries: 2 }), {
    instanceOf: ConflictError,
  });
  t.is(few.calls(), 3);
});

test('loop kit writer with a resourceVersion does not retry and writes nothing over a newer document', async (t) => {
  const store = await nodeStore();
  const old = (await store.get(Kind.Node, 'n1'))!.metadata.resourceVersion;
  await writeOwned<NodeStatusFields>(store, MON, 'n1', { ceph: { mon: running } });
  await t.throwsAsync(writeOwned<NodeStatusFields>(store, NODE, 'n1', { phase: 'offline' }, { resourceVersion: old }), {
    instanceOf: ConflictError,
  });
  t.is((await store.get<unknown, NodeStatusFields>(Kind.Node, 'n1'))!.status.phase, 'active');
});

test('loop kit writer refuses a field its loop does not own and writes nothing', async (t) => {
  const store = await nodeStore();
  await t.throwsAsync(
    writeStatus<NodeStatusFields>(store, MON, 'n1', (s) => ({ ...s, phase: 'offline', ceph: { mon: running } })),
    { message: /mon loop may not write Node status phase/ },
  );
  await t.throwsAsync(
    writeStatus<NodeStatusFields>(store, MON, 'n1', (s) => ({ ...s, ceph: { mgr: running } })),
    { message: /ceph\.mgr/ },
  );
  t.deepEqual((await store.get<unknown, NodeStatusFields>(Kind.Node, 'n1'))!.status, { phase: 'active' });
});

test('loop kit writer says gone for an object that no longer exists', async (t) => {
  const store = await createMemoryStore();
  t.is(await writeOwned<NodeStatusFields>(store, MON, 'nope', { ceph: { mon: running } }), 'gone');
});

const plan = (over: Partial<LoopPlan<string, string>> = {}): LoopPlan<string, string> => ({
  status: 's',
  step: null,
  requeueAfterMs: null,
  gate: null,
  ...over,
});

test("loop kit result maps a gate to blocked with the recheck delay, or the plan's own wait", (t) => {
  const gate = { reason: 'WaitingForQuorum', message: 'waiting for monitor quorum' };
  t.deepEqual(resultOf(plan({ gate }), { recheckMs: 500 }), {
    type: 'blocked',
    reason: 'WaitingForQuorum',
    message: 'waiting for monitor quorum',
    retryAfterMs: 500,
  });
  t.deepEqual(resultOf(plan({ gate, requeueAfterMs: 70 }), { recheckMs: 500, idleMs: 9 }), {
    type: 'blocked',
    reason: 'WaitingForQuorum',
    message: 'waiting for monitor quorum',
    retryAfterMs: 70,
  });
});

test('loop kit result maps a wait to a requeue, and nothing to done or the poll interval', (t) => {
  t.deepEqual(resultOf(plan({ requeueAfterMs: 0 }), { recheckMs: 500 }), { type: 'requeue', afterMs: 0 });
  t.deepEqual(resultOf(plan({ requeueAfterMs: 1_234 }), { recheckMs: 500, idleMs: 10_000 }), { type: 'requeue', afterMs: 1_234 });
  t.deepEqual(resultOf(plan(), { recheckMs: 500 }), { type: 'done' });
  t.deepEqual(resultOf(plan(), { recheckMs: 500, idleMs: 10_000 }), { type: 'requeue', afterMs: 10_000 });
});

function recorder(
  over: { stepFirst?: boolean; act?: (step: string) => StartRequest | StartRequest[] | null | ReturnType<typeof requeueAfter> } = {},
) {
  const log: string[] = [];
  const req = (name: string): StartRequest => ({ taskName: name, target: { kind: 'Node', id: 'n1', generation: 1 } });
  return {
    log,
    fx: {
      write: async (_o: unknown, s: string) => void log.push(`write ${s}`),
      act: (_o: unknown, step: string) => (over.act ? over.act(step) : req(step)),
      start: async (r: StartRequest) => (log.push(`start ${r.taskName}`), { id: 'r' } as TaskRun),
      recheckMs: 500,
      ...(over.stepFirst ? { stepFirst: true } : {}),
    },
    req,
  };
}

test('loop kit apply writes status, starts the run, then maps the plan', async (t) => {
  const r = recorder();
  t.deepEqual(await applyPlan(r.fx, {}, plan({ step: 'ceph.mgr.start', requeueAfterMs: 5 })), { type: 'requeue', afterMs: 5 });
  t.deepEqual(r.log, ['write s', 'start ceph.mgr.start']);
});

test('loop kit apply with stepFirst starts the run before the status acknowledges it', async (t) => {
  const r = recorder({ stepFirst: true });
  t.deepEqual(await applyPlan(r.fx, {}, plan({ step: 'node.restart' })), { type: 'done' });
  t.deepEqual(r.log, ['start node.restart', 'write s']);
});

test('loop kit apply starts several runs in order and none without a step', async (t) => {
  const r = recorder({ act: () => [recorder().req('ceph.osd.create'), recorder().req('disk.wipe')] });
  await applyPlan(r.fx, {}, plan({ step: 'both' }));
  t.deepEqual(r.log, ['write s', 'start ceph.osd.create', 'start disk.wipe']);
  const none = recorder();
  t.like(await applyPlan(none.fx, {}, plan({ gate: { reason: 'NodeNotActive', message: 'm' } })), {
    type: 'blocked',
    reason: 'NodeNotActive',
    retryAfterMs: 500,
  });
  t.deepEqual(none.log, ['write s']);
});

test('loop kit apply asks for every run of a step its startTogether names, in order, before any is recorded; other steps one by one', async (t) => {
  const log: string[] = [];
  const pending: Array<() => void> = [];
  const req = (name: string): StartRequest => ({ taskName: name, target: { kind: 'Disk', id: 'd1', generation: 1 } });
  const fx = {
    write: async () => void log.push('write s'),
    act: () => [req('ceph.osd.purge'), req('ceph.osd.zap')],
    // A start resolves only once the test lets it (its record durable): both must be asked first.
    start: (r: StartRequest) => {
      log.push(`start ${r.taskName}`);
      return new Promise<TaskRun>((resolve) => pending.push(() => resolve({ id: r.taskName } as TaskRun)));
    },
    recheckMs: 500,
  };
  const independent = { ...fx, startTogether: (step: string) => step === 'both' };
  const together = applyPlan(independent, {}, plan({ step: 'both' }));
  await new Promise((r) => setImmediate(r));
  t.deepEqual(log, ['write s', 'start ceph.osd.purge', 'start ceph.osd.zap']);
  pending.splice(0).forEach((resolve) => resolve());
  t.deepEqual(await together, { type: 'done' });
  // A step it does not name: the second waits for the first.
  log.length = 0;
  const oneByOne = applyPlan(independent, {}, plan({ step: 'in order' }));
  await new Promise((r) => setImmediate(r));
  t.deepEqual(log, ['write s', 'start ceph.osd.purge']);
  pending.splice(0).forEach((resolve) => resolve());
  await new Promise((r) => setImmediate(r));
  t.deepEqual(log, ['write s', 'start ceph.osd.purge', 'start ceph.osd.zap']);
  pending.splice(0).forEach((resolve) => resolve());
  t.deepEqual(await oneByOne, { type: 'done' });
});

test('loop kit apply returns the Result of a step the loop carried out itself', async (t) => {
  const r = recorder({ act: () => requeueAfter(0) });
  t.deepEqual(await applyPlan(r.fx, {}, plan({ step: 'assign-uuid', gate: { reason: 'X', message: 'y' } })), {
    type: 'requeue',
    afterMs: 0,
  });
  t.deepEqual(r.log, ['write s']);
});

test('loop kit grace waits from the start until the deadline, then lets the loop act', (t) => {
  t.is(graceWait(null, 5_000, 1_000), null, 'nothing began');
  t.is(graceWait(5_000, 5_000, 1_000), 1_001, 'just completed: the whole grace, and a millisecond past it');
  t.is(graceWait(5_000, 5_999, 1_000), 2);
  t.is(graceWait(5_000, 6_000, 1_000), null, 'at the deadline the grace is over');
  t.is(graceWait(5_000, 9_000, 1_000), null);
  t.is(graceWait(5_000, 4_000, 1_000), 2_001, 'a clock behind the completion still waits');
});

test('loop kit grace begins only at a completed run', (t) => {
  t.is(completedAt({ state: 'completed', completedAt: 7 }), 7);
  t.is(completedAt({ state: 'failed', completedAt: 7 }), null);
  t.is(completedAt({ state: 'running', completedAt: null }), null);
  t.is(completedAt(null), null);
});

test('loop kit apply without a task service refuses a run rather than dropping it', async (t) => {
  const { start: _start, ...fx } = recorder().fx;
  await t.throwsAsync(applyPlan(fx, {}, plan({ step: 'ceph.fs.create' })), { message: /no task service to start ceph\.fs\.create/ });
  t.deepEqual(await applyPlan({ ...fx, act: () => null }, {}, plan({ step: 'nothing', requeueAfterMs: 3 })), {
    type: 'requeue',
    afterMs: 3,
  });
});
