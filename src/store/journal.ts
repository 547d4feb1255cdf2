// Journal segments on disk: journal.<n>.log, each a run of records framed as
// [u32 LE payload length][u32 LE crc32 of payload][JSON payload]. The crc makes a torn or
// bit-flipped record detectable; the length makes the file walkable without a separator.
import { open, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { Mutation } from './core.js';

/** Files and directories of the store are its owner's alone, whatever the umask. */
export const FILE_MODE = 0o600;
export const DIR_MODE = 0o700;

const HEADER = 8;
/** Anything longer is taken as a damaged length field, not a record. */
const MAX_RECORD = 512 * 1024 * 1024;

export interface Segment {
  n: number;
  path: string;
}

export const segmentPath = (dir: string, n: number): string => join(dir, `journal.${n}.log`);

export async function listSegments(dir: string): Promise<Segment[]> {
  const out: Segment[] = [];
  for (const name of await readdir(dir)) {
    const m = /^journal\.(\d+)\.log$/.exec(name);
    if (m?.[1]) out.push({ n: Number(m[1]), path: join(dir, name) });
  }
  return out.sort((a, b) => a.n - b.n);
}

/** One mutation as the JSON a record holds, the value last (fold.ts finds it there). valueJson
 * is passed in already serialised so a value that is not JSON fails before the write is given
 * a revision. */
export function recordPayload(m: Mutation, valueJson?: string): string {
  let payload = `{"rev":${m.rev},"op":"${m.op}","key":${JSON.stringify(m.key)}`;
  if (m.createRevision !== undefined) payload += `,"createRevision":${m.createRevision}`;
  if (valueJson !== undefined) payload += `,"value":${valueJson}`;
  return `${payload}}`;
}

/** The bytes a framed payload takes. */
export const recordSize = (payload: string): number => HEADER + Buffer.byteLength(payload);

/** Frames `payload` into `buf` at `at` (room for recordSize(payload) there) and returns the
 * offset after it. */
export function frameInto(buf: Buffer, at: number, payload: string): number {
  const len = buf.write(payload, at + HEADER, 'utf8');
  buf.writeUInt32LE(len, at);
  buf.writeUInt32LE(crc32(buf.subarray(at + HEADER, at + HEADER + len)), at + 4);
  return at + HEADER + len;
}

/** Frames one mutation in a buffer of its own. */
export function encodeRecord(m: Mutation, valueJson?: string): Buffer {
  const payload = recordPayload(m, valueJson);
  const buf = Buffer.allocUnsafe(recordSize(payload));
  frameInto(buf, 0, payload);
  return buf;
}

export interface ScanResult {
  records: Mutation[];
  /** Bytes up to the end of the last good record. */
  goodBytes: number;
  /** Why scanning stopped early; undefined when the whole buffer was good. */
  problem?: string;
}

/** Walks records until the end or the first bad one. */
export function scanRecords(buf: Buffer): ScanResult {
  const records: Mutation[] = [];
  let pos = 0;
  while (pos < buf.length) {
    const bad = (problem: string): ScanResult => ({ records, goodBytes: pos, problem: `${problem} at byte ${pos}` });
    if (buf.length - pos < HEADER) return bad('short record header');
    const len = buf.readUInt32LE(pos);
    if (len > MAX_RECORD) return bad(`implausible record length ${len}`);
    if (buf.length - pos - HEADER < len) return bad('short record');
    const payload = buf.subarray(pos + HEADER, pos + HEADER + len);
    if (crc32(payload) !== buf.readUInt32LE(pos + 4)) return bad('bad checksum');
    const m = parseMutation(payload);
    if (!m) return bad('malformed record');
    records.push(m);
    pos += HEADER + len;
  }
  return { records, goodBytes: pos };
}

function parseMutation(payload: Buffer): Mutation | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload.toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof parsed !== 'object' || parsed === null) return undefined;
  const m = parsed as Partial<Mutation>;
  if (!Number.isInteger(m.rev) || typeof m.key !== 'string') return undefined;
  if (m.op !== 'put' && m.op !== 'del') return undefined;
  if (m.op === 'put' && !('value' in m)) return undefined;
  return m as Mutation;
}

export interface TailRepair {
  segment: string;
  droppedBytes: number;
  reason: string;
}

/** Reads a sealed segment; any damage is an error, since every byte of it was acknowledged. */
export async function readSealedSegment(path: string): Promise<Mutation[]> {
  const scan = scanRecords(await readFile(path));
  if (scan.problem) {
    throw new Error(
      `journal segment ${path} is corrupt (${scan.problem}); refusing to open: restore it from a backup or move it aside knowing its writes are lost`,
    );
  }
  return scan.records;
}

/** Reads the newest segment. A damaged tail there is a write that was never acknowledged
 * (a crash between write and fdatasync), so it is cut off and the file made durable again. */
export async function readLastSegment(path: string): Promise<{ records: Mutation[]; bytes: number; repair?: TailRepair }> {
  const buf = await readFile(path);
  const scan = scanRecords(buf);
  if (!scan.problem) return { records: scan.records, bytes: buf.length };
  const fh = await open(path, 'r+');
  try {
    await fh.truncate(scan.goodBytes);
    await fh.sync();
  } finally {
    await fh.close();
  }
  const repair = { segment: path, droppedBytes: buf.length - scan.goodBytes, reason: scan.problem };
  return { records: scan.records, bytes: scan.goodBytes, repair };
}

/** Makes a file's (or a directory's entries') state durable. */
export async function fsyncPath(path: string): Promise<void> {
  const fh = await open(path, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}
