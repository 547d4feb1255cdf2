// The label BlueStore writes at the head of an OSD's device (Ceph's bluestore_bdev_label_t):
// which OSD the disk holds and of which cluster. The agent reads it to report a disk's OSD in
// its inventory (adoption), to start an OSD again on a disk that already holds it (no mkfs),
// and to check that a wipe left no label behind.
//
// The 4 KiB block, as Ceph encodes it (src/os/bluestore/bluestore_types.cc):
//   "bluestore block device\n" <osd uuid, 36 characters> "\n"     (60 bytes of plain text)
//   u8 struct_v, u8 compat, u32 length                           (ENCODE_START)
//   16 bytes osd uuid, u64 size, u32+u32 btime, string description, map<string,string> meta
//   u32 crc32c of everything before it (seed -1, no final xor)
// Integers little-endian; a string is a u32 length and its bytes. The meta map holds
// `ceph_fsid`, `whoami`, `mkfs_done`, `ready` and, when mkfs was given one, the OSD's key (`osd_key`):
// only the fields named below are kept, so no key leaves this file.
// Since Ceph 19 the main device has copies of the label at 1, 10, 100 and 1000 GiB.
import { open } from 'node:fs/promises';

export const LABEL_BLOCK_BYTES = 4096;
/** Where any Ceph release keeps a copy of the label (bdev_label_positions). */
export const LABEL_OFFSETS: readonly number[] = [0, 2 ** 30, 10 * 2 ** 30, 100 * 2 ** 30, 1000 * 2 ** 30];
export const LABEL_MAGIC = 'bluestore block device\n';
const TEXT_BYTES = 60;
/** A meta map larger than this is not a label (a real one has about 15 entries). */
const MAX_META_ENTRIES = 256;

export interface BluestoreLabel {
  osdUuid: string;
  /** The device size recorded at mkfs. */
  sizeBytes: number;
  /** "main" for an OSD's block device (db and wal devices have labels too). */
  description: string;
  /** The cluster's fsid (`ceph_fsid`), when recorded. */
  cephFsid: string | null;
  /** The OSD id (`whoami`), when recorded. */
  whoami: number | null;
  /** mkfs finished, the store's and the OSD's (`mkfs_done: yes`, `ready: ready`): an OSD can
   * start from this disk as it is. */
  complete: boolean;
}

/** A block that starts like a label but is not a whole, intact one. */
export class LabelError extends Error {}

/** Whether a block starts with the label's magic (what a wipe must leave nowhere). */
export const hasLabelMagic = (block: Buffer): boolean => block.subarray(0, LABEL_MAGIC.length).toString('latin1') === LABEL_MAGIC;

/** The label in a block read from a device: null when the block does not start with the
 * magic; a LabelError when it does but is truncated, malformed or fails its checksum. */
export function parseLabel(block: Buffer): BluestoreLabel | null {
  if (!hasLabelMagic(block)) return null;
  const r = new Reader(block.subarray(0, LABEL_BLOCK_BYTES));
  r.skip(TEXT_BYTES);
  const structV = r.u8();
  r.u8(); // compat
  const length = r.u32();
  const bodyStart = r.pos;
  if (bodyStart + length + 4 > r.end) throw new LabelError(`label body of ${length} bytes does not fit in ${LABEL_BLOCK_BYTES}`);
  const stored = block.readUInt32LE(bodyStart + length);
  if (crc32c(block.subarray(0, bodyStart + length)) !== stored) throw new LabelError('label checksum does not match');
  const body = new Reader(block.subarray(0, bodyStart + length), bodyStart);
  const osdUuid = uuidOf(body.bytes(16));
  const sizeBytes = Number(body.u64());
  body.skip(8); // btime
  const description = body.string();
  const meta = new Map<string, string>();
  if (structV >= 2) {
    const n = body.u32();
    if (n > MAX_META_ENTRIES) throw new LabelError(`label meta has ${n} entries`);
    for (let i = 0; i < n; i++) {
      const key = body.string();
      const value = body.string();
      if (KEPT.has(key)) meta.set(key, value);
    }
  }
  const text = block.subarray(LABEL_MAGIC.length, TEXT_BYTES - 1).toString('latin1');
  if (text !== osdUuid) throw new LabelError(`label text names ${JSON.stringify(text)}, its body ${osdUuid}`);
  const whoami = meta.get('whoami');
  return {
    osdUuid,
    sizeBytes,
    description,
    cephFsid: meta.get('ceph_fsid') ?? null,
    whoami: whoami !== undefined && /^\d{1,10}$/.test(whoami) ? Number(whoami) : null,
    complete: meta.get('mkfs_done') === 'yes' && meta.get('ready') === 'ready',
  };
}

const KEPT = new Set(['ceph_fsid', 'whoami', 'mkfs_done', 'ready']);

/** Reads under way, by device: a dying disk can leave one hanging in the kernel for minutes,
 * holding one of libuv's few threads, so a caller that comes back often (the inventory, every
 * heartbeat) must not start another on that disk (readPending). */
const pending = new Map<string, number>();
export const readPending = (device: string): boolean => pending.has(device);

/** Reads the 4 KiB at `offset` of a device (or of a regular file standing in for one); a
 * device shorter than that gives what is there. Gives up after `timeoutMs` (the read itself
 * goes on until the kernel returns: readPending says so meanwhile). */
export async function readBlock(device: string, offset = 0, timeoutMs = 5_000): Promise<Buffer> {
  pending.set(device, (pending.get(device) ?? 0) + 1);
  const read = (async () => {
    const fh = await open(device, 'r');
    try {
      const buf = Buffer.alloc(LABEL_BLOCK_BYTES);
      const { bytesRead } = await fh.read(buf, 0, LABEL_BLOCK_BYTES, offset);
      return buf.subarray(0, bytesRead);
    } finally {
      await fh.close();
    }
  })().finally(() => {
    const n = (pending.get(device) ?? 1) - 1;
    if (n > 0) pending.set(device, n);
    else pending.delete(device);
  });
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`reading ${device} at ${offset} took over ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    return await Promise.race([read, late]);
  } finally {
    clearTimeout(timer);
    read.catch(() => undefined); // its failure after the deadline is nobody's to handle
  }
}

/** The label at the head of a device, or null. */
export const readLabel = async (device: string, timeoutMs?: number): Promise<BluestoreLabel | null> =>
  parseLabel(await readBlock(device, 0, timeoutMs));

/** "1 GiB" for a label offset, "the head" for 0. */
export const offsetName = (offset: number): string => (offset === 0 ? 'the head' : `${offset / 2 ** 30} GiB`);

class Reader {
  readonly end: number;
  constructor(
    private readonly buf: Buffer,
    public pos = 0,
  ) {
    this.end = buf.length;
  }
  private need(n: number): void {
    if (this.pos + n > this.end) throw new LabelError('label is truncated');
  }
  skip(n: number): void {
    this.need(n);
    this.pos += n;
  }
  u8(): number {
    this.need(1);
    return this.buf.readUInt8(this.pos++);
  }
  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32LE(this.pos);
    this.pos += 4;
    return v;
  }
  u64(): bigint {
    this.need(8);
    const v = this.buf.readBigUInt64LE(this.pos);
    this.pos += 8;
    return v;
  }
  bytes(n: number): Buffer {
    this.need(n);
    const v = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return v;
  }
  string(): string {
    return this.bytes(this.u32()).toString('utf8');
  }
}

function uuidOf(b: Buffer): string {
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

// CRC-32C (Castagnoli), as Ceph's bufferlist::crc32c(-1): seed all ones, no final inversion.
const CRC_TABLE = (() => {
  const t = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    t[n] = c >>> 0;
  }
  return t;
})();

export function crc32c(data: Uint8Array, seed = 0xffffffff): number {
  let c = seed >>> 0;
  for (const x of data) c = (CRC_TABLE[(c ^ x) & 0xff]! ^ (c >>> 8)) >>> 0;
  return c >>> 0;
}
