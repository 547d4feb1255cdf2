// A verified wipe (`disk.wipe`, and `ceph.osd.zap` of a removed OSD): every signature goes, and the
// disk is read back to prove it. wipefs alone leaves what it does not know, a partition table's
// backup at the end of the disk, and the copies of the BlueStore label that Ceph 19 and later
// keep at 1, 10, 100 and 1000 GiB (a disk wiped at its head only is still refused later, "holds
// an OSD"). So: wipefs --all; zeroes over the head (16 MiB: partition tables, the label, BlueFS's
// superblock), the last MiB (GPT's backup) and each label copy the disk is large enough for;
// then `blkid -p` must find nothing and no label offset may start with the label's magic. What
// is still found, and where, fails the step: the disk is never reported wiped when it is not.
import { readFile, stat } from 'node:fs/promises';
import { CommandError } from '../errors.js';
import { LABEL_BLOCK_BYTES, LABEL_OFFSETS, hasLabelMagic, offsetName, readBlock } from './bluestore-label.js';
import type { AgentStepContext } from './steps/context.js';
import { tool } from './steps/context.js';

const MiB = 2 ** 20;
/** How much of the head is zeroed. */
export const WIPE_HEAD_BYTES = 16 * MiB;
/** How much of the end is zeroed (GPT keeps its backup header in the last sectors). */
export const WIPE_TAIL_BYTES = MiB;

export interface ZeroRange {
  offset: number;
  length: number;
  what: string;
}

/** The ranges a wipe zeroes on a disk of `size` bytes, in order, none beyond the end. */
export function wipeRanges(size: number): ZeroRange[] {
  const head = Math.min(WIPE_HEAD_BYTES, size);
  const out: ZeroRange[] = [{ offset: 0, length: head, what: 'the head (partition table, BlueStore label and superblock)' }];
  const tail = Math.min(WIPE_TAIL_BYTES, size);
  if (size - tail >= head) out.push({ offset: size - tail, length: tail, what: 'the end (the backup partition table)' });
  for (const offset of LABEL_OFFSETS)
    if (offset >= head && offset + LABEL_BLOCK_BYTES <= size && !(offset >= size - tail && size - tail >= head))
      out.push({ offset, length: LABEL_BLOCK_BYTES, what: `the BlueStore label copy at ${offsetName(offset)}` });
  return out;
}

/** dd's arguments zeroing a range: the largest block size up to 1 MiB dividing both its offset
 * and its length (offsets in blocks, so any coreutils will do). */
export function ddArgs(device: string, r: ZeroRange): string[] {
  let bs = MiB;
  while (bs > 1 && (r.offset % bs !== 0 || r.length % bs !== 0)) bs /= 2;
  return [
    'if=/dev/zero',
    `of=${device}`,
    `bs=${bs}`,
    ...(r.offset > 0 ? [`seek=${r.offset / bs}`] : []),
    `count=${r.length / bs}`,
    'conv=fsync,notrunc',
    'status=none',
  ];
}

/** The size of a disk: `blockdev --getsize64` for a block device, the length of a regular file
 * standing in for one (a test's disk image). */
export async function diskSize<A>(ctx: AgentStepContext<A>, device: string): Promise<{ size: number; block: boolean }> {
  const st = await stat(device).catch(() => {
    throw new Error(`no disk at ${device} on this node`);
  });
  if (st.isFile()) return { size: st.size, block: false };
  if (!st.isBlockDevice()) throw new Error(`${device} is not a block device`);
  const out = (await tool(ctx, 'blockdev', ['--getsize64', device])).stdout.trim();
  if (!/^\d+$/.test(out)) throw new Error(`blockdev --getsize64 ${device} printed ${JSON.stringify(out.slice(0, 80))}, not a size`);
  return { size: Number(out), block: true };
}

export async function verifiedWipe<A>(ctx: AgentStepContext<A>, device: string): Promise<void> {
  if (await mounted(device)) throw new Error(`${device} is mounted`);
  // wipefs first: on a missing or odd device it fails saying why, before anything is measured.
  ctx.log('info', `${device}: erasing every signature wipefs knows`);
  await tool(ctx, 'wipefs', ['--all', device]);
  const { size, block } = await diskSize(ctx, device);
  ctx.log('info', `${device}: ${size} bytes`);
  for (const r of wipeRanges(size)) {
    ctx.log('info', `${device}: zeroing ${r.what}, ${r.length} bytes at ${r.offset}`);
    await tool(ctx, 'dd', ddArgs(device, r));
  }
  // Drop the kernel's cached copy so the read-back reads what the disk holds.
  if (block) await tool(ctx, 'blockdev', ['--flushbufs', device]);
  const found = await leftovers(ctx, device, size);
  if (found.length > 0) throw new Error(`${device} is not blank after the wipe: ${found.join('; ')}`);
  ctx.log('info', `${device}: verified blank (blkid finds nothing, no BlueStore label at ${checkedOffsets(size)})`);
}

/** What a read-back still finds: blkid's signatures, and the label's magic at any offset. */
export async function leftovers<A>(ctx: AgentStepContext<A>, device: string, size: number): Promise<string[]> {
  const found: string[] = [];
  const sig = await blkid(ctx, device);
  if (sig) found.push(`blkid finds ${sig}`);
  for (const offset of labelOffsets(size))
    if (hasLabelMagic(await readBlock(device, offset))) found.push(`a BlueStore label at ${offsetName(offset)} (offset ${offset})`);
  return found;
}

const labelOffsets = (size: number): number[] => LABEL_OFFSETS.filter((o) => o + LABEL_BLOCK_BYTES <= size);
const checkedOffsets = (size: number): string => labelOffsets(size).map(offsetName).join(', ');

/** The signatures `blkid -p` finds (TYPE, PTTYPE), or null: it exits 2 when it finds none. */
export async function blkid<A>(ctx: AgentStepContext<A>, device: string): Promise<string | null> {
  try {
    const { stdout } = await tool(ctx, 'blkid', ['-p', '-o', 'export', device]);
    const types = [...stdout.matchAll(/^(?:TYPE|PTTYPE)=(.*)$/gm)].map((m) => m[1]!);
    return types.length > 0 ? types.join(', ') : 'a signature';
  } catch (err) {
    if (err instanceof CommandError && err.exitCode === 2) return null;
    throw err;
  }
}

async function mounted(device: string): Promise<boolean> {
  const mounts = await readFile('/proc/mounts', 'utf8').catch(() => '');
  // The disk itself, or one of its partitions (sdb1, nvme0n1p1, loop0p1).
  const part = (src: string): boolean => src.startsWith(device) && /^p?\d+$/.test(src.slice(device.length));
  return mounts.split('\n').some((l) => {
    const src = l.split(' ')[0] ?? '';
    return src === device || part(src);
  });
}
