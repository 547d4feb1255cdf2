// Backend.txn, what the audit trail rides on: all or nothing, one revision or consecutive ones
// (backend.ts), watchers see the writes together, and the embedded backend makes them durable
// with one fdatasync.
import test from 'ava';
import { ConflictError, NotFoundError } from '../../src/errors.js';
import { EmbeddedBackend } from '../../src/store/index.js';
import { backendSubjects, testFor } from './backends.js';
import { tempDir, tick, until } from './helpers.js';

for (const s of backendSubjects(test)) {
  const { name, open } = s;
  testFor(test, s)(`${name} backend txn writes every op, or none when a precondition fails`, async (t) => {
    const b = await open(t);
    const a1 = await b.put('a/1', { v: 1 });
    await b.put('old/1', { v: 0 });
    const r = b.revision();
    const seen: string[] = [];
    b.watch(r, (e) => seen.push(e.type === 'relist' ? 'relist' : `${e.type} ${e.key}@${e.revision - r}`));
    await tick();
    const revs = await b.txn([
      { op: 'put', key: 'a/1', value: { v: 2 }, pre: { modRevision: a1 } },
      { op: 'put', key: 'log/1', value: { e: 1 }, pre: { modRevision: 0 } },
      { op: 'del', key: 'old/1' },
      { op: 'del', key: 'gone/1', ifExists: true },
    ]);
    const [x, y, z]: [number, number, number] = s.txnOneRevision ? [1, 1, 1] : [1, 2, 3];
    t.deepEqual(
      revs.map((v) => (v === 0 ? 0 : v - r)),
      [x, y, z, 0],
    );
    await until(() => seen.length >= 3, 'the three writes');
    t.deepEqual(seen, [`put a/1@${x}`, `put log/1@${y}`, `delete old/1@${z}`]);
    t.is(b.revision(), r + z);
    await t.throwsAsync(
      b.txn([
        { op: 'put', key: 'a/1', value: { v: 9 }, pre: { modRevision: a1 } },
        { op: 'put', key: 'log/2', value: { e: 2 } },
      ]),
      { instanceOf: ConflictError, message: /^a\/1 was modified concurrently/ },
    );
    await t.throwsAsync(
      b.txn([
        { op: 'put', key: 'log/3', value: {} },
        { op: 'del', key: 'gone/1' },
      ]),
      { instanceOf: NotFoundError, message: 'gone/1 not found' },
    );
    await t.throwsAsync(
      b.txn([
        { op: 'put', key: 'x/1', value: {} },
        { op: 'put', key: 'x/1', value: {} },
      ]),
      { message: /twice/ },
    );
    t.is(b.revision(), r + z, 'nothing written by the refused ones');
    t.is(await b.get('log/2'), undefined);
    t.is(await b.get('log/3'), undefined);
    t.deepEqual((await b.get('a/1'))?.value, { v: 2 });
  });

  testFor(test, s)(
    `${name} backend txn check writes nothing and holds the others to another key's revision (the leader's fence)`,
    async (t) => {
      const b = await open(t);
      const fence = await b.put('~fence', { holder: 'a' });
      const revs = await b.txn([
        { op: 'put', key: 'k/1', value: 1 },
        { op: 'check', key: '~fence', pre: { modRevision: fence } },
      ]);
      t.is(revs[1], 0, 'a check has no revision of its own');
      t.is((await b.get('~fence'))?.modRevision, fence, 'the checked key is not written');
      t.is((await b.get('k/1'))?.value, 1);
      // The fence moves (another leader): the same write is refused whole, naming the fence.
      await b.put('~fence', { holder: 'b' });
      const r = b.revision();
      await t.throwsAsync(
        b.txn([
          { op: 'put', key: 'k/1', value: 2 },
          { op: 'del', key: 'k/1x', ifExists: true },
          { op: 'check', key: '~fence', pre: { modRevision: fence } },
        ]),
        { instanceOf: ConflictError, message: /^~fence was modified concurrently/ },
      );
      t.is(b.revision(), r);
      t.is((await b.get('k/1'))?.value, 1);
    },
  );
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
