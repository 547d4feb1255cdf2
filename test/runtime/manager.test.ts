import test from 'ava';
import { TerminalError } from '../../src/errors.js';
import { Manager } from '../../src/runtime/manager.js';
import { blocked, requeueAfter, done, type Reconciler } from '../../src/runtime/types.js';
import { createNode, harness, toyNodeLoop, total, type NodeDoc } from './fixtures.js';
import { deferred } from './helpers.js';

test('Manager reconciles existing objects at start and converges', async (t) => {
  const h = await harness();
  const a = await createNode(h.store, 1);
  const b = await createNode(h.store, 2);
  const loop = toyNodeLoop(h.store, h.clock);
  h.manager.register(loop);
  await h.manager.start();
  await h.manager.idle();
  for (const node of [a, b]) {
    const doc = await h.store.mustGet<NodeDoc['spec'], NodeDoc['status']>('Node', node.id);
    t.is(doc.status.phase, 'active');
    t.is(doc.status.conditions?.[0]?.status, 'True');
    t.is(doc.status.observedGeneration, 1);
  }
  await h.manager.stop();
});

test('Manager does not loop forever when a reconcile writes an unchanged status', async (t) => {
  const h = await harness();
  const node = await createNode(h.store);
  const loop = toyNodeLoop(h.store, h.clock);
  h.manager.register(loop);
  await h.manager.start();
  await h.manager.idle();
  // Once for the start-up list, once for the event of its own first status write; the second
  // write is a no-op the store skips, so nothing wakes it again.
  t.is(loop.counts.get(node.id), 2);
  const revision = h.store.revision();
  await h.manager.idle();
  t.is(loop.counts.get(node.id), 2);
  t.is(h.store.revision(), revision);
  t.is(h.manager.stats().reconciles, 2);
  await h.manager.stop();
});

test('Manager wakes a loop when a spec changes', async (t) => {
  const h = await harness();
  const node = await createNode(h.store);
  const loop = toyNodeLoop(h.store, h.clock);
  h.manager.register(loop);
  await h.manager.start();
  await h.manager.idle();
  h.clock.advance(1_000);
  await h.store.mutateSpec<NodeDoc['spec']>('Node', node.id, (d) => ({ ...d.spec, power: 'off' }));
  await h.manager.idle();
  const doc = await h.store.mustGet<NodeDoc['spec'], NodeDoc['status']>('Node', node.id);
  t.is(doc.status.phase, 'offline');
  t.is(doc.status.observedGeneration, 2);
  t.is(doc.status.conditions?.[0]?.lastTransitionTime, h.clock.iso());
  t.true(total(loop.counts) <= 4);
  await h.manager.stop();
});

test('Manager retries a thrown error with growing backoff, then succeeds', async (t) => {
  const h = await harness();
  const node = await createNode(h.store);
  const loop = toyNodeLoop(h.store, h.clock, {
    beforeApply: (_doc, attempt) => {
      if (attempt <= 2) throw new Error(`flaky ${attempt}`);
    },
  });
  h.manager.register(loop);
  await h.manager.start();
  await h.manager.idle();
  t.deepEqual(h.timers.delays(), [5], 'first retry after the base delay');
  h.timers.advance(5);
  await h.manager.idle();
  t.deepEqual(h.timers.delays(), [10], 'second retry after twice the base delay');
  h.timers.advance(10);
  await h.manager.idle();
  t.is((await h.store.mustGet<NodeDoc['spec'], NodeDoc['status']>('Node', node.id)).status.phase, 'active');
  t.is(h.manager.stats().errors, 2);
  t.deepEqual(h.timers.delays(), []);
  t.is(h.logs.filter(([level, msg]) => level === 'error' && msg.includes('backing off')).length, 2);
  await h.manager.stop();
});

test('Manager does not retry a TerminalError until the object changes', async (t) => {
  const h = await harness();
  const node = await createNode(h.store);
  const loop = toyNodeLoop(h.store, h.clock, {
    beforeApply: () => {
      throw new TerminalError('image missing');
    },
  });
  h.manager.register(loop);
  await h.manager.start();
  await h.manager.idle({ includeDelayed: true });
  t.is(loop.counts.get(node.id), 1);
  t.deepEqual(h.timers.delays(), []);
  t.is(h.manager.stats().terminalErrors, 1);
  t.true(h.logs.some(([level, , f]) => level === 'error' && f?.['error'] === 'image missing'));
  await h.store.mutateSpec<NodeDoc['spec']>('Node', node.id, (d) => ({ ...d.spec, power: 'off' }));
  await h.manager.idle();
  t.is(loop.counts.get(node.id), 2);
  await h.manager.stop();
});

test('Manager schedules requeue and blocked results after their delays', async (t) => {
  const h = await harness();
  const node = await createNode(h.store);
  const results = [requeueAfter(250), blocked('NoQuorum', 'waiting for monitor quorum', 30_000), done()];
  const loop = toyNodeLoop(h.store, h.clock, { result: () => results.shift() ?? done() });
  h.manager.register(loop);
  await h.manager.start();
  await h.manager.idle();
  // The first status write woke the loop once more (blocked); the requeue timer is still due.
  t.deepEqual(h.timers.delays(), [250]);
  h.timers.advance(250);
  await h.manager.idle();
  t.is(loop.counts.get(node.id), 3);
  await h.manager.stop();
});

test('Manager stop aborts the signal of an in-flight reconcile and waits for it', async (t) => {
  const h = await harness();
  await createNode(h.store);
  const entered = deferred();
  const order: string[] = [];
  const loop: Reconciler<string, null> = {
    name: 'slow',
    kind: 'Node',
    observe: async (id) => id,
    plan: () => null,
    async apply(_o, _p, ctx) {
      entered.resolve();
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve));
      order.push('apply saw abort');
      throw new Error('aborted');
    },
  };
  h.manager.register(loop);
  await h.manager.start();
  await entered.promise;
  await h.manager.stop();
  order.push('stopped');
  t.deepEqual(order, ['apply saw abort', 'stopped']);
  t.is(h.manager.stats().errors, 0, 'work aborted by stop is not an error');
});

test('Manager enqueue runs a loop for an id on demand and refuses unknown loops', async (t) => {
  const h = await harness();
  const loop = toyNodeLoop(h.store, h.clock);
  h.manager.register(loop);
  await h.manager.start();
  h.manager.enqueue('node', 'not-there');
  await h.manager.idle();
  t.is(loop.counts.get('not-there'), 1);
  t.throws(() => h.manager.enqueue('nope', 'x'), { message: 'unknown loop "nope"' });
  await h.manager.stop();
});

test('Manager start refuses a loop that depends on an unregistered loop', async (t) => {
  const h = await harness();
  h.manager.register({ ...toyNodeLoop(h.store, h.clock), name: 'mon', dependsOn: ['network'] });
  await t.throwsAsync(() => h.manager.start(), { message: /loop "mon" depends on "network", which is not registered/ });
});

test('Manager register refuses duplicates, bad names and late registration', async (t) => {
  const h = await harness();
  const loop = toyNodeLoop(h.store, h.clock);
  h.manager.register(loop);
  t.throws(() => h.manager.register(loop), { message: 'loop "node" is already registered' });
  t.throws(() => h.manager.register({ ...loop, name: 'a/b' }), { message: /invalid loop name/ });
  await h.manager.start();
  t.throws(() => h.manager.register({ ...loop, name: 'late' }), { message: /after start/ });
  await h.manager.stop();
  t.true(h.manager instanceof Manager);
});
