import test from 'ava';
import { ConflictError } from '../../src/errors.js';
import type { Result } from '../../src/runtime/types.js';
import { createMemoryStore } from '../../src/store/index.js';
import { createNode, harness, proxyStore, toyNodeLoop, type NodeDoc } from './fixtures.js';

test('Manager requeues a conflict quietly with backoff', async (t) => {
  const h = await harness();
  const node = await createNode(h.store);
  const loop = toyNodeLoop(h.store, h.clock, {
    beforeApply: (_doc, attempt) => {
      if (attempt === 1) throw new ConflictError('stale resourceVersion');
    },
  });
  h.manager.register(loop);
  await h.manager.start();
  await h.manager.idle();
  t.deepEqual(h.timers.delays(), [5]);
  h.timers.advance(5);
  await h.manager.idle();
  t.is((await h.store.mustGet<NodeDoc['spec'], NodeDoc['status']>('Node', node.id)).status.phase, 'active');
  t.like(h.manager.stats(), { conflicts: 1, errors: 0 });
  t.false(h.logs.some(([level]) => level === 'error'));
  await h.manager.stop();
});

test('Manager treats a malformed result and a non-Error throw as retryable errors', async (t) => {
  const h = await harness();
  await createNode(h.store);
  const loop = toyNodeLoop(h.store, h.clock, {
    beforeApply: (_doc, attempt) => {
      // eslint-disable-next-line @typescript-eslint/only-throw-error -- the test is that a non-Error thrown by a loop is survived
      if (attempt === 1) throw 'a string, not an Error';
    },
    result: (_doc, attempt) => (attempt === 2 ? ({ type: 'weird' } as unknown as Result) : { type: 'done' }),
  });
  h.manager.register(loop);
  await h.manager.start();
  await h.manager.idle();
  h.timers.advance(5);
  await h.manager.idle();
  h.timers.advance(10);
  await h.manager.idle();
  const errors = h.logs.filter(([level]) => level === 'error').map(([, , f]) => String(f?.['error']));
  t.is(errors.length, 2);
  t.is(errors[0], 'a string, not an Error');
  t.regex(errors[1] ?? '', /unknown result: \{"type":"weird"\}/);
  t.deepEqual(h.timers.delays(), []);
  await h.manager.stop();
});

test('Manager logs a failed list and lists again at the next resync', async (t) => {
  const real = await createMemoryStore();
  const node = await createNode(real);
  let fail = true;
  const store = proxyStore(real, {
    list: async <S, T>(kind: string) => {
      if (fail) throw new Error('backend unavailable');
      return real.list<S, T>(kind);
    },
  });
  const h = await harness({ resyncMs: 1_000 }, store);
  const loop = toyNodeLoop(h.store, h.clock);
  h.manager.register(loop);
  await h.manager.start();
  await h.manager.idle();
  t.true(h.logs.some(([level, msg]) => level === 'error' && msg === 'list failed'));
  t.is(loop.counts.get(node.id), undefined);
  fail = false;
  h.timers.advance(1_000);
  await h.manager.idle();
  t.is((await real.mustGet<NodeDoc['spec'], NodeDoc['status']>('Node', node.id)).status.phase, 'active');
  await h.manager.stop();
});
