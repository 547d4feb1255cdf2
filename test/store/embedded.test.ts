// Durability of the embedded backend: replay, torn tails, corruption, compaction, group commit.
import test, { type ExecutionContext } from 'ava';
import { appendFile, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 as zlibCrc } from 'node:zlib';
import { EmbeddedBackend, type EmbeddedOptions, type KeyValue } from '../../src/store/index.js';
import { encodeRecord, segmentPath } from '../../src/store/journal.js';
import { foldSegments } from '../../src/store/snapshot.js';
import { tempDir, tick } from './helpers.js';

async function openAt(t: ExecutionContext, dir: string, opts: EmbeddedOptions = {}): Promise<EmbeddedBackend> {
  const b = new EmbeddedBackend(dir, opts);
  await b.open();
  t.teardown(() => b.close());
  return b;
}

async function dump(b: EmbeddedBackend): Promise<{ revision: number; items: KeyValue[] }> {
  return b.list('');
}

/** A few creates, updates and a delete, written sequentially. */
async function fill(b: EmbeddedBackend, n = 20): Promise<void> {
  for (let i = 0; i < n; i++) await b.put(`doc/${i}`, { i, text: 'x'.repeat(50) });
  for (let i = 0; i < n; i += 2) await b.put(`doc/${i}`, { i, text: 'updated' });
  await b.delete('doc/1');
}

const segmentFiles = async (dir: string): Promise<string[]> => (await readdir(dir)).filter((f) => f.startsWith('journal.')).sort();

test('embedded backend replays the journal on restart with equal values and revisions', async (t) => {
  const dir = await tempDir(t);
  const first = await openAt(t, dir);
  await fill(first);
  const before = await dump(first);
  await first.close();
  const second = await openAt(t, dir);
  t.deepEqual(await dump(second), before);
  t.is(second.revision(), 31);
  t.is(second.recovery.replayed, 31);
  t.is(await second.put('doc/new', 1), 32);
});

test('embedded backend resumes a watch across a restart from the replayed journal', async (t) => {
  const dir = await tempDir(t);
  const first = await openAt(t, dir);
  await fill(first, 5);
  await first.close();
  const second = await openAt(t, dir);
  const seen: string[] = [];
  second.watch(5, (e) => seen.push(e.type === 'relist' ? 'relist' : `${e.type} ${e.key}@${e.revision}`));
  await tick();
  t.deepEqual(seen, ['put doc/0@6', 'put doc/2@7', 'put doc/4@8', 'delete doc/1@9']);
});

const tornTails: [string, (good: Buffer) => Buffer][] = [
  ['a short header', () => Buffer.from([7, 0, 0])],
  ['a short record', (good) => good.subarray(0, good.length - 5)],
  ['a bad checksum', (good) => Buffer.concat([good.subarray(0, 4), Buffer.from([1, 2, 3, 4]), good.subarray(8)])],
  ['bad JSON', () => frame('{"rev":99,"op":')],
  ['an implausible length', () => Buffer.from([255, 255, 255, 255, 0, 0, 0, 0, 1])],
];

function frame(payload: string): Buffer {
  const body = Buffer.from(payload);
  const head = Buffer.alloc(8);
  head.writeUInt32LE(body.length, 0);
  head.writeUInt32LE(zlibCrc(body), 4);
  return Buffer.concat([head, body]);
}

for (const [what, tail] of tornTails) {
  test(`embedded backend drops a torn tail record (${what}) and accepts writes`, async (t) => {
    const dir = await tempDir(t);
    const first = await openAt(t, dir);
    await fill(first, 4);
    const before = await dump(first);
    await first.close();
    const path = segmentPath(dir, 1);
    const goodSize = (await stat(path)).size;
    const next = encodeRecord(
      { rev: before.revision + 1, op: 'put', key: 'doc/torn', createRevision: before.revision + 1 },
      '{"torn":true}',
    );
    await appendFile(path, tail(next));
    const second = await openAt(t, dir);
    t.deepEqual(await dump(second), before);
    t.is(second.recovery.tail?.droppedBytes, tail(next).length);
    t.is((await stat(path)).size, goodSize);
    await second.put('doc/after', 1);
    await second.close();
    const third = await openAt(t, dir);
    t.is((await third.get('doc/after'))?.modRevision, before.revision + 1);
    t.is(third.recovery.tail, undefined);
  });
}

test('embedded backend refuses to open when a sealed segment is corrupt in the middle', async (t) => {
  const dir = await tempDir(t);
  const first = await openAt(t, dir);
  await fill(first, 4);
  const rev = first.revision();
  await first.close();
  await writeFile(segmentPath(dir, 2), encodeRecord({ rev: rev + 1, op: 'put', key: 'later', createRevision: rev + 1 }, '1'));
  const seg1 = await readFile(segmentPath(dir, 1));
  seg1[20] = (seg1[20] ?? 0) ^ 0xff;
  await writeFile(segmentPath(dir, 1), seg1);
  const b = new EmbeddedBackend(dir);
  const err = await t.throwsAsync(b.open());
  t.regex(err.message, /journal segment .*journal\.1\.log is corrupt \(bad checksum at byte 0\); refusing to open/);
});

test('embedded backend refuses to open a journal with a revision gap', async (t) => {
  const dir = await tempDir(t);
  await writeFile(segmentPath(dir, 1), encodeRecord({ rev: 5, op: 'put', key: 'k', createRevision: 5 }, '1'));
  const err = await t.throwsAsync(new EmbeddedBackend(dir).open());
  t.regex(err.message, /does not follow on from what precedes it \(revision 5 does not follow 0\)/);
});

test('embedded backend compacts into a snapshot and deletes old segments', async (t) => {
  const dir = await tempDir(t);
  const b = await openAt(t, dir, { compactAfterBytes: 2048 });
  await fill(b, 100);
  await b.compact();
  const before = await dump(b);
  t.true((await stat(join(dir, 'snapshot.json'))).size > 0);
  t.deepEqual(await segmentFiles(dir), [`journal.${b.stats().activeSegment}.log`]);
  t.true(b.stats().activeSegment > 1);
  await b.close();
  const again = await openAt(t, dir);
  t.deepEqual(await dump(again), before);
  t.is(again.recovery.snapshotRevision, before.revision);
});

test('embedded backend keeps writes made while a compaction runs', async (t) => {
  const dir = await tempDir(t);
  const b = await openAt(t, dir, { compactAfterBytes: 1024 });
  await fill(b, 50);
  const during = Promise.all(Array.from({ length: 200 }, (_, i) => b.put(`during/${i}`, { i })));
  await Promise.all([b.compact(), during]);
  const before = await dump(b);
  t.is(before.items.filter((kv) => kv.key.startsWith('during/')).length, 200);
  await b.close();
  const again = await openAt(t, dir);
  t.deepEqual(await dump(again), before);
});

test('embedded backend opens after a crash between snapshot and segment deletion', async (t) => {
  const dir = await tempDir(t);
  const b = await openAt(t, dir);
  await fill(b, 10);
  const before = await dump(b);
  await b.close();
  t.is(await foldSegments(dir, [segmentPath(dir, 1)]), before.revision);
  await writeFile(join(dir, '.snapshot.json.tmp'), '{"half a snap');
  const again = await openAt(t, dir);
  t.deepEqual(await dump(again), before);
  t.is(again.recovery.replayed, 0);
});

test('embedded backend group-commits concurrent writes into few fdatasyncs', async (t) => {
  const dir = await tempDir(t);
  const b = await openAt(t, dir);
  const revs = await Promise.all(Array.from({ length: 500 }, (_, i) => b.put(`k/${i}`, { i })));
  t.deepEqual(
    revs,
    Array.from({ length: 500 }, (_, i) => i + 1),
  );
  t.true(b.stats().syncs <= 5, `${b.stats().syncs} syncs for 500 writes`);
  await b.close();
  const again = await openAt(t, dir);
  t.is((await again.list('k/')).items.length, 500);
  t.is(again.revision(), 500);
});

test('embedded backend writes a batch larger than its write buffer, and a record larger still', async (t) => {
  const dir = await tempDir(t);
  const first = await openAt(t, dir);
  const writes = Array.from({ length: 600 }, (_, i) => first.put(`doc/${i}`, { i, text: 'ü'.repeat(300 + i) }));
  writes.push(first.put('doc/big', { text: 'x'.repeat(700 * 1024) }));
  await Promise.all(writes);
  const before = await dump(first);
  t.true(first.stats().syncs < 20, `${first.stats().syncs} fdatasyncs for 601 writes`);
  await first.close();
  const second = await openAt(t, dir);
  t.deepEqual(await dump(second), before);
  t.is(second.recovery.replayed, 601);
  t.is(second.recovery.tail, undefined);
});

test('embedded backend refuses writes after close and reads before open', async (t) => {
  const dir = await tempDir(t);
  const b = new EmbeddedBackend(dir);
  await t.throwsAsync(b.get('k'), { message: 'store is not open' });
  await b.open();
  await b.close();
  await t.throwsAsync(b.put('k', 1), { message: 'store is closed' });
});

test('embedded backend close flushes writes still in flight', async (t) => {
  const dir = await tempDir(t);
  const b = await openAt(t, dir);
  const writes = Array.from({ length: 50 }, (_, i) => b.put(`k/${i}`, i));
  await b.close();
  t.is((await Promise.all(writes)).length, 50);
  const again = await openAt(t, dir);
  t.is((await again.list('k/')).items.length, 50);
});

test('embedded backend refuses a directory locked by a live process and takes over a dead one', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'LOCK'), `${process.ppid}\n`);
  const err = await t.throwsAsync(new EmbeddedBackend(dir).open());
  t.is(err.message, `store ${dir} is in use by process ${process.ppid}; if that process is not Quarry, remove ${join(dir, 'LOCK')}`);
  await writeFile(join(dir, 'LOCK'), '999999999\n');
  const b = await openAt(t, dir);
  t.is(b.revision(), 0);
  t.is((await readFile(join(dir, 'LOCK'), 'utf8')).trim(), String(process.pid));
});
