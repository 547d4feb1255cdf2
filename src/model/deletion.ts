// The questions asked before a data-bearing deletion (a filesystem with its pools, an RGW user
// with its buckets), in one place: the loops ask them with what Ceph says at that moment, and a
// plan (POST /specs/plan) shows them with what the stored status knows. Pure.

/** A pool or bucket and, when known, what it holds. */
export interface Holding {
  name: string;
  objects?: number;
  bytes?: number;
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'] as const;

/** 1536 → "1.5 KiB"; bytes below 1 KiB as they are. */
export function bytesText(n: number): string {
  let v = n;
  let i = 0;
  while (v >= 1024 && i < UNITS.length - 1) {
    v /= 1024;
    i += 1;
  }
  return i === 0 ? `${n} B` : `${v.toFixed(v < 10 ? 1 : 0)} ${UNITS[i]}`;
}

const count = (n: number, one: string): string => `${n} ${one}${n === 1 ? '' : 's'}`;

function holding(kind: string, h: Holding): string {
  const known = [h.objects === undefined ? null : count(h.objects, 'object'), h.bytes === undefined ? null : bytesText(h.bytes)].filter(
    (x) => x !== null,
  );
  return `${kind} ${h.name}${known.length ? ` (${known.join(', ')})` : ''}`;
}

function total(items: Holding[]): string {
  if (items.length === 0 || items.some((h) => h.objects === undefined || h.bytes === undefined)) return '';
  const objects = items.reduce((n, h) => n + (h.objects ?? 0), 0);
  const bytes = items.reduce((n, h) => n + (h.bytes ?? 0), 0);
  return ` In all ${count(objects, 'object')}, ${bytesText(bytes)}.`;
}

/** `pools`: the filesystem's metadata and data pools, with what Ceph says they hold (when it
 * said). `note`: why the numbers are missing, if they are. */
export function fsDeletionQuestion(name: string, pools: Holding[], note?: string): string {
  const what = pools.length ? pools.map((p) => holding('pool', p)).join(' and ') : 'no pools (Ceph lists none of its pools)';
  return (
    `Delete filesystem ${name} with its pools? This destroys the filesystem and ${what}, every file in them.` +
    total(pools) +
    (note ? ` (${note})` : '') +
    ' "no" keeps it.'
  );
}

/** `buckets`: the user's buckets as RGW lists them (null: not known). */
export function rgwUserDeletionQuestion(userId: string, buckets: Holding[] | null, note?: string): string {
  const what =
    buckets === null
      ? 'its buckets (as RGW lists them when asked)'
      : buckets.length === 0
        ? 'no buckets (it owns none)'
        : `${count(buckets.length, 'bucket')}: ${buckets.map((b) => holding('bucket', b)).join(', ')}`;
  return (
    `Delete RGW user ${userId} with its data? This destroys the user, its keys and ${what}, every object in them.` +
    (buckets ? total(buckets) : '') +
    (note ? ` (${note})` : '') +
    ' "no" keeps it.'
  );
}
