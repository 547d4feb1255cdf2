import test from 'ava';
import { MemoryBackend } from '../../src/store/memory.js';
import { KeyIndex } from '../../src/store/key-index.js';

// A seeded generator, so a failure repeats.
function rng(seed: number): () => number {
  return () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

test('key index: lists by prefix in key order through adds, deletes and re-adds', (t) => {
  const index = new KeyIndex();
  const live = new Set<string>();
  const rand = rng(7);
  const kinds = ['Node/', 'Disk/', 'Disk2/'];
  for (let step = 0; step < 3000; step++) {
    const key = `${kinds[Math.floor(rand() * 3)]}${Math.floor(rand() * 300).toString(36)}${rand() < 0.2 ? '/x' : ''}`;
    if (live.has(key)) {
      index.remove(key);
      live.delete(key);
    } else {
      index.add(key);
      live.add(key);
    }
    if (step % 97 === 0 || step === 2999) {
      for (const prefix of ['Node/', 'Disk/', 'Disk2/', 'Disk/1', 'Node/a', 'Nope/']) {
        const want = [...live].filter((k) => k.startsWith(prefix)).sort();
        t.deepEqual([...(index.withPrefix(prefix) ?? [])], want, `${prefix} at step ${step}`);
      }
    }
  }
  t.is(index.withPrefix('Disk'), undefined, 'a prefix without a group is left to a scan');
});

test('key index: the backend lists every prefix as a sorted scan would', async (t) => {
  const b = new MemoryBackend<number>();
  await b.open();
  for (const k of ['Node/b', 'Node/a', 'Disk/z', 'Disk/a/1', 'Diskette/q', 'Node/c', 'top']) await b.put(k, 1);
  await b.delete('Node/b');
  await b.put('Node/b', 2);
  await b.delete('Node/c');
  const keys = async (p: string) => (await b.list(p)).items.map((kv) => kv.key);
  t.deepEqual(await keys('Node/'), ['Node/a', 'Node/b']);
  t.deepEqual(
    (await b.list('Node/')).items.map((kv) => kv.value),
    [1, 2],
  );
  t.deepEqual(await keys('Disk/'), ['Disk/a/1', 'Disk/z']);
  t.deepEqual(await keys('Disk'), ['Disk/a/1', 'Disk/z', 'Diskette/q']);
  t.deepEqual(await keys('Disk/a/'), ['Disk/a/1']);
  t.deepEqual(await keys(''), ['Disk/a/1', 'Disk/z', 'Diskette/q', 'Node/a', 'Node/b', 'top']);
});
