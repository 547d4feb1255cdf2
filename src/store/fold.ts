// Folding sealed journal segments into the snapshot without turning either into objects. The
// compaction worker used to parse the whole snapshot and every record, then stringify it all
// again: at 50,000 documents that held ~300 MB in the worker while it ran, most of the
// process's peak memory. Here values stay bytes: the snapshot and the segments are Buffers
// (outside the JS heap), an item's value is a slice of one of them, and the new snapshot is
// written piece by piece. Only keys and record headers are parsed.
import { open, readFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { FILE_MODE, fsyncPath } from './journal.js';
import { SNAPSHOT_FILE } from './snapshot.js';

const HEADER = 8;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const VALUE_FIELD = Buffer.from(',"value":');
const ITEMS_START = /^\{"revision":(\d+),"items":\{/;

/** A key's newest state: a put (its value's JSON bytes) or a delete (null). */
type Latest = { value: Buffer; createRevision: number | undefined; modRevision: number } | null;

/** The snapshot's items as byte ranges, in file order, and its revision; null when the file
 * is not in the compact layout this module writes (then the caller parses it the slow way). */
export function scanSnapshot(buf: Buffer): { revision: number; items: Array<[string, Buffer]> } | null {
  const head = ITEMS_START.exec(buf.subarray(0, 64).toString('latin1'));
  if (!head?.[1]) return null;
  const items: Array<[string, Buffer]> = [];
  let p = head[0].length;
  while (p < buf.length && buf[p] !== CLOSE) {
    if (buf[p] !== QUOTE) return null;
    const keyEnd = stringEnd(buf, p);
    const key = JSON.parse(buf.toString('utf8', p, keyEnd)) as string;
    if (buf[keyEnd] !== 0x3a || buf[keyEnd + 1] !== OPEN) return null;
    const end = objectEnd(buf, keyEnd + 1);
    items.push([key, buf.subarray(keyEnd + 1, end)]);
    p = buf[end] === 0x2c ? end + 1 : end;
  }
  if (buf[p] !== CLOSE || buf[p + 1] !== CLOSE) return null;
  return { revision: Number(head[1]), items };
}

/** Index just past the closing quote of the JSON string starting at `start`. */
function stringEnd(buf: Buffer, start: number): number {
  let q = start;
  for (;;) {
    q = buf.indexOf(QUOTE, q + 1);
    if (q < 0) throw new Error('snapshot: unterminated string');
    let slashes = 0;
    while (buf[q - 1 - slashes] === BACKSLASH) slashes++;
    if (slashes % 2 === 0) return q + 1;
  }
}

/** Index just past the `}` matching the `{` at `start`, strings skipped. */
function objectEnd(buf: Buffer, start: number): number {
  let depth = 0;
  for (let p = start; p < buf.length; p++) {
    const c = buf[p];
    if (c === QUOTE) p = stringEnd(buf, p) - 1;
    else if (c === OPEN || c === 0x5b) depth++;
    else if (c === CLOSE || c === 0x5d) {
      depth--;
      if (depth === 0) return p + 1;
    }
  }
  throw new Error('snapshot: unterminated object');
}

/** Each segment's records reduced to the newest state per key, after `revision`. */
function latestOf(segments: Array<{ path: string; buf: Buffer }>, revision: number): { latest: Map<string, Latest>; revision: number } {
  const latest = new Map<string, Latest>();
  let rev = revision;
  for (const { path, buf } of segments) {
    for (let pos = 0; pos < buf.length;) {
      const len = buf.readUInt32LE(pos);
      const payload = buf.subarray(pos + HEADER, pos + HEADER + len);
      pos += HEADER + len;
      // The value is the record's last member (encodeRecord): the header before it is small.
      const at = payload.indexOf(VALUE_FIELD);
      const head = JSON.parse(at < 0 ? payload.toString('utf8') : `${payload.toString('utf8', 0, at)}}`) as {
        rev: number;
        op: string;
        key: string;
        createRevision?: number;
      };
      if (head.rev <= rev) continue;
      if (head.rev !== rev + 1) throw new Error(`${path}: revision ${head.rev} does not follow ${rev}`);
      rev = head.rev;
      if (head.op === 'del') latest.set(head.key, null);
      else if (at < 0) throw new Error(`${path}: put at revision ${head.rev} has no value`);
      else
        latest.set(head.key, {
          value: payload.subarray(at + VALUE_FIELD.length, payload.length - 1),
          createRevision: head.createRevision,
          modRevision: rev,
        });
    }
  }
  return { latest, revision: rev };
}

const itemBytes = (key: string, value: Buffer, createRevision: number, modRevision: number): Buffer[] => [
  Buffer.from(`${JSON.stringify(key)}:{"value":`),
  value,
  Buffer.from(`,"createRevision":${createRevision},"modRevision":${modRevision}}`),
];

/**
 * Folds sealed segments (already CRC-checked when they were opened) into the snapshot and
 * returns the new snapshot revision, or null when the snapshot is not in the compact layout.
 * The new file replaces the old one atomically (temp file, fsync, rename, fsync of the dir).
 */
export async function foldSegmentsBytes(dir: string, segmentPaths: string[]): Promise<number | null> {
  const snapPath = join(dir, SNAPSHOT_FILE);
  const snapBuf = await readFile(snapPath).catch((err: unknown) =>
    (err as NodeJS.ErrnoException).code === 'ENOENT' ? Buffer.from('{"revision":0,"items":{}}') : Promise.reject(err),
  );
  const snap = scanSnapshot(snapBuf);
  if (!snap) return null;
  const segments = await Promise.all(segmentPaths.map(async (path) => ({ path, buf: await readFile(path) })));
  const { latest, revision } = latestOf(segments, snap.revision);
  if (revision === snap.revision) return revision;
  const tmp = `${snapPath}.fold-tmp`;
  const fh = await open(tmp, 'w', FILE_MODE);
  try {
    await fh.chmod(FILE_MODE); // a temp file left by a killed fold keeps the mode it had
    let batch: Buffer[] = [];
    let bytes = 0;
    const emit = async (parts: Buffer[], comma: boolean): Promise<void> => {
      if (comma) parts.unshift(Buffer.from(','));
      for (const b of parts) bytes += b.length;
      batch.push(...parts);
      if (bytes >= 1 << 20) await flush();
    };
    const flush = async (): Promise<void> => {
      await fh.writev(batch);
      batch = [];
      bytes = 0;
    };
    await emit([Buffer.from(`{"revision":${revision},"items":{`)], false);
    let first = true;
    for (const [key, item] of snap.items) {
      const next = latest.get(key);
      if (next === undefined) await emit([Buffer.from(`${JSON.stringify(key)}:`), item], !first);
      else if (next !== null) {
        const created = next.createRevision ?? (JSON.parse(item.toString('utf8')) as { createRevision: number }).createRevision;
        await emit(itemBytes(key, next.value, created, next.modRevision), !first);
      } else continue;
      first = false;
      latest.delete(key);
    }
    for (const [key, next] of latest) {
      if (next === null) continue;
      await emit(itemBytes(key, next.value, next.createRevision ?? next.modRevision, next.modRevision), !first);
      first = false;
    }
    await emit([Buffer.from('}}')], false);
    await flush();
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, snapPath);
  await fsyncPath(dir);
  return revision;
}
