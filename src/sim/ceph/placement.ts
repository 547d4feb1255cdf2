// Placement groups: where CRUSH puts each PG and what state that leaves it in. Placement is a
// straw2 draw (weight-proportional, stable when devices come and go) over failure domains,
// then over the OSDs inside the chosen one, as CRUSH's chooseleaf does. Peering and recovery
// from surviving replicas are instant here: a PG's state follows from which of its OSDs are
// up. Data moving off an OSD marked out while up takes time: backfill.ts overlays that.
import type { SimOsd, SimPool } from './model.js';

export interface SimPg {
  pgid: string;
  pool: SimPool;
  /** The CRUSH mapping, primary first: in OSDs, up or not. */
  mapped: number[];
  /** The mapped OSDs that are up (Ceph's up set). */
  up: number[];
  /** The OSDs that hold the PG's data and serve it: the up set, or while it backfills off an
   * out OSD, the set it had before (pg_temp), that OSD included. */
  acting: number[];
  state: string;
}

// A 32-bit integer mix (murmur3's finaliser over three words): CRUSH's rjenkins stand-in.
function hash3(a: number, b: number, c: number): number {
  let h = Math.imul(a ^ 0x9e3779b9, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h ^ b, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h ^ c, 0x27d4eb2f);
  h ^= h >>> 15;
  return h >>> 0;
}

function stringId(s: string): number {
  let h = 2166136261;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
  return h | 0;
}

/** straw2: ln(u)/w with u uniform in (0, 1]; the highest draw wins. */
const straw2 = (x: number, id: number, r: number, weight: number): number => Math.log((hash3(x, id, r) + 1) / 4294967296) / weight;

interface Bucket {
  /** `host:NAME`, `osd:ID` or `TYPE:NAME`. */
  name: string;
  id: number;
  weight: number;
  osds: SimOsd[];
}

/** What placement reads of the CRUSH map beyond the OSDs: each pool's rule (the type it
 * separates replicas across, and a device class), and where a host sits. Without it every pool
 * takes the default rule across the given failure domain. */
export interface CrushView {
  /** The rule of a pool; undefined for the default rule (the `failureDomain` argument). */
  ruleOf(pool: SimPool): { type: string; deviceClass?: string } | undefined;
  /** The name of the bucket of `type` above a host; undefined when the host is under none. */
  domainOf(host: string, type: string): string | undefined;
}

/** A rule as placement uses it: the type replicas are spread across, and an optional class. */
interface Rule {
  key: string;
  type: string;
  deviceClass?: string;
}

function ruleFor(pool: SimPool, failureDomain: 'host' | 'osd', crush: CrushView | undefined): Rule {
  const r = crush?.ruleOf(pool);
  if (!r) return { key: failureDomain, type: failureDomain };
  return { key: `${r.type}~${r.deviceClass ?? ''}`, type: r.type, ...(r.deviceClass === undefined ? {} : { deviceClass: r.deviceClass }) };
}

/** The failure-domain bucket an OSD counts in for a rule; undefined: the rule never picks it
 * (CRUSH finds no bucket of that type above it, or another class). */
function bucketName(o: SimOsd, rule: Rule, crush: CrushView | undefined): string | undefined {
  if (rule.deviceClass !== undefined && o.deviceClass !== rule.deviceClass) return undefined;
  if (rule.type === 'osd') return `osd:${o.id}`;
  if (rule.type === 'host') return `host:${o.host ?? ''}`;
  const d = o.host === undefined ? undefined : crush?.domainOf(o.host, rule.type);
  return d === undefined ? undefined : `${rule.type}:${d}`;
}

function bucketsOf(osds: Iterable<SimOsd>, rule: Rule, crush: CrushView | undefined): Bucket[] {
  const byKey = new Map<string, Bucket>();
  for (const o of osds) {
    // Out OSDs have reweight 0 and never-booted ones are not in CRUSH: neither gets data.
    if (!o.in || o.host === undefined) continue;
    const key = bucketName(o, rule, crush);
    if (key === undefined) continue;
    let b = byKey.get(key);
    if (!b) {
      const id = rule.type === 'osd' ? o.id : rule.type === 'host' ? stringId(o.host) : stringId(key);
      b = { name: key, id, weight: 0, osds: [] };
      byKey.set(key, b);
    }
    b.weight += o.crushWeight;
    b.osds.push(o);
  }
  return [...byKey.values()];
}

/** Up to `size` OSDs in distinct failure domains for placement seed `x`. */
function choose(buckets: Bucket[], x: number, size: number): SimOsd[] {
  const best: { draw: number; b: Bucket }[] = [];
  for (const b of buckets) {
    const draw = straw2(x, b.id, 0, b.weight);
    if (best.length < size) best.push({ draw, b });
    else if (draw > (best[best.length - 1]?.draw ?? -Infinity)) best[best.length - 1] = { draw, b };
    else continue;
    best.sort((p, q) => q.draw - p.draw);
  }
  return best.map(({ b }) => {
    let pick = b.osds[0] as SimOsd;
    let top = -Infinity;
    for (const o of b.osds) {
      const d = straw2(x, o.id, 1, o.crushWeight);
      if (d > top) [top, pick] = [d, o];
    }
    return pick;
  });
}

/** The state Ceph would settle on for a PG mapped to `mapped` (primary first). */
export function pgState(mapped: SimOsd[], size: number, minSize: number): string {
  if (mapped.length === 0) return 'unknown';
  const up = mapped.filter((o) => o.up).length;
  // A mapped replica that is down holds the only copy of some writes: degraded. Too few
  // failure domains from the start is only undersized.
  const degraded = up < mapped.length;
  if (up === 0) return 'stale+undersized+degraded+peered';
  if (up < minSize) return `undersized+${degraded ? 'degraded+' : ''}peered`;
  if (up < size) return `active+undersized${degraded ? '+degraded' : ''}`;
  return 'active+clean';
}

export function mapPgs(osds: Iterable<SimOsd>, pools: Iterable<SimPool>, failureDomain: 'host' | 'osd', crush?: CrushView): SimPg[] {
  return new Placement().map(osds, pools, failureDomain, crush);
}

/** A PG as CRUSH put it, before up/down is looked at. */
interface Mapped {
  pgid: string;
  pool: SimPool;
  /** OSD ids, primary first. */
  mapped: number[];
}

interface BucketWeights {
  /** Its OSDs and their weights: what the draw inside it reads. */
  osds: string;
  weight: number;
}

const poolsKey = (pools: SimPool[], rules: Rule[]): string =>
  pools.map((p, i) => `${p.id}:${p.pgNum}:${p.size}:${rules[i]?.key}`).join(',');

/**
 * CRUSH placement kept between OSD map epochs, as Ceph's mapping only moves where the map moved.
 * Most epochs change nothing CRUSH reads (an OSD going up or down, a purge of an out OSD): the
 * mapping stays and only the up sets and states follow. When buckets only lose weight (an OSD
 * out or gone), straw2 moves nothing but what was on them (a lighter bucket's draw only falls):
 * only the PGs mapped into those buckets are drawn again. Anything else (an OSD in or booted, a
 * pool changed, a host moved into another rack) maps every PG. Buckets are counted per rule
 * (the failure domain a pool's rule spreads across). At 1,000 hosts a full mapping of a
 * 1024-PG pool costs ~60 ms, and a removal changes the map three times: the lab's removal
 * bench measured mostly this.
 */
export class Placement {
  private pgs: Mapped[] = [];
  private buckets = new Map<string, BucketWeights>();
  private pools = '';
  private domain: 'host' | 'osd' | null = null;

  private inputs: [number, number] | null = null;

  map(osds: Iterable<SimOsd>, pools: Iterable<SimPool>, failureDomain: 'host' | 'osd', crush?: CrushView): SimPg[] {
    const byId = new Map([...osds].map((o) => [o.id, o]));
    const poolList = [...pools];
    const rules = poolList.map((p) => ruleFor(p, failureDomain, crush));
    // What CRUSH reads, hashed (64 bits) in one pass: most epochs change none of it, and then not
    // even the buckets are built again.
    const inputs = crushInputs(byId.values(), poolList, rules, failureDomain, crush);
    if (this.inputs?.[0] === inputs[0] && this.inputs[1] === inputs[1]) return this.render(byId);
    this.inputs = inputs;
    const lists = new Map<string, { rule: Rule; buckets: Bucket[] }>();
    for (const rule of rules) if (!lists.has(rule.key)) lists.set(rule.key, { rule, buckets: bucketsOf(byId.values(), rule, crush) });
    const now = new Map<string, BucketWeights>();
    for (const [key, { buckets }] of lists)
      for (const b of buckets)
        now.set(`${key}|${b.name}`, { osds: b.osds.map((o) => `${o.id}:${o.crushWeight}`).join(','), weight: b.weight });
    const pk = poolsKey(poolList, rules);
    const lighter = this.onlyLighter(now, pk, failureDomain);
    if (lighter === null) this.pgs = mapAll(lists, poolList, rules);
    else if (lighter.size > 0) {
      const ruleOfPool = new Map(poolList.map((p, i) => [p.id, rules[i] as Rule]));
      this.pgs = this.pgs.map((pg) => {
        const rule = ruleOfPool.get(pg.pool.id) as Rule;
        const inLighter = (id: number): boolean => {
          const o = byId.get(id);
          const name = o === undefined ? undefined : bucketName(o, rule, crush);
          return name === undefined || lighter.has(`${rule.key}|${name}`);
        };
        return pg.mapped.some(inLighter) ? drawn(lists.get(rule.key)?.buckets ?? [], pg.pool, pg.pgid) : pg;
      });
    }
    this.buckets = now;
    this.pools = pk;
    this.domain = failureDomain;
    return this.render(byId);
  }

  /** The PGs with their up sets and states as the OSDs are now. */
  private render(byId: Map<number, SimOsd>): SimPg[] {
    return this.pgs.map(({ pgid, pool, mapped }) => {
      const chosen = mapped.map((id) => byId.get(id)).filter((o): o is SimOsd => o !== undefined);
      const up = chosen.filter((o) => o.up).map((o) => o.id);
      return { pgid, pool, mapped: chosen.map((o) => o.id), up, acting: up, state: pgState(chosen, pool.size, pool.minSize) };
    });
  }

  /** The buckets that lost weight since the last mapping, or null when any other change makes
   * a full mapping necessary (a bucket gained weight or appeared, the pools changed). */
  private onlyLighter(now: Map<string, BucketWeights>, pools: string, domain: 'host' | 'osd'): Set<string> | null {
    if (this.domain !== domain || this.pools !== pools) return null;
    const lighter = new Set<string>();
    for (const [name, b] of now) {
      const was = this.buckets.get(name);
      if (!was || b.weight > was.weight) return null;
      if (was.osds === b.osds) continue;
      // Lighter in all, but an OSD inside may be new or heavier: then everything is drawn again.
      const before = new Set(was.osds.split(','));
      if (!b.osds.split(',').every((e) => before.has(e))) return null;
      lighter.add(name);
    }
    for (const name of this.buckets.keys()) if (!now.has(name)) lighter.add(name);
    return lighter;
  }
}

/** Two independent 32-bit hashes over every input of placement: each in-CRUSH OSD's id, host,
 * class and weight, where its host sits for each rule's type, and each pool's id, PG count, size
 * and rule. */
function crushInputs(
  osds: Iterable<SimOsd>,
  pools: SimPool[],
  rules: Rule[],
  failureDomain: 'host' | 'osd',
  crush: CrushView | undefined,
): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x1b873593;
  const mix = (x: number): void => {
    a = hash3(a, x, 0x2545f491);
    b = hash3(b, x, 0x68e31da4);
  };
  mix(failureDomain === 'host' ? 1 : 2);
  // The buckets above hosts that the pools' rules spread across: where each host sits.
  const above = [...new Set(rules.map((r) => r.type))].filter((t) => t !== 'host' && t !== 'osd');
  for (const o of osds) {
    if (!o.in || o.host === undefined) continue;
    mix(o.id);
    mix(stringId(o.host));
    for (const type of above) mix(stringId(crush?.domainOf(o.host, type) ?? ''));
    mix(stringId(o.deviceClass));
    mix(Math.round(o.crushWeight * 65536));
  }
  mix(-1);
  pools.forEach((p, i) => {
    mix(p.id);
    mix(p.pgNum);
    mix(p.size);
    mix(stringId(rules[i]?.key ?? ''));
  });
  return [a, b];
}

function drawn(buckets: Bucket[], pool: SimPool, pgid: string): Mapped {
  const seed = Number.parseInt(pgid.slice(pgid.indexOf('.') + 1), 16);
  return { pgid, pool, mapped: choose(buckets, hash3(pool.id, seed, 0x5eed), pool.size).map((o) => o.id) };
}

function mapAll(lists: Map<string, { buckets: Bucket[] }>, pools: SimPool[], rules: Rule[]): Mapped[] {
  const out: Mapped[] = [];
  pools.forEach((pool, i) => {
    const buckets = lists.get((rules[i] as Rule).key)?.buckets ?? [];
    for (let seed = 0; seed < pool.pgNum; seed++) out.push(drawn(buckets, pool, `${pool.id}.${seed.toString(16)}`));
  });
  return out;
}

export const isActive = (state: string): boolean => state.split('+').includes('active') && !state.startsWith('stale');
export const isClean = (state: string): boolean => state === 'active+clean';
/** Ceph's active+clean test in safe-to-destroy: both flags, whatever else (active+clean+remapped). */
export const hasActiveClean = (state: string): boolean => {
  const w = state.split('+');
  return w.includes('active') && w.includes('clean');
};

/** pgs_by_state: each state with its count, most common first. */
export function countStates(pgs: SimPg[]): { state: string; count: number }[] {
  const counts = new Map<string, number>();
  for (const pg of pgs) counts.set(pg.state, (counts.get(pg.state) ?? 0) + 1);
  return [...counts].map(([state, count]) => ({ state, count })).sort((a, b) => b.count - a.count || a.state.localeCompare(b.state));
}
