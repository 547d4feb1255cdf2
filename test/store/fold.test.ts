// The byte-level fold must write the same snapshot the parsing fold writes.
import test, { type ExecutionContext } from 'ava';
import { mkdtemp, readFile, rm, writeFile, cp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { foldSegmentsBytes, scanSnapshot } from '../../src/store/fold.js';
import { encodeRecord, segmentPath } from '../../src/store/journal.js';
import { foldSegments, readSnapshot, writeSnapshot, SNAPSHOT_FILE } from '../../src/store/snapshot.js';
import type { Mutation } from '../../src/store/core.js';

const tricky = { text: 'a}b{"c"\\', list: [{ x: '[' }, 2, null], unicode: 'ünï ☃', nested: { deep: { deeper: [] } } };

async function fixture(t: ExecutionContext): Promise<{ dir: string; segments: string[] }> {
  const dir = await mkdtemp(join(tmpdir(), 'qmem-fold-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeSnapshot(dir, {
    revision: 3,
    items: {
      'Node/a': { value: { n: 1, tricky }, createRevision: 1, modRevision: 1 },
      'Node/"q\\uote"': { value: 'plain', createRevision: 2, modRevision: 2 },
      'Disk/gone': { value: { d: true }, createRevision: 3, modRevision: 3 },
    },
  });
  const records: Array<[Mutation, unknown?]> = [
    [{ rev: 2, op: 'put', key: 'Node/old', createRevision: 2 }, { skipped: 'at or below the snapshot' }],
    [
      { rev: 4, op: 'put', key: 'Node/a', createRevision: 1 },
      { n: 2, tricky },
    ],
    [{ rev: 5, op: 'del', key: 'Disk/gone' }],
    [{ rev: 6, op: 'put', key: 'Disk/new ☃', createRevision: 6 }, { made: ',"value":' }],
    [{ rev: 7, op: 'put', key: 'Node/a', createRevision: 1 }, { n: 3 }],
    // An old record without createRevision keeps the one the snapshot had.
    [{ rev: 8, op: 'put', key: 'Node/"q\\uote"' }, 'changed'],
  ];
  const frames = records.map(([m, v]) => encodeRecord(m, v === undefined ? undefined : JSON.stringify(v)));
  const segments = [segmentPath(dir, 1), segmentPath(dir, 2)];
  await writeFile(segments[0]!, Buffer.concat(frames.slice(0, 3)));
  await writeFile(segments[1]!, Buffer.concat(frames.slice(3)));
  return { dir, segments };
}

test('fold: the byte-level fold writes what the parsing fold writes', async (t) => {
  const a = await fixture(t);
  const b = await mkdtemp(join(tmpdir(), 'qmem-fold-copy-'));
  t.teardown(() => rm(b, { recursive: true, force: true }));
  await cp(a.dir, b, { recursive: true });
  const segmentsB = a.segments.map((s) => join(b, s.slice(a.dir.length + 1)));
  t.is(await foldSegments(a.dir, a.segments), 8);
  t.is(await foldSegmentsBytes(b, segmentsB), 8);
  const [parsed, bytes] = [await readSnapshot(a.dir), await readSnapshot(b)];
  t.deepEqual(bytes, parsed);
  t.deepEqual(bytes.items['Node/a'], { value: { n: 3 }, createRevision: 1, modRevision: 7 });
  t.deepEqual(bytes.items['Node/"q\\uote"'], { value: 'changed', createRevision: 2, modRevision: 8 });
  t.false('Disk/gone' in bytes.items);
  t.deepEqual(bytes.items['Disk/new ☃']?.value, { made: ',"value":' });
  // Folding again changes nothing and keeps the layout the byte fold reads.
  t.is(await foldSegmentsBytes(b, segmentsB), 8);
  t.not(scanSnapshot(await readFile(join(b, SNAPSHOT_FILE))), null);
});

test('fold: a snapshot in another layout is left to the parsing fold', async (t) => {
  const { dir, segments } = await fixture(t);
  const pretty = JSON.stringify(await readSnapshot(dir), null, 2);
  await writeFile(join(dir, SNAPSHOT_FILE), pretty);
  t.is(await foldSegmentsBytes(dir, segments), null);
  t.is(await readFile(join(dir, SNAPSHOT_FILE), 'utf8'), pretty, 'untouched');
  t.is(await foldSegments(dir, segments), 8);
});

test('fold: without a snapshot file the segments alone make one', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'qmem-fold-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const seg = segmentPath(dir, 1);
  await writeFile(
    seg,
    Buffer.concat([
      encodeRecord({ rev: 1, op: 'put', key: 'Node/x', createRevision: 1 }, '{"a":1}'),
      encodeRecord({ rev: 2, op: 'put', key: 'Node/y' }, '[]'),
    ]),
  );
  t.is(await foldSegmentsBytes(dir, [seg]), 2);
  t.deepEqual(await readSnapshot(dir), {
    revision: 2,
    items: { 'Node/x': { value: { a: 1 }, createRevision: 1, modRevision: 1 }, 'Node/y': { value: [], createRevision: 2, modRevision: 2 } },
  });
});
