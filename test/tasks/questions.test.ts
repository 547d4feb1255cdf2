import test from 'ava';
import { ConflictError, InputError, NotFoundError } from '../../src/errors.js';
import { isEvent } from '../../src/tasks/bus.js';
import { harness, NODE_A, nodeRun, questionAsked, target } from './harness.js';

test('TaskService question holds the run until answered and refuses a bad answer', async (t) => {
  const h = await harness(t);
  let reached = false;
  const run = await h.service.start({
    taskName: 'disk.wipe',
    target,
    script: async (ctx) => {
      const answer = await ctx.ask('wipe /dev/sdb? it holds data', ['yes', 'no']);
      reached = true;
      return { answer };
    },
  });
  await h.event(questionAsked(run.id));
  const [pending] = await h.service.pendingQuestions();
  t.truthy(pending);
  if (!pending) return;
  t.deepEqual(pending, {
    id: pending.id,
    runId: run.id,
    taskName: 'disk.wipe',
    prompt: 'wipe /dev/sdb? it holds data',
    options: ['yes', 'no'],
    createdAt: '2026-01-01T00:00:00.000Z',
  });
  const stored = await h.service.get(run.id);
  t.is(stored.status.state, 'running');
  t.deepEqual(stored.status.question, {
    id: pending.id,
    prompt: pending.prompt,
    options: ['yes', 'no'],
    createdAt: pending.createdAt,
    answer: null,
  });
  t.false(reached);

  await t.throwsAsync(h.service.answer(pending.id, 'maybe'), { instanceOf: InputError, message: 'answer must be one of: yes, no' });
  await h.service.answer(pending.id, 'yes');
  const done = await h.service.whenFinished(run.id);
  t.is(done.status.state, 'completed');
  t.deepEqual(done.status.result, { answer: 'yes' });
  t.is(done.status.question?.answer, 'yes');
  t.deepEqual(await h.service.pendingQuestions(), []);
  t.true(h.events.some((e) => isEvent(e, 'task.question.answered') && e.payload.answer === 'yes'));

  await t.throwsAsync(h.service.answer(pending.id, 'yes'), {
    instanceOf: ConflictError,
    message: `question ${pending.id} is already answered`,
  });
  await t.throwsAsync(h.service.answer('ffffffff-0000-4000-8000-000000000000', 'yes'), {
    instanceOf: NotFoundError,
    message: 'question ffffffff-0000-4000-8000-000000000000 not found',
  });
});

test('TaskService a second answer while the first is being written is a conflict', async (t) => {
  const h = await harness(t);
  const run = await h.service.start({ taskName: 'q', target, script: async (ctx) => ({ a: await ctx.ask('go?', ['yes', 'no']) }) });
  await h.event(questionAsked(run.id));
  const [q] = await h.service.pendingQuestions();
  const first = h.service.answer(q?.id ?? '', 'no');
  await t.throwsAsync(h.service.answer(q?.id ?? '', 'yes'), { instanceOf: ConflictError });
  await first;
  t.deepEqual((await h.service.whenFinished(run.id)).status.result, { a: 'no' });
});

test('TaskService cancel rejects a pending question and closes it', async (t) => {
  const h = await harness(t);
  let askError: unknown;
  const run = await h.service.start({
    taskName: 'disk.wipe',
    target,
    script: async (ctx) => {
      try {
        await ctx.ask('sure?', ['yes', 'no']);
      } catch (err) {
        askError = err;
        throw err;
      }
    },
  });
  await h.event(questionAsked(run.id));
  const [q] = await h.service.pendingQuestions();
  await h.service.cancel(run.id);
  const done = await h.service.whenFinished(run.id);
  t.is(done.status.state, 'canceled');
  while (!askError) await new Promise((r) => setImmediate(r));
  t.true(askError instanceof ConflictError);
  t.is((askError as Error).message, `run ${run.id} was canceled before the question was answered`);
  t.deepEqual(await h.service.pendingQuestions(), []);
  await t.throwsAsync(h.service.answer(q?.id ?? '', 'yes'), {
    instanceOf: ConflictError,
    message: `question ${q?.id ?? ''} is closed: run ${run.id} is canceled`,
  });
});

test('TaskService a question pauses the run deadline', async (t) => {
  const h = await harness(t);
  const run = await h.service.start({
    taskName: 'q',
    target,
    // The deadline runs from the start until the question pauses it: long enough that a loaded
    // machine gets from one to the other (100 ms did not always).
    timeoutMs: 1_000,
    script: async (ctx) => ({ a: await ctx.ask('go?', ['yes']) }),
  });
  await h.event(questionAsked(run.id));
  // Well past the timeout: the run must still be waiting for the operator.
  await new Promise((r) => setTimeout(r, 1_500));
  t.is((await h.service.get(run.id)).status.state, 'running');
  const [q] = await h.service.pendingQuestions();
  await h.service.answer(q?.id ?? '', 'yes');
  t.is((await h.service.whenFinished(run.id)).status.state, 'completed');
});

test('TaskService ask refuses options that are empty or repeated', async (t) => {
  const h = await harness(t);
  const errors: unknown[] = [];
  const run = await h.service.start({
    taskName: 'q',
    target,
    script: async (ctx) => {
      await ctx.ask('?', []).catch((e: unknown) => errors.push(e));
      await ctx.ask('?', ['yes', 'yes']).catch((e: unknown) => errors.push(e));
    },
  });
  await h.service.whenFinished(run.id);
  t.is(errors.length, 2);
  for (const e of errors) t.true(e instanceof InputError && e.message === 'a question needs distinct, non-empty options');
});

test('AgentQueue ask lets a node-level step wait for an answer', async (t) => {
  const h = await harness(t);
  const run = await h.service.start(nodeRun());
  await h.service.agents.claim(NODE_A.id, 0);
  const answer = h.service.agents.ask(NODE_A.id, run.id, 'wipe?', ['yes', 'no']);
  await h.event(questionAsked(run.id));
  const [q] = await h.service.pendingQuestions();
  t.is(q?.runId, run.id);
  await h.service.answer(q?.id ?? '', 'no');
  t.is(await answer, 'no');
});
