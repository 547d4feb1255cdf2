// Capacity: what each OSD holds and what `ceph df` derives from it. A fresh BlueStore OSD
// already shows its RocksDB/BlueFS space as used: 14.19 % of the recorded 2 GiB OSDs
// (test/fixtures/ceph/df.json), about 1 GiB on a real-sized disk. Pool data lands on the OSDs
// its PGs map to, once per replica: a PG's share (its pool's bytes over pg_num) is on every OSD
// of its acting set (an out OSD it is still moving off included), and stays on a mapped OSD that
// went down, whose last report counts until it is marked out.
import { GiB, type DeviceClass, type SimOsd, type SimPool } from './model.js';
import type { SimPg } from './placement.js';

/** total_used_raw_ratio of the recorded fresh cluster (2 × 2 GiB OSDs). */
const FRESH_OSD_USED_RATIO = 0.14189624786376953;

export const bluestoreOverhead = (sizeBytes: number): number => Math.min(GiB, Math.round(sizeBytes * FRESH_OSD_USED_RATIO));

export interface Capacity {
  totalBytes: number;
  usedBytes: number;
  availBytes: number;
}

export interface PoolUsage {
  stored: number;
  objects: number;
  bytesUsed: number;
  percentUsed: number;
  maxAvail: number;
}

export interface OsdUsage extends Capacity {
  /** Pool data on it, without BlueStore's own (kb_used_data). */
  dataBytes: number;
  /** BlueStore's RocksDB/BlueFS space (kb_used_meta). */
  metaBytes: number;
}

export interface Usage extends Capacity {
  /** Per OSD that reports stats (booted and in): an out OSD's stats are dropped by the mgr
   * (zeros in `osd df`, as recorded), whatever it still holds. */
  osds: Map<number, OsdUsage>;
  byClass: Map<DeviceClass, Capacity>;
  pools: Map<number, PoolUsage>;
}

export function usageOf(osds: SimOsd[], pools: SimPool[], pgs: SimPg[], fullRatio: number): Usage {
  // A down OSD's last stats stay until it is marked out; an OSD that never booted has none.
  const reporting = osds.filter((o) => o.booted && o.in);
  const data = new Map<number, number>(reporting.map((o) => [o.id, 0]));
  const down = new Set(osds.filter((o) => !o.up).map((o) => o.id));
  for (const pg of pgs) {
    const share = pg.pool.storedBytes / pg.pool.pgNum;
    const holders = new Set([...pg.acting, ...pg.mapped.filter((id) => down.has(id))]);
    for (const id of holders) if (data.has(id)) data.set(id, (data.get(id) ?? 0) + share);
  }
  const perOsd = new Map<number, OsdUsage>();
  const byClass = new Map<DeviceClass, Capacity>();
  const total: Capacity = { totalBytes: 0, usedBytes: 0, availBytes: 0 };
  for (const o of reporting) {
    const metaBytes = bluestoreOverhead(o.sizeBytes);
    const dataBytes = Math.min(o.sizeBytes - metaBytes, Math.round(data.get(o.id) ?? 0));
    const u = metaBytes + dataBytes;
    const c: OsdUsage = { totalBytes: o.sizeBytes, usedBytes: u, availBytes: o.sizeBytes - u, dataBytes, metaBytes };
    perOsd.set(o.id, c);
    add(total, c);
    const cls = byClass.get(o.deviceClass) ?? { totalBytes: 0, usedBytes: 0, availBytes: 0 };
    byClass.set(o.deviceClass, cls);
    add(cls, c);
  }
  const rawAvail = maxRawAvail(reporting, perOsd, fullRatio);
  const poolUsage = new Map<number, PoolUsage>();
  for (const p of pools) {
    const bytesUsed = Math.round(p.storedBytes * p.size);
    const maxAvail = Math.floor(rawAvail / p.size);
    const denominator = bytesUsed + maxAvail * p.size;
    poolUsage.set(p.id, {
      stored: Math.round(p.storedBytes),
      objects: p.objects,
      bytesUsed,
      percentUsed: denominator === 0 ? 0 : bytesUsed / denominator,
      maxAvail,
    });
  }
  return { ...total, osds: perOsd, byClass, pools: poolUsage };
}

function add(into: Capacity, c: Capacity): void {
  into.totalBytes += c.totalBytes;
  into.usedBytes += c.usedBytes;
  into.availBytes += c.availBytes;
}

/** Ceph's get_rule_avail: the first OSD to reach full_ratio bounds what can still be written,
 * scaled by its share of the CRUSH weight. Divided by a pool's size, it is max_avail. */
function maxRawAvail(osds: SimOsd[], perOsd: Map<number, Capacity>, fullRatio: number): number {
  const weight = osds.reduce((s, o) => s + o.crushWeight, 0);
  if (weight <= 0) return 0;
  let min = Infinity;
  for (const o of osds) {
    const c = perOsd.get(o.id);
    if (!c || o.crushWeight <= 0) continue;
    const room = Math.max(0, fullRatio * c.totalBytes - c.usedBytes);
    min = Math.min(min, room / (o.crushWeight / weight));
  }
  return Number.isFinite(min) ? min : 0;
}
