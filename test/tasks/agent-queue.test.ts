import test from 'ava';
import { ConflictError, InputError, NotFoundError } from '../../src/errors.js';
import { harness, NODE_A, NODE_B, nodeRun } from './harness.js';

const line = (message: string) => ({ timestamp: '2026-01-01T00:00:05.000Z', level: 'info' as const, message });

test('AgentQueue node-level run waits pending, is claimed, logs and finishes', async (t) => {
  const h = await harness(t);
  const run = await h.service.start(nodeRun({ args: { device: '/dev/sdb' } }));
  t.is(run.status.state, 'pending');
  t.deepEqual([run.spec.nodeId, run.spec.nodeHostname], [NODE_A.id, NODE_A.hostname]);

  const claimed = await h.service.agents.claim(NODE_A.id, 1000);
  t.is(claimed?.id, run.id);
  t.is(claimed?.status.state, 'running');
  t.deepEqual(claimed?.spec.args, { device: '/dev/sdb' });

  await h.service.agents.appendLogs(NODE_A.id, run.id, [line('wiping'), line('done')]);
  t.false(await h.service.agents.isCanceled(NODE_A.id, run.id));
  await h.service.agents.finish(NODE_A.id, run.id, { ok: true, result: { wiped: true } });
  const finished = await h.service.get(run.id);
  t.is(finished.status.state, 'completed');
  t.deepEqual(finished.status.result, { wiped: true });
  t.deepEqual(h.states(run.id), ['pending', 'running', 'completed']);
  const logged = (await h.service.logs(run.id)).filter((l) => l.timestamp === '2026-01-01T00:00:05.000Z');
  t.deepEqual(
    logged.map((l) => l.message),
    ['wiping', 'done'],
  );
  await t.throwsAsync(h.service.agents.finish(NODE_A.id, run.id, { ok: true }), {
    instanceOf: ConflictError,
    message: `task run ${run.id} is completed, not running on its node`,
  });
});

test('AgentQueue a failed result records the agent error', async (t) => {
  const h = await harness(t);
  const run = await h.service.start(nodeRun());
  await h.service.agents.claim(NODE_A.id, 0);
  await h.service.agents.finish(NODE_A.id, run.id, { ok: false, error: 'wipefs: device busy' });
  const done = await h.service.get(run.id);
  t.is(done.status.state, 'failed');
  t.is(done.status.error, 'wipefs: device busy');
});

test('AgentQueue claim long-polls until a run is started for the node', async (t) => {
  const h = await harness(t);
  const claim = h.service.agents.claim(NODE_A.id, 30_000);
  const run = await h.service.start(nodeRun());
  const claimed = await claim;
  t.is(claimed?.id, run.id);
  t.is(claimed?.status.state, 'running');
});

test('AgentQueue claim hands out the oldest pending run first', async (t) => {
  const h = await harness(t);
  const first = await h.service.start(nodeRun({ taskName: 'disk.wipe' }));
  const second = await h.service.start(nodeRun({ taskName: 'osd.create' }));
  t.is((await h.service.agents.claim(NODE_A.id, 0))?.id, first.id);
  t.is((await h.service.agents.claim(NODE_A.id, 0))?.id, second.id);
  t.is(await h.service.agents.claim(NODE_A.id, 0), null);
});

test('AgentQueue claim answers null after waitMs or on abort', async (t) => {
  const h = await harness(t);
  t.is(await h.service.agents.claim(NODE_A.id, 20), null);
  const ac = new AbortController();
  const claim = h.service.agents.claim(NODE_A.id, 60_000, ac.signal);
  ac.abort();
  t.is(await claim, null);
  await t.throwsAsync(h.service.agents.claim(NODE_A.id, -1), { instanceOf: InputError, message: 'waitMs must be a number ≥ 0' });
});

test('AgentQueue a node cannot claim or finish another node’s run', async (t) => {
  const h = await harness(t);
  const run = await h.service.start(nodeRun());
  t.is(await h.service.agents.claim(NODE_B.id, 0), null);
  t.is((await h.service.get(run.id)).status.state, 'pending');
  const message = `task run ${run.id} does not belong to node ${NODE_B.id}`;
  await t.throwsAsync(h.service.agents.finish(NODE_B.id, run.id, { ok: true }), { instanceOf: ConflictError, message });
  await t.throwsAsync(h.service.agents.appendLogs(NODE_B.id, run.id, [line('x')]), { instanceOf: ConflictError, message });
  await t.throwsAsync(h.service.agents.finish(NODE_A.id, 'missing', { ok: true }), {
    instanceOf: NotFoundError,
    message: 'task run missing not found',
  });
  await t.throwsAsync(h.service.agents.finish(NODE_A.id, run.id, { ok: true }), {
    instanceOf: ConflictError,
    message: `task run ${run.id} is pending, not running on its node`,
  });
});

test('AgentQueue a pending run whose node never claims it fails after its timeout', async (t) => {
  const h = await harness(t);
  const run = await h.service.start(nodeRun({ timeoutMs: 30 }));
  const done = await h.service.whenFinished(run.id);
  t.is(done.status.state, 'failed');
  t.is(done.status.error, 'timed out after 30 ms: node node-a did not claim it');
  t.is(await h.service.agents.claim(NODE_A.id, 0), null);
});

test('AgentQueue a claimed run times out and the agent is told to stop', async (t) => {
  const h = await harness(t);
  // The same deadline first bounds the wait for a claim: long enough for this test to claim it.
  const run = await h.service.start(nodeRun({ timeoutMs: 1_000 }));
  await h.service.agents.claim(NODE_A.id, 0);
  const signal = await h.service.agents.cancelSignal(NODE_A.id, run.id);
  const done = await h.service.whenFinished(run.id);
  t.is(done.status.error, 'timed out after 1000 ms');
  t.true(signal.aborted);
  t.true(await h.service.agents.isCanceled(NODE_A.id, run.id));
  await t.throwsAsync(h.service.agents.finish(NODE_A.id, run.id, { ok: true }), { instanceOf: ConflictError });
});

test('AgentQueue cancel of a claimed run reaches the agent', async (t) => {
  const h = await harness(t);
  const run = await h.service.start(nodeRun());
  await h.service.agents.claim(NODE_A.id, 0);
  const signal = await h.service.agents.cancelSignal(NODE_A.id, run.id);
  await h.service.cancel(run.id);
  t.true(signal.aborted);
  t.true(await h.service.agents.isCanceled(NODE_A.id, run.id));
  t.deepEqual(h.states(run.id), ['pending', 'running', 'canceled']);
  // Late lines are still kept; the result is refused.
  await h.service.agents.appendLogs(NODE_A.id, run.id, [line('stopping')]);
  t.true((await h.service.logs(run.id)).some((l) => l.message === 'stopping'));
  await t.throwsAsync(h.service.agents.finish(NODE_A.id, run.id, { ok: true }), {
    instanceOf: ConflictError,
    message: `task run ${run.id} is canceled, not running on its node`,
  });
});

test('AgentQueue many waiting nodes each get their own runs', async (t) => {
  const h = await harness(t);
  const claims = [h.service.agents.claim(NODE_A.id, 30_000), h.service.agents.claim(NODE_B.id, 30_000)];
  const runB = await h.service.start(nodeRun({ node: NODE_B }));
  const runA = await h.service.start(nodeRun({ node: NODE_A }));
  const [a, b] = await Promise.all(claims);
  t.is(a?.id, runA.id);
  t.is(b?.id, runB.id);
});
