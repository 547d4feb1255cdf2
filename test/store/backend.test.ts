// The key-value contract (CAS, revisions, watch from a revision, relist) on both backends.
import test, { type ExecutionContext } from 'ava';
import { ConflictError, NotFoundError } from '../../src/errors.js';
import { EmbeddedBackend, MemoryBackend, type Backend, type RelistSignal, type WatchEvent } from '../../src/store/index.js';
import { tempDir, tick } from './helpers.js';

type Open = (t: ExecutionContext, opts?: { historySize?: number; onWatchError?: (e: unknown) => void }) => Promise<Backend>;

const backends: [string, Open][] = [
  [
    'memory',
    async (_t, opts = {}) => {
      const b = new MemoryBackend(opts);
      await b.open();
      return b;
    },
  ],
  [
    'embedded',
    async (t, opts = {}) => {
      const b = new EmbeddedBackend(await tempDir(t), opts);
      await b.open();
      t.teardown(() => b.close());
      return b;
    },
  ],
];

const summary = (e: WatchEvent | RelistSignal): string =>
  e.type === 'relist' ? `relist@${e.revision}` : `${e.type} ${e.key}@${e.revision}`;

for (const [name, open] of backends) {
  test(`${name} backend numbers writes with one global revision`, async (t) => {
    const b = await open(t);
    t.is(b.revision(), 0);
    t.is(await b.put('a/1', { v: 1 }), 1);
    t.is(await b.put('b/1', { v: 2 }), 2);
    t.is(await b.put('a/1', { v: 3 }), 3);
    t.deepEqual(await b.get('a/1'), { key: 'a/1', value: { v: 3 }, createRevision: 1, modRevision: 3 });
    const { items, revision } = await b.list('a/');
    t.is(revision, 3);
    t.deepEqual(
      items.map((kv) => kv.key),
      ['a/1'],
    );
  });

  test(`${name} backend refuses a put whose precondition does not hold`, async (t) => {
    const b = await open(t);
    await b.put('k', 1, { modRevision: 0 });
    const exists = await t.throwsAsync(b.put('k', 2, { modRevision: 0 }), { instanceOf: ConflictError });
    t.is(exists.message, 'k already exists (modRevision 1)');
    const stale = await t.throwsAsync(b.put('k', 2, { modRevision: 7 }), { instanceOf: ConflictError });
    t.is(stale.message, 'k was modified concurrently: expected modRevision 7, found modRevision 1');
    t.is(stale.code, 'CONFLICT');
    t.is(b.revision(), 1);
    t.is((await b.get('k'))?.value, 1);
  });

  test(`${name} backend lets exactly one concurrent CAS on the same revision win`, async (t) => {
    const b = await open(t);
    await b.put('k', 0);
    const results = await Promise.allSettled([1, 2, 3, 4].map((v) => b.put('k', v, { modRevision: 1 })));
    t.is(results.filter((r) => r.status === 'fulfilled').length, 1);
    t.true(results.every((r) => r.status === 'fulfilled' || r.reason instanceof ConflictError));
    t.is(b.revision(), 2);
  });

  test(`${name} backend deletes with a precondition and reports a missing key`, async (t) => {
    const b = await open(t);
    await b.put('k', 1);
    await t.throwsAsync(b.delete('k', { modRevision: 5 }), { instanceOf: ConflictError });
    t.is(await b.delete('k', { modRevision: 1 }), 2);
    t.is(await b.get('k'), undefined);
    await t.throwsAsync(b.delete('k'), { instanceOf: NotFoundError, message: 'k not found' });
  });

  test(`${name} backend watch delivers history after a revision, then live events, in order`, async (t) => {
    const b = await open(t);
    for (let i = 1; i <= 4; i++) await b.put(`k${i}`, i);
    const seen: string[] = [];
    b.watch(2, (e) => seen.push(summary(e)));
    const writes = [b.put('k5', 5), b.delete('k1')];
    await Promise.all(writes);
    await tick();
    t.deepEqual(seen, ['put k3@3', 'put k4@4', 'put k5@5', 'delete k1@6']);
  });

  test(`${name} backend watch reports prevValue and createRevision`, async (t) => {
    const b = await open(t);
    const events: (WatchEvent | RelistSignal)[] = [];
    b.watch(0, (e) => events.push(e));
    await b.put('k', 'a');
    await b.put('k', 'b');
    await b.delete('k');
    await tick();
    t.deepEqual(events, [
      { type: 'put', key: 'k', value: 'a', revision: 1, createRevision: 1 },
      { type: 'put', key: 'k', value: 'b', revision: 2, createRevision: 1, prevValue: 'a' },
      { type: 'delete', key: 'k', value: 'b', revision: 3, createRevision: 1 },
    ]);
  });

  test(`${name} backend history replays changes without the values they replaced`, async (t) => {
    const b = await open(t);
    await b.put('k', 'a');
    await b.put('k', 'b');
    const events: (WatchEvent | RelistSignal)[] = [];
    b.watch(0, (e) => events.push(e));
    await tick();
    t.deepEqual(events, [
      { type: 'put', key: 'k', value: 'a', revision: 1, createRevision: 1 },
      { type: 'put', key: 'k', value: 'b', revision: 2, createRevision: 1 },
    ]);
  });

  test(`${name} backend sends relist when the history is gone`, async (t) => {
    const b = await open(t, { historySize: 3 });
    for (let i = 1; i <= 6; i++) await b.put(`k${i}`, i);
    const old: string[] = [];
    const recent: string[] = [];
    b.watch(1, (e) => old.push(summary(e)));
    b.watch(3, (e) => recent.push(summary(e)));
    await tick();
    await b.put('k7', 7);
    await tick();
    t.deepEqual(old, ['relist@6', 'put k7@7']);
    t.deepEqual(recent, ['put k4@4', 'put k5@5', 'put k6@6', 'put k7@7']);
  });

  test(`${name} backend survives a throwing watch handler`, async (t) => {
    const errors: unknown[] = [];
    const b = await open(t, { onWatchError: (e) => errors.push(e) });
    const seen: number[] = [];
    b.watch(0, () => {
      throw new Error('handler bug');
    });
    b.watch(0, (e) => seen.push(e.revision));
    await b.put('a', 1);
    await b.put('b', 2);
    await tick();
    t.deepEqual(seen, [1, 2]);
    t.is(errors.length, 2);
    t.is((errors[0] as Error).message, 'handler bug');
  });

  test(`${name} backend stops delivering after unwatch`, async (t) => {
    const b = await open(t);
    const seen: number[] = [];
    const stop = b.watch(0, (e) => {
      seen.push(e.revision);
      stop();
    });
    await b.put('a', 1);
    await b.put('b', 2);
    await tick();
    t.deepEqual(seen, [1]);
  });
}

test('memory backend keeps watchers in order when a handler writes', async (t) => {
  const b = new MemoryBackend();
  await b.open();
  const first: number[] = [];
  const second: number[] = [];
  b.watch(0, (e) => {
    first.push(e.revision);
    if (e.revision === 1) void b.put('echo', 1);
  });
  b.watch(0, (e) => second.push(e.revision));
  await tick();
  await b.put('a', 1);
  await tick();
  t.deepEqual(first, [1, 2]);
  t.deepEqual(second, [1, 2]);
});
