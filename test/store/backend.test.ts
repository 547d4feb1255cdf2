// The key-value contract (CAS, revisions, watch from a revision, relist) on every backend. etcd's
// revision is the server's and does not start at 0, so revisions are counted from the one the
// backend had when the test began (`r`); its tests run one at a time, so they still follow on.
import test from 'ava';
import { ConflictError, NotFoundError } from '../../src/errors.js';
import { MemoryBackend, type RelistSignal, type WatchEvent } from '../../src/store/index.js';
import { backendSubjects, testFor } from './backends.js';
import { tick, until } from './helpers.js';

const summary = (e: WatchEvent | RelistSignal, r = 0): string =>
  e.type === 'relist' ? `relist@${e.revision - r}` : `${e.type} ${e.key}@${e.revision - r}`;

for (const s of backendSubjects(test)) {
  const it = testFor(test, s);
  const { name, open } = s;

  it(`${name} backend numbers writes with one global revision`, async (t) => {
    const b = await open(t);
    const r = b.revision();
    if (!name.startsWith('etcd')) t.is(r, 0);
    t.is(await b.put('a/1', { v: 1 }), r + 1);
    t.is(await b.put('b/1', { v: 2 }), r + 2);
    t.is(await b.put('a/1', { v: 3 }), r + 3);
    t.deepEqual(await b.get('a/1'), { key: 'a/1', value: { v: 3 }, createRevision: r + 1, modRevision: r + 3 });
    const { items, revision } = await b.list('a/');
    t.is(revision, r + 3);
    t.is(b.revision(), r + 3);
    t.deepEqual(
      items.map((kv) => kv.key),
      ['a/1'],
    );
  });

  it(`${name} backend lists a prefix in key order`, async (t) => {
    const b = await open(t);
    for (const k of ['x/b', 'x/a', 'y/a', 'x/c', 'xa']) await b.put(k, k);
    t.deepEqual(
      (await b.list('x/')).items.map((kv) => kv.value),
      ['x/a', 'x/b', 'x/c'],
    );
    t.deepEqual((await b.list('z/')).items, []);
  });

  it(`${name} backend refuses a put whose precondition does not hold`, async (t) => {
    const b = await open(t);
    const r = b.revision();
    await b.put('k', 1, { modRevision: 0 });
    const exists = await t.throwsAsync(b.put('k', 2, { modRevision: 0 }), { instanceOf: ConflictError });
    t.is(exists.message, `k already exists (modRevision ${r + 1})`);
    const stale = await t.throwsAsync(b.put('k', 2, { modRevision: 7 }), { instanceOf: ConflictError });
    t.is(stale.message, `k was modified concurrently: expected modRevision 7, found modRevision ${r + 1}`);
    t.is(stale.code, 'CONFLICT');
    await t.throwsAsync(b.put('gone', 2, { modRevision: r + 1 }), { instanceOf: ConflictError, message: /it no longer exists/ });
    t.is(b.revision(), r + 1);
    t.is((await b.get('k'))?.value, 1);
  });

  it(`${name} backend lets exactly one concurrent CAS on the same revision win`, async (t) => {
    const b = await open(t);
    const r = await b.put('k', 0);
    const results = await Promise.allSettled([1, 2, 3, 4].map((v) => b.put('k', v, { modRevision: r })));
    t.is(results.filter((x) => x.status === 'fulfilled').length, 1);
    t.true(results.every((x) => x.status === 'fulfilled' || x.reason instanceof ConflictError));
    t.is(b.revision(), r + 1);
  });

  it(`${name} backend deletes with a precondition and reports a missing key`, async (t) => {
    const b = await open(t);
    const r = await b.put('k', 1);
    await t.throwsAsync(b.delete('k', { modRevision: r + 5 }), { instanceOf: ConflictError });
    t.is(await b.delete('k', { modRevision: r }), r + 1);
    t.is(await b.get('k'), undefined);
    await t.throwsAsync(b.delete('k'), { instanceOf: NotFoundError, message: 'k not found' });
  });

  it(`${name} backend watch delivers history after a revision, then live events, in order`, async (t) => {
    const b = await open(t);
    const r = b.revision();
    for (let i = 1; i <= 4; i++) await b.put(`k${i}`, i);
    const seen: string[] = [];
    b.watch(r + 2, (e) => seen.push(summary(e, r)));
    await b.put('k5', 5);
    await b.delete('k1');
    await until(() => seen.length >= 4, 'four events');
    await tick();
    t.deepEqual(seen, ['put k3@3', 'put k4@4', 'put k5@5', 'delete k1@6']);
  });

  it(`${name} backend watch reports prevValue and createRevision`, async (t) => {
    const b = await open(t);
    const r = b.revision();
    const events: (WatchEvent | RelistSignal)[] = [];
    b.watch(r, (e) => events.push(e));
    await tick();
    await b.put('k', 'a');
    await b.put('k', 'b');
    await b.delete('k');
    await until(() => events.length >= 3, 'three events');
    t.deepEqual(events, [
      { type: 'put', key: 'k', value: 'a', revision: r + 1, createRevision: r + 1 },
      { type: 'put', key: 'k', value: 'b', revision: r + 2, createRevision: r + 1, prevValue: 'a' },
      { type: 'delete', key: 'k', value: 'b', revision: r + 3, createRevision: r + 1 },
    ]);
  });

  it(`${name} backend history replays the changes after a revision`, async (t) => {
    const b = await open(t);
    const r = b.revision();
    await b.put('k', 'a');
    await b.put('k', 'b');
    const events: (WatchEvent | RelistSignal)[] = [];
    b.watch(r, (e) => events.push(e));
    await until(() => events.length >= 2, 'two events');
    // The embedded history keeps no old values (memory); etcd keeps them all until compacted.
    t.deepEqual(events, [
      { type: 'put', key: 'k', value: 'a', revision: r + 1, createRevision: r + 1 },
      { type: 'put', key: 'k', value: 'b', revision: r + 2, createRevision: r + 1, ...(s.replayHasPrev ? { prevValue: 'a' } : {}) },
    ]);
  });

  if (s.boundedHistory) {
    it(`${name} backend sends relist when the history is gone`, async (t) => {
      const b = await open(t, { historySize: 3 });
      for (let i = 1; i <= 6; i++) await b.put(`k${i}`, i);
      const old: string[] = [];
      const recent: string[] = [];
      b.watch(1, (e) => old.push(summary(e)));
      b.watch(3, (e) => recent.push(summary(e)));
      await tick();
      await b.put('k7', 7);
      await until(() => old.length >= 2 && recent.length >= 4, 'the relist and the events');
      t.deepEqual(old, ['relist@6', 'put k7@7']);
      t.deepEqual(recent, ['put k4@4', 'put k5@5', 'put k6@6', 'put k7@7']);
    });
  }

  it(`${name} backend survives a throwing watch handler`, async (t) => {
    const errors: unknown[] = [];
    const b = await open(t, { onWatchError: (e) => errors.push(e) });
    const r = b.revision();
    const seen: number[] = [];
    b.watch(r, () => {
      throw new Error('handler bug');
    });
    b.watch(r, (e) => seen.push(e.revision - r));
    await b.put('a', 1);
    await b.put('b', 2);
    await until(() => seen.length >= 2 && errors.length >= 2, 'both events');
    t.deepEqual(seen, [1, 2]);
    t.is(errors.length, 2);
    t.is((errors[0] as Error).message, 'handler bug');
  });

  it(`${name} backend stops delivering after unwatch`, async (t) => {
    const b = await open(t);
    const r = b.revision();
    const seen: number[] = [];
    const stop = b.watch(r, (e) => {
      seen.push(e.revision - r);
      stop();
    });
    const witness: number[] = [];
    b.watch(r, (e) => witness.push(e.revision - r));
    await b.put('a', 1);
    await b.put('b', 2);
    await until(() => witness.length >= 2, 'the witness to see both');
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
