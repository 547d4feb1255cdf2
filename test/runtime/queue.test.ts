import test from 'ava';
import { runInNewContext } from 'node:vm';
import { setFlagsFromString } from 'node:v8';
import { ManualTimers } from '../../src/runtime/backoff.js';
import { WorkQueue } from '../../src/runtime/queue.js';
import { deferred, tick, ticks } from './helpers.js';

function recording(opts: ConstructorParameters<typeof WorkQueue>[0] = {}) {
  const seen: string[] = [];
  const q = new WorkQueue(opts);
  q.start(async (key) => {
    seen.push(key);
  });
  return { q, seen };
}

test('WorkQueue de-duplicates a key that is already waiting', async (t) => {
  const q = new WorkQueue();
  q.add('a');
  q.add('a');
  q.add('b');
  q.add('a');
  t.is(q.len(), 2);
  const seen: string[] = [];
  q.start(async (key) => {
    seen.push(key);
  });
  await q.idle();
  t.deepEqual(seen, ['a', 'b']);
  t.is(q.len(), 0);
});

test('WorkQueue runs a key re-added during processing exactly once more, never concurrently', async (t) => {
  const q = new WorkQueue({ concurrency: 4 });
  const gate = deferred();
  const started = deferred();
  let running = 0;
  let maxRunning = 0;
  let runs = 0;
  q.start(async () => {
    running++;
    maxRunning = Math.max(maxRunning, running);
    runs++;
    if (runs === 1) {
      started.resolve();
      await gate.promise;
    }
    running--;
  });
  q.add('k');
  await started.promise;
  q.add('k');
  q.add('k');
  q.add('k');
  t.is(q.stats().dirty, 1);
  t.is(q.len(), 0, 'a running key is not queued beside itself');
  gate.resolve();
  await q.idle();
  t.is(runs, 2);
  t.is(maxRunning, 1);
});

test('WorkQueue keeps in-flight handlers within the concurrency bound', async (t) => {
  const q = new WorkQueue({ concurrency: 3 });
  let running = 0;
  let maxRunning = 0;
  const done: string[] = [];
  q.start(async (key) => {
    running++;
    maxRunning = Math.max(maxRunning, running);
    await ticks(2);
    running--;
    done.push(key);
  });
  for (let i = 0; i < 50; i++) q.add(`k${i}`);
  await q.idle();
  t.is(done.length, 50);
  t.true(maxRunning <= 3);
  t.is(maxRunning, 3, 'the bound is reached, not just respected');
});

test('WorkQueue addRateLimited delays processing by the backoff delay', async (t) => {
  const timers = new ManualTimers();
  const { q, seen } = recording({ timers, random: () => 0 });
  q.addRateLimited('k');
  t.deepEqual(timers.delays(), [5]);
  timers.advance(4);
  await q.idle();
  t.deepEqual(seen, []);
  timers.advance(1);
  await q.idle();
  t.deepEqual(seen, ['k']);
  q.addRateLimited('k');
  t.deepEqual(timers.delays(), [10]);
  t.is(q.numRequeues('k'), 2);
});

test('WorkQueue forget resets the backoff of a key', (t) => {
  const timers = new ManualTimers();
  const { q } = recording({ timers, random: () => 0 });
  for (let i = 0; i < 3; i++) {
    q.addRateLimited('k');
    timers.advance(1_000);
  }
  q.addRateLimited('k');
  t.deepEqual(timers.delays(), [40]);
  timers.advance(1_000);
  q.forget('k');
  t.is(q.numRequeues('k'), 0);
  q.addRateLimited('k');
  t.deepEqual(timers.delays(), [5]);
});

test('WorkQueue addAfter keeps the earlier of two timers for a key', async (t) => {
  const timers = new ManualTimers();
  const { q, seen } = recording({ timers });
  q.addAfter('k', 100);
  q.addAfter('k', 50);
  q.addAfter('k', 200);
  t.deepEqual(timers.delays(), [50]);
  timers.advance(50);
  await q.idle({ includeDelayed: true });
  t.deepEqual(seen, ['k']);
  t.deepEqual(timers.delays(), []);
});

test('WorkQueue add de-duplicates but does not cancel a pending addAfter', async (t) => {
  const timers = new ManualTimers();
  const { q, seen } = recording({ timers });
  q.addAfter('k', 10);
  q.add('k');
  await q.idle();
  t.deepEqual(seen, ['k']);
  t.deepEqual(timers.delays(), [10]);
  timers.advance(10);
  await q.idle();
  t.deepEqual(seen, ['k', 'k']);
});

test('WorkQueue addAfter with real timers processes keys in due order', async (t) => {
  const { q, seen } = recording();
  q.addAfter('late', 30);
  q.addAfter('early', 5);
  q.addAfter('now', 0);
  await q.idle({ includeDelayed: true });
  t.deepEqual(seen, ['now', 'early', 'late']);
});

test('WorkQueue idle ignores delayed keys unless asked', async (t) => {
  const timers = new ManualTimers();
  const { q, seen } = recording({ timers });
  q.addAfter('k', 10);
  await q.idle();
  let settled = false;
  const waiting = q.idle({ includeDelayed: true }).then(() => (settled = true));
  await ticks(3);
  t.false(settled);
  timers.advance(10);
  await waiting;
  t.deepEqual(seen, ['k']);
});

test('WorkQueue shutdown cancels timers, drops waiting keys and waits for in-flight work', async (t) => {
  const timers = new ManualTimers();
  const q = new WorkQueue({ timers, concurrency: 1 });
  const gate = deferred();
  const order: string[] = [];
  q.start(async (key) => {
    order.push(`start ${key}`);
    if (key === 'a') await gate.promise;
    order.push(`end ${key}`);
  });
  q.add('a');
  q.add('b');
  q.addAfter('c', 10);
  q.addRateLimited('d');
  await tick();
  const stopping = q.shutdown().then(() => order.push('shutdown'));
  t.deepEqual(timers.delays(), []);
  await tick();
  gate.resolve();
  await stopping;
  t.deepEqual(order, ['start a', 'end a', 'shutdown']);
  q.add('e');
  q.addAfter('f', 1);
  t.is(q.len(), 0);
  t.is(q.stats().delayed, 0);
  timers.advance(100);
  await q.idle({ includeDelayed: true });
  t.false(order.includes('start b'));
});

test('WorkQueue reports a throwing handler and keeps processing', async (t) => {
  const errors: Array<[string, unknown]> = [];
  const q = new WorkQueue({ onError: (key, err) => errors.push([key, err]) });
  const seen: string[] = [];
  q.start(async (key) => {
    if (key === 'bad') throw new Error('boom');
    seen.push(key);
  });
  q.add('bad');
  q.add('good');
  await q.idle();
  t.deepEqual(seen, ['good']);
  t.is(errors.length, 1);
  t.is(errors[0]?.[0], 'bad');
  t.is(q.stats().handlerErrors, 1);
});

test('WorkQueue refuses to start twice', (t) => {
  const q = new WorkQueue();
  q.start(async () => {});
  t.throws(() => q.start(async () => {}), { message: /already started/ });
});

test('WorkQueue holds a backlog of waiting keys in a few bytes each', (t) => {
  // After a burst of 50,000 documents some 90,000 keys wait at once. A promise, closures and an
  // abort handler per waiting key (a p-queue task each) held ~870 bytes a key, ~80 MB.
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const keys = Array.from({ length: 100_000 }, (_, i) => `loop/key-${i}`);
  const q = new WorkQueue();
  gc();
  const before = process.memoryUsage().heapUsed;
  for (const key of keys) q.add(key);
  gc();
  const perKey = (process.memoryUsage().heapUsed - before) / keys.length;
  t.is(q.len(), keys.length);
  t.true(perKey < 200, `${perKey.toFixed(0)} bytes of heap per waiting key`);
});

test('WorkQueue processes a large backlog once each, oldest first, within the concurrency bound', async (t) => {
  const q = new WorkQueue({ concurrency: 3 });
  const n = 5_000;
  for (let i = 0; i < n; i++) q.add(`k${i}`);
  q.add('k0');
  const seen: string[] = [];
  let running = 0;
  let maxRunning = 0;
  q.start(async (key) => {
    running++;
    maxRunning = Math.max(maxRunning, running);
    seen.push(key);
    await tick();
    // Re-adding keys while the backlog drains appends them behind it.
    if (key === 'k10') q.add('late');
    running--;
  });
  await q.idle();
  t.is(seen.length, n + 1);
  t.deepEqual(
    seen.slice(0, n),
    Array.from({ length: n }, (_, i) => `k${i}`),
  );
  t.is(seen[n], 'late');
  t.is(maxRunning, 3);
  t.deepEqual(q.stats().waiting, 0);
});

test('WorkQueue gives the event loop a turn while handlers answered from memory keep its workers busy', async (t) => {
  const q = new WorkQueue({ concurrency: 4 });
  const done: string[] = [];
  // Each key takes a millisecond of work and no I/O: without a turn between keys, all 50 (50 ms)
  // would run before anything the event loop holds.
  q.start(async (key) => {
    const end = performance.now() + 1;
    while (performance.now() < end);
    done.push(key);
  });
  for (let i = 0; i < 50; i++) q.add(`k${i}`);
  let doneWhenTurned = -1;
  setImmediate(() => (doneWhenTurned = done.length));
  await q.idle();
  t.is(done.length, 50);
  t.true(doneWhenTurned >= 0 && doneWhenTurned < 50, `the event loop turned after ${doneWhenTurned} of 50 keys`);
});
