import test from 'ava';
import { CommandError, ConflictError, InputError, NotFoundError } from '../../src/errors.js';
import { ZxRunner } from '../../src/exec/zx-runner.js';
import { Kind } from '../../src/model/kinds.js';
import type { TaskRun } from '../../src/tasks/types.js';
import { FakeRunner } from '../helpers/fake-runner.js';
import { isEvent } from '../../src/tasks/bus.js';
import { alive, harness, target } from './harness.js';

const NODE_ID = 'aaaaaaaa-0000-4000-8000-000000000001';

test('TaskService runs a master-level script pending → running → completed, events in order', async (t) => {
  const runner = new FakeRunner().expect('ceph', ['auth', 'add', { secret: 'k3y' }], { stdout: 'added k3y\n' });
  const h = await harness(t, { runner });
  const started = await h.service.start({
    taskName: 'mon.create',
    target,
    args: { monId: 'a' },
    script: async (ctx) => {
      ctx.log('info', `creating mon ${String(ctx.args.monId)}`);
      await ctx.runner.run('ceph', ['auth', 'add', { secret: 'k3y' }], { timeoutMs: 1000 });
      return { monId: ctx.args.monId };
    },
  });
  t.is(started.kind, Kind.TaskRun);
  t.is(started.name, 'mon.create');
  t.deepEqual(started.spec, {
    taskName: 'mon.create',
    targetKind: 'Disk',
    targetId: target.id,
    targetName: null,
    generation: 2,
    nodeId: null,
    nodeHostname: null,
    args: { monId: 'a' },
    timeoutMs: 60_000,
    attempt: 1,
  });
  t.is(started.status.state, 'pending');

  const done = await h.service.whenFinished(started.id);
  t.is(done.status.state, 'completed');
  t.deepEqual(done.status.result, { monId: 'a' });
  t.is(done.status.error, null);
  t.is(done.status.startedAt, '2026-01-01T00:00:00.000Z');
  t.is(done.status.completedAt, '2026-01-01T00:00:00.000Z');
  t.deepEqual(h.states(started.id), ['pending', 'running', 'completed']);
  t.deepEqual((await h.service.get(started.id)).status, done.status);
  t.deepEqual((await h.store.get(Kind.TaskRun, started.id))?.status, done.status);

  const messages = (await h.service.logs(started.id)).map((l) => l.message);
  t.deepEqual(messages, ['started mon.create (attempt 1)', 'creating mon a', '$ ceph auth add ***', 'added ***', 'completed']);
});

test('TaskService records a failed script with its error message and log', async (t) => {
  const runner = new FakeRunner().expect('wipefs', ['-a', '/dev/sdb'], { stderr: 'device busy\n', exitCode: 1 });
  const h = await harness(t, { runner });
  const run = await h.service.start({
    taskName: 'disk.wipe',
    target,
    script: async (ctx) => {
      await ctx.runner.run('wipefs', ['-a', '/dev/sdb'], { timeoutMs: 1000 });
    },
  });
  const done = await h.service.whenFinished(run.id);
  t.is(done.status.state, 'failed');
  t.is(done.status.error, 'wipefs -a /dev/sdb exited with 1: device busy');
  t.deepEqual(h.states(run.id), ['pending', 'running', 'failed']);
  const lines = await h.service.logs(run.id);
  t.deepEqual(
    lines.map((l) => `${l.level} ${l.message}`),
    [
      'info started disk.wipe (attempt 1)',
      'info $ wipefs -a /dev/sdb',
      'warn device busy',
      'error wipefs -a /dev/sdb exited with 1: device busy',
      'error failed: wipefs -a /dev/sdb exited with 1: device busy',
    ],
  );
});

test('TaskService never stores a stack trace as the error', async (t) => {
  const h = await harness(t);
  const run = await h.service.start({
    taskName: 'bug',
    target,
    script: () => Promise.reject(new TypeError('x is not a function')),
  });
  const done = await h.service.whenFinished(run.id);
  t.is(done.status.error, 'x is not a function');
});

test('TaskService fails a script that outlives its timeout and aborts its signal', async (t) => {
  const runner = new FakeRunner().expect('sleep', ['30'], { delayMs: 60_000 });
  const h = await harness(t, { runner });
  let signal: AbortSignal | undefined;
  const run = await h.service.start({
    taskName: 'slow',
    target,
    timeoutMs: 50,
    script: async (ctx) => {
      signal = ctx.signal;
      await ctx.runner.run('sleep', ['30'], { timeoutMs: 120_000 });
    },
  });
  const done = await h.service.whenFinished(run.id);
  t.is(done.status.state, 'failed');
  t.is(done.status.error, 'timed out after 50 ms');
  t.true(signal?.aborted);
  t.deepEqual(h.states(run.id), ['pending', 'running', 'failed']);
});

test('TaskService cancel kills the running command and the process is gone', async (t) => {
  const h = await harness(t, { runner: new ZxRunner({ killGraceMs: 500 }) });
  let reportPid: (pid: number) => void = () => undefined;
  const pid = new Promise<number>((resolve) => (reportPid = resolve));
  let failure: unknown;
  const run = await h.service.start({
    taskName: 'slow',
    target,
    script: async (ctx) => {
      await ctx.runner
        .run('sh', ['-c', 'echo $$; exec sleep 30'], { timeoutMs: 60_000, onLine: (_s, line) => reportPid(Number(line)) })
        .catch((err: unknown) => {
          failure = err;
          throw err;
        });
    },
  });
  const child = await pid;
  t.true(alive(child));
  const canceled = await h.service.cancel(run.id);
  t.is(canceled.status.state, 'canceled');
  const done = await h.service.whenFinished(run.id);
  t.is(done.status.state, 'canceled');
  t.is(done.status.error, null);
  // The script sees its command killed once the process is really gone.
  while (!failure) await new Promise((r) => setTimeout(r, 10));
  t.true(failure instanceof CommandError);
  t.false(alive(child));
  t.deepEqual(h.states(run.id), ['pending', 'running', 'canceled']);
  await t.throwsAsync(h.service.cancel(run.id), { instanceOf: ConflictError, message: `task run ${run.id} is already canceled` });
});

test('TaskService fails a script whose result is not plain JSON', async (t) => {
  const h = await harness(t);
  const run = await h.service.start({
    taskName: 'odd',
    target,
    script: () => Promise.resolve({ big: 1n }),
  });
  const done = await h.service.whenFinished(run.id);
  t.is(done.status.state, 'failed');
  t.regex(done.status.error ?? '', /^a run result must be plain JSON: /);
});

test('TaskService start refuses a request with both or neither of script and node', async (t) => {
  const h = await harness(t);
  const message = 'a run needs either a script (master-level) or a node (node-level)';
  await t.throwsAsync(h.service.start({ taskName: 'x', target }), { instanceOf: InputError, message });
  await t.throwsAsync(h.service.start({ taskName: 'x', target, node: { id: target.id, hostname: 'h' }, script: () => Promise.resolve() }), {
    instanceOf: InputError,
    message,
  });
});

test('TaskService start refuses an invalid task name through the schema', async (t) => {
  const h = await harness(t);
  await t.throwsAsync(h.service.start({ taskName: 'Bad Name', target, script: () => Promise.resolve() }), { instanceOf: InputError });
});

test('TaskService get and logs of an unknown run are NotFoundError', async (t) => {
  const h = await harness(t);
  await t.throwsAsync(h.service.get('nope'), { instanceOf: NotFoundError, message: 'task run nope not found' });
  await t.throwsAsync(h.service.logs('nope'), { instanceOf: NotFoundError, message: 'task run nope not found' });
  await t.throwsAsync(h.service.cancel('nope'), { instanceOf: NotFoundError, message: 'task run nope not found' });
});

test('TaskService recent lists newest first and latestFor finds the newest run per target and task', async (t) => {
  const h = await harness(t);
  const other = { kind: 'Node', id: 'eeeeeeee-0000-4000-8000-000000000001', generation: 1 };
  const made: TaskRun[] = [];
  for (const [taskName, tgt] of [
    ['disk.wipe', target],
    ['osd.create', target],
    ['node.restart', other],
    ['disk.wipe', target],
  ] as const) {
    made.push(await h.service.start({ taskName, target: tgt, script: () => Promise.resolve() }));
  }
  await Promise.all(made.map((r) => h.service.whenFinished(r.id)));
  t.deepEqual(
    (await h.service.recent()).map((r) => r.id),
    made.map((r) => r.id).reverse(),
  );
  t.deepEqual(
    (await h.service.recent(2)).map((r) => r.id),
    [made[3]?.id, made[2]?.id],
  );
  t.is((await h.service.latestFor('Disk', target.id))?.id, made[3]?.id);
  t.is((await h.service.latestFor('Disk', target.id, 'osd.create'))?.id, made[1]?.id);
  t.is((await h.service.latestFor('Node', other.id))?.id, made[2]?.id);
  t.is(await h.service.latestFor('Disk', 'nothing'), undefined);
});

test('TaskService cancel of a pending node-level run needs no agent', async (t) => {
  const h = await harness(t);
  const run = await h.service.start({ taskName: 'disk.wipe', target, node: { id: 'aaaaaaaa-0000-4000-8000-000000000001', hostname: 'a' } });
  const canceled = await h.service.cancel(run.id);
  t.is(canceled.status.state, 'canceled');
  t.deepEqual(h.states(run.id), ['pending', 'canceled']);
  t.is(await h.service.agents.claim('aaaaaaaa-0000-4000-8000-000000000001', 0), null);
});

test("TaskService events say when, name the target and the node, and carry a failed run's error", async (t) => {
  const runner = new FakeRunner().expect('wipefs', ['-a', '/dev/sdb'], { stderr: 'device busy\n', exitCode: 1 });
  const h = await harness(t, { runner });
  const named = { kind: 'Node', id: target.id, generation: 1, name: 'storage-1' };
  const run = await h.service.start({
    taskName: 'disk.wipe',
    target: named,
    script: async (ctx) => {
      await ctx.runner.run('wipefs', ['-a', '/dev/sdb'], { timeoutMs: 1000 });
    },
  });
  t.is(run.spec.targetName, 'storage-1');
  await h.service.whenFinished(run.id);
  const mine = h.events.filter((e) => isEvent(e, 'task.state.changed') && e.payload.runId === run.id);
  t.deepEqual(
    mine.map((e) => e.payload),
    ['pending', 'running', 'failed'].map((state) => ({
      runId: run.id,
      taskName: 'disk.wipe',
      state,
      attempt: 1,
      target: { kind: 'Node', id: target.id, name: 'storage-1' },
      node: null,
      ...(state === 'failed' ? { error: 'wipefs -a /dev/sdb exited with 1: device busy' } : {}),
    })),
  );
  for (const e of mine) t.false(Number.isNaN(Date.parse(e.at)), e.at);
  // A node-level run names its node.
  const onNode = await h.service.start({ taskName: 'disk.wipe', target, node: { id: NODE_ID, hostname: 'node-1' } });
  const first = h.events.find((e) => isEvent(e, 'task.state.changed') && e.payload.runId === onNode.id);
  t.like(first?.payload, { node: { id: NODE_ID, hostname: 'node-1' } });
});
