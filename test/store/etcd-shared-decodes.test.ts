// The read cache's watch and the watchers' hub decode each etcd event once between them, and
// hold the same value: what one decoded first, the other takes (etcd-shared-decodes.ts).
import test from 'ava';
import { PRUNE_AT, SharedDecodes } from '../../src/store/etcd-shared-decodes.js';
import { etcdPrefix, openEtcd, useEtcd } from './backends.js';
import { until } from './helpers.js';

useEtcd(test);

/** A decoder that counts its calls and makes a new object each time. */
function decoder(): { decode: (v: number) => () => { v: number }; calls: () => number } {
  let calls = 0;
  return {
    decode: (v) => () => {
      calls++;
      return { v };
    },
    calls: () => calls,
  };
}

test("shared decodes: the second watch takes the first one's value, which is then forgotten", (t) => {
  const d = decoder();
  const shared = new SharedDecodes<{ v: number }>(() => 0);
  const first = shared.value('k', 5, d.decode(5));
  t.is(shared.size(), 1);
  const second = shared.value('k', 5, d.decode(5));
  t.is(second, first, 'the same object');
  t.is(d.calls(), 1, 'decoded once');
  t.is(shared.size(), 0);
});

test('shared decodes: only the same revision is shared, and an older one does not replace a newer', (t) => {
  const d = decoder();
  const shared = new SharedDecodes<{ v: number }>(() => 0);
  const newer = shared.value('k', 7, d.decode(7));
  const older = shared.value('k', 6, d.decode(6));
  t.deepEqual(older, { v: 6 });
  t.is(d.calls(), 2);
  t.is(shared.value('k', 7, d.decode(7)), newer, 'the newer is still there for the other watch');
  t.is(d.calls(), 2);
  // A newer revision replaces what the other watch did not take yet.
  shared.value('j', 1, d.decode(1));
  const j2 = shared.value('j', 2, d.decode(2));
  t.deepEqual(shared.value('j', 1, d.decode(1)), { v: 1 });
  t.is(shared.value('j', 2, d.decode(2)), j2);
});

test('shared decodes: a value the other watch never takes is dropped once both watches passed it', (t) => {
  let passed = 0;
  const shared = new SharedDecodes<number>(() => passed);
  for (let i = 1; i <= PRUNE_AT; i++) shared.value(`k${i}`, i, () => i);
  t.is(shared.size(), PRUNE_AT);
  // Neither watch is past any of them: all stay.
  shared.value(`k${PRUNE_AT + 1}`, PRUNE_AT + 1, () => PRUNE_AT + 1);
  t.is(shared.size(), PRUNE_AT + 1);
  passed = 4_000;
  // The next look comes when the entries have doubled.
  for (let i = PRUNE_AT + 2; i <= 2 * PRUNE_AT + 3; i++) shared.value(`k${i}`, i, () => i);
  t.true(shared.size() <= 2 * PRUNE_AT + 3 - passed, `pruned to the ones past ${passed}: ${shared.size()}`);
  t.is(
    shared.value('k4001', 4_001, () => -1),
    4_001,
    'one not passed yet is still shared',
  );
  t.is(
    shared.value('k1', 1, () => -1),
    -1,
    'one both passed is gone',
  );
});

test.serial(
  "etcd backend: the read cache and a watcher hold one decoded value of each change, another controller's or its own",
  async (t) => {
    const prefix = etcdPrefix();
    const b = await openEtcd<{ n: number; tags: string[] }>(t, { prefix });
    const other = await openEtcd<{ n: number; tags: string[] }>(t, { prefix });
    const heard = new Map<string, { n: number; tags: string[] }>();
    b.watch(b.revision(), (e) => {
      if (e.type === 'put') heard.set(`${e.key}@${e.revision}`, e.value);
    });
    const revs: Array<[string, number]> = [];
    for (let n = 1; n <= 5; n++) {
      revs.push(['theirs', await other.put('theirs', { n, tags: ['a'] })]);
      revs.push(['mine', await b.put('mine', { n, tags: ['b'] })]);
    }
    const last = revs[revs.length - 1]![1];
    await until(() => heard.has(`mine@${last}`) && (b.cacheStats()?.revision ?? 0) >= last, 'the watcher and the cache at the last write');
    t.deepEqual([...heard.keys()].sort(), revs.map(([k, r]) => `${k}@${r}`).sort(), 'every change heard');
    for (const k of ['theirs', 'mine']) {
      const cached = await b.get(k);
      t.truthy(cached);
      t.is(heard.get(`${k}@${cached!.modRevision}`), cached!.value, `${k}: the watcher's value is the cache's`);
    }
    t.is(b.sharedDecodes(), 0, 'every value one watch decoded, the other took');
  },
);
