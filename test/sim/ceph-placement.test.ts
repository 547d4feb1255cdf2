// The lab's CRUSH placement kept between OSD map epochs (Placement) must be exactly the mapping
// drawn from scratch, whatever sequence of map changes led there: the incremental path only
// redraws PGs of buckets that lost weight, and a wrong shortcut would move PGs Ceph keeps.
import test from 'ava';
import fc from 'fast-check';
import { Placement, mapPgs } from '../../src/sim/ceph/placement.js';
import type { SimOsd, SimPool } from '../../src/sim/ceph/model.js';

function osd(id: number, host: string, crushWeight = 1): SimOsd {
  return {
    id,
    uuid: `u${id}`,
    host,
    sizeBytes: 1,
    deviceClass: 'hdd',
    crushClass: true,
    crushWeight,
    up: true,
    in: true,
    autoOut: false,
    booted: true,
    destroyed: false,
    upFrom: 0,
    downAt: 0,
  };
}

const pool = (id: number, pgNum: number, size = 3): SimPool =>
  ({ id, name: `p${id}`, pgNum, size, minSize: 2, storedBytes: 0, objects: 0 }) as unknown as SimPool;

type Change =
  | { op: 'out' | 'in' | 'down' | 'up' | 'purge'; at: number }
  | { op: 'add'; host: number; weight: number }
  | { op: 'weight'; at: number; weight: number }
  | { op: 'pool' };

const change: fc.Arbitrary<Change> = fc.oneof(
  fc.record({ op: fc.constantFrom('out' as const, 'in' as const, 'down' as const, 'up' as const, 'purge' as const), at: fc.nat(99) }),
  fc.record({ op: fc.constant('add' as const), host: fc.nat(7), weight: fc.constantFrom(0.5, 1, 2) }),
  fc.record({ op: fc.constant('weight' as const), at: fc.nat(99), weight: fc.constantFrom(0.5, 1, 2) }),
  fc.record({ op: fc.constant('pool' as const) }),
);

/** One generated change of the OSD map, made to the test's OSDs and pools; `next` is the id the
 * next OSD added takes. Rack-only changes (moves, rules) are the rack test's own. */
function applyChange(c: RackChange, osds: Map<number, SimOsd>, pools: Map<number, SimPool>, next: { id: number }): void {
  const ids = [...osds.keys()];
  const o = 'at' in c && ids.length > 0 ? osds.get(ids[c.at % ids.length]!)! : undefined;
  if (c.op === 'out' && o) o.in = false;
  if (c.op === 'in' && o) o.in = true;
  if (c.op === 'down' && o) o.up = false;
  if (c.op === 'up' && o) o.up = true;
  if (c.op === 'purge' && o) osds.delete(o.id);
  if (c.op === 'weight' && o) o.crushWeight = c.weight;
  if (c.op === 'add') osds.set(next.id, osd(next.id++, `h${c.host}`, c.weight));
  if (c.op === 'pool') pools.set(pools.size + 1, pool(pools.size + 1, 8));
}

test('sim placement: kept between map changes, it equals the mapping drawn from scratch after any sequence', (t) => {
  fc.assert(
    fc.property(fc.constantFrom('host' as const, 'osd' as const), fc.array(change, { maxLength: 25 }), (domain, changes) => {
      const osds = new Map<number, SimOsd>();
      for (let i = 0; i < 16; i++) osds.set(i, osd(i, `h${i % 6}`));
      const pools = new Map([
        [1, pool(1, 64)],
        [2, pool(2, 16, 2)],
      ]);
      const kept = new Placement();
      kept.map(osds.values(), pools.values(), domain);
      const next = { id: 16 };
      for (const c of changes) {
        applyChange(c, osds, pools, next);
        const got = kept.map(osds.values(), pools.values(), domain);
        const want = mapPgs(osds.values(), pools.values(), domain);
        if (JSON.stringify(got) !== JSON.stringify(want)) return false;
      }
      return true;
    }),
    { numRuns: 150 },
  );
  t.pass();
});

test('sim placement: an OSD out moves only the PGs that were on its host, and only off it', (t) => {
  const osds = new Map<number, SimOsd>();
  for (let i = 0; i < 40; i++) osds.set(i, osd(i, `h${i % 10}`));
  const pools = [pool(1, 256)];
  const kept = new Placement();
  const before = kept.map(osds.values(), pools, 'host');
  osds.get(3)!.in = false;
  const after = kept.map(osds.values(), pools, 'host');
  const moved = after.filter((pg, i) => pg.mapped.join() !== before[i]!.mapped.join());
  t.true(moved.length > 0);
  t.true(moved.every((pg) => before.find((b) => b.pgid === pg.pgid)!.mapped.some((id) => id % 10 === 3)));
  t.false(after.some((pg) => pg.mapped.includes(3)));
});

type RackChange = Change | { op: 'move'; host: number; rack: number | null } | { op: 'rule'; pool: number; rack: boolean };

const rackChange: fc.Arbitrary<RackChange> = fc.oneof(
  change,
  fc.record({ op: fc.constant('move' as const), host: fc.nat(7), rack: fc.option(fc.nat(3), { nil: null }) }),
  fc.record({ op: fc.constant('rule' as const), pool: fc.constantFrom(1, 2), rack: fc.boolean() }),
);

test('sim placement: with racks, host moves and pools changing rules, kept equals drawn from scratch, replicas in distinct racks', (t) => {
  fc.assert(
    fc.property(fc.array(rackChange, { maxLength: 25 }), (changes) => {
      const osds = new Map<number, SimOsd>();
      for (let i = 0; i < 16; i++) osds.set(i, osd(i, `h${i % 8}`));
      const rackOfHost = new Map<string, string | undefined>([...Array(8).keys()].map((h) => [`h${h}`, `r${h % 4}`]));
      // Pool 1 on a rack rule (id 1), pool 2 on the default rule.
      const pools = new Map([
        [1, { ...pool(1, 64), crushRule: 1 }],
        [2, pool(2, 16, 2)],
      ]);
      const crush = {
        ruleOf: (p: SimPool) => (p.crushRule === 1 ? { type: 'rack' } : undefined),
        domainOf: (host: string, type: string) => (type === 'rack' ? rackOfHost.get(host) : undefined),
      };
      const kept = new Placement();
      kept.map(osds.values(), pools.values(), 'host', crush);
      const next = { id: 16 };
      for (const c of changes) {
        applyChange(c, osds, pools, next);
        if (c.op === 'move') rackOfHost.set(`h${c.host}`, c.rack === null ? undefined : `r${c.rack}`);
        // In place, as the lab's `osd pool set crush_rule` changes a pool.
        if (c.op === 'rule') pools.get(c.pool)!.crushRule = c.rack ? 1 : 0;
        const got = kept.map(osds.values(), pools.values(), 'host', crush);
        const want = mapPgs(osds.values(), pools.values(), 'host', crush);
        if (JSON.stringify(got) !== JSON.stringify(want)) return false;
        for (const pg of got.filter((p) => p.pool.crushRule === 1)) {
          const racks = pg.mapped.map((id) => rackOfHost.get(osds.get(id)!.host!));
          if (racks.includes(undefined) || new Set(racks).size !== racks.length) return false;
        }
      }
      return true;
    }),
    { numRuns: 150 },
  );
  t.pass();
});

test('sim placement: a host moved to another rack redraws the PGs of a rack rule', (t) => {
  const osds = new Map<number, SimOsd>();
  for (let i = 0; i < 16; i++) osds.set(i, osd(i, `h${i % 8}`));
  const rackOfHost = new Map([...Array(8).keys()].map((h) => [`h${h}`, `r${h % 4}`]));
  const pools = [{ ...pool(1, 128), crushRule: 1 }];
  const crush = {
    ruleOf: (p: SimPool) => (p.crushRule === 1 ? { type: 'rack' } : undefined),
    domainOf: (host: string) => rackOfHost.get(host),
  };
  const kept = new Placement();
  const before = kept.map(osds.values(), pools, 'host', crush);
  rackOfHost.set('h0', 'r1');
  const after = kept.map(osds.values(), pools, 'host', crush);
  t.notDeepEqual(
    after.map((pg) => pg.mapped),
    before.map((pg) => pg.mapped),
  );
  t.deepEqual(after, mapPgs(osds.values(), pools, 'host', crush));
  // h0 (OSDs 0 and 8) and h1 (OSDs 1 and 9) now share r1: never two replicas from them in a PG.
  t.false(after.some((pg) => pg.mapped.filter((id) => id % 8 === 0 || id % 8 === 1).length > 1));
});
