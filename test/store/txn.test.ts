// Backend.txn, what the audit trail rides on: all or nothing, consecutive revisions, watchers see
// the writes together, and the embedded backend makes them durable with one fdatasync.
import test, { type ExecutionContext } from 'ava';
import { ConflictError, NotFoundError } from '../../src/errors.js';
import { EmbeddedBackend, MemoryBackend, type Backend } from '../../src/store/index.js';
import { tempDir, tick } from './helpers.js';

const backends: Array<[string, (t: ExecutionContext) => Promise<Backend>]> = [
  [
    'memory',
    async () => {
      const b = new MemoryBackend();
      await b.open();
      return b;
    },
  ],
  [
    'embedded',
    async (t) => {
      const b = new EmbeddedBackend(await tempDir(t));
      await b.open();
      t.teardown(() => b.close());
      return b;
    },
  ],
];

for (const [name, open] of backends) {
  test(`${name} backend txn writes every op with consecutive revisions, or none when a precondition fails`, async (t) => {
    const b = await open(t);
    await b.put('a/1', { v: 1 });
    await b.put('old/1', { v: 0 });
    const seen: string[] = [];
    b.watch(b.revision(), (e) => seen.push(e.type === 'relist' ? 'relist' : `${e.type} ${e.key}@${e.revision}`));
    await tick();
    t.deepEqual(
      await b.txn([
        { op: 'put', key: 'a/1', value: { v: 2 }, pre: { modRevision: 1 } },
        { op: 'put', key: 'log/1', value: { e: 1 }, pre: { modRevision: 0 } },
        { op: 'del', key: 'old/1' },
        { op: 'del', key: 'gone/1', ifExists: true },
      ]),
      [3, 4, 5, 0],
    );
    t.deepEqual(seen, ['put a/1@3', 'put log/1@4', 'delete old/1@5']);
    await t.throwsAsync(
      b.txn([
        { op: 'put', key: 'a/1', value: { v: 9 }, pre: { modRevision: 1 } },
        { op: 'put', key: 'log/2', value: { e: 2 } },
      ]),
      { instanceOf: ConflictError },
    );
    await t.throwsAsync(
      b.txn([
        { op: 'put', key: 'log/3', value: {} },
        { op: 'del', key: 'gone/1' },
      ]),
      { instanceOf: NotFoundError },
    );
    await t.throwsAsync(
      b.txn([
        { op: 'put', key: 'x/1', value: {} },
        { op: 'put', key: 'x/1', value: {} },
      ]),
      { message: /twice/ },
    );
    t.is(b.revision(), 5, 'nothing written by the refused ones');
    t.is(await b.get('log/2'), undefined);
    t.is(await b.get('log/3'), undefined);
    t.deepEqual((await b.get('a/1'))?.value, { v: 2 });
  });
}

test('embedded backend txn is one fdatasync and survives a reopen whole', async (t) => {
  const dir = await tempDir(t);
  const b = new EmbeddedBackend(dir);
  await b.open();
  const before = b.stats().syncs;
  await b.txn([
    { op: 'put', key: 'doc/1', value: { spec: 1 } },
    { op: 'put', key: 'log/1', value: { entry: 1 } },
    { op: 'put', key: 'log/2', value: { entry: 2 } },
  ]);
  t.is(b.stats().syncs - before, 1);
  await b.close();
  const again = new EmbeddedBackend(dir);
  await again.open();
  t.teardown(() => again.close());
  t.is(again.revision(), 3);
  t.deepEqual(
    (await again.list('log/')).items.map((kv) => kv.value),
    [{ entry: 1 }, { entry: 2 }],
  );
});
