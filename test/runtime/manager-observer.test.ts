// What the manager tells its observer (the metrics' reconcile series) and the depths it reports.
import test from 'ava';
import { ConflictError, TerminalError } from '../../src/errors.js';
import type { ReconcileOutcome } from '../../src/runtime/manager.js';
import { createNode, harness, toyNodeLoop } from './fixtures.js';
import { deferred } from './helpers.js';
import { waitFor } from '../lab/harness.js';

test('Manager observer hears each reconcile with its loop, a duration and how it ended', async (t) => {
  const seen: Array<[string, number, ReconcileOutcome]> = [];
  const h = await harness({ observer: { reconciled: (loop, seconds, outcome) => seen.push([loop, seconds, outcome]) } });
  await createNode(h.store);
  const loop = toyNodeLoop(h.store, h.clock, {
    beforeApply: (_doc, attempt) => {
      if (attempt === 1) throw new ConflictError('stale');
      if (attempt === 2) throw new Error('boom');
      if (attempt === 3) throw new TerminalError('cannot');
    },
  });
  h.manager.register(loop);
  await h.manager.start();
  await h.manager.idle();
  h.timers.advance(5);
  await h.manager.idle();
  h.timers.advance(10);
  await h.manager.idle();
  t.deepEqual(
    seen.map(([l, , o]) => [l, o]),
    [
      [loop.name, 'conflict'],
      [loop.name, 'error'],
      [loop.name, 'terminal'],
    ],
  );
  for (const [, seconds] of seen) t.true(seconds >= 0 && seconds < 60);
  await h.manager.stop();
});

test('Manager queue depths count waiting keys per loop, every loop listed, and running says whether it runs', async (t) => {
  const h = await harness({ concurrency: 1 });
  for (let i = 0; i < 3; i++) await createNode(h.store);
  const gate = deferred();
  const loop = toyNodeLoop(h.store, h.clock, { beforeApply: () => gate.promise });
  h.manager.register(loop);
  t.false(h.manager.running());
  t.deepEqual([...h.manager.queueDepths()], [[loop.name, 0]]);
  await h.manager.start();
  t.true(h.manager.running());
  // Listed and enqueued: one key is held in apply, the other two wait (concurrency 1).
  await waitFor('the first key held', () => h.manager.stats().queue.active === 1);
  t.deepEqual([...h.manager.queueDepths()], [[loop.name, 2]]);
  gate.resolve();
  await h.manager.idle();
  t.deepEqual([...h.manager.queueDepths()], [[loop.name, 0]]);
  await h.manager.stop();
  t.false(h.manager.running());
});
