// Shared set-ups for the simulated-Ceph tests: a cluster on a manual clock, an API whose waits
// return at once (no test waits out a deadline), and clusters built the way the loops will.
import { SimCephApi, SimRgwApi } from '../../src/sim/ceph/api.js';
import { SimCephCluster } from '../../src/sim/ceph/cluster.js';
import type { SimCephOptions } from '../../src/sim/ceph/model.js';
import { seeded } from '../../src/sim/random.js';

export const FSID = '4472770b-acbf-445c-ab2b-e96f396aa78f';
export const TB = 1_000_000_000_000;

export class ManualClock {
  t = Date.UTC(2026, 10, 22, 5, 33, 25);
  now = (): number => this.t;
  advance(ms: number): void {
    this.t += ms;
  }
}

/** A sleep that returns at once: simulated waits cost no real time. */
export const instant = async (): Promise<void> => {};

export function newCluster(opts: Partial<SimCephOptions> = {}): { cluster: SimCephCluster; clock: ManualClock } {
  const clock = new ManualClock();
  return { cluster: new SimCephCluster({ now: clock.now, random: seeded(11), ...opts }), clock };
}

export const apiOf = (cluster: SimCephCluster, writes: Map<string, Uint8Array> = new Map()): SimCephApi =>
  new SimCephApi(cluster, { sleep: instant, writeFile: async (p, d) => void writes.set(p, d) });

export const rgwOf = (cluster: SimCephCluster): SimRgwApi => new SimRgwApi(cluster, { sleep: instant });

/** Three monitors a, b, c on hosts h1..h3, all running. */
export function withMons(cluster: SimCephCluster, n = 3): void {
  cluster.bootstrap(FSID, { name: 'a', addr: '10.0.0.1', host: 'h1' });
  cluster.startMon('a');
  for (let i = 2; i <= n; i++) {
    const name = String.fromCharCode(96 + i);
    cluster.addMonToMap(name, `10.0.0.${i}`, `h${i}`);
    cluster.startMon(name);
  }
}

export const uuidOf = (i: number): string => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

/** A healthy base: 3 mons, an active mgr, and one 4 TB hdd OSD on each of `hosts` hosts. */
export function withOsds(cluster: SimCephCluster, hosts = 3, sizeBytes = 4 * TB): number[] {
  if (!cluster.mons.bootstrapped) withMons(cluster);
  cluster.startMgr('x', 'h1');
  const ids: number[] = [];
  for (let h = 1; h <= hosts; h++) {
    const id = cluster.createOsd(uuidOf(h));
    cluster.startOsd(id, `h${h}`, sizeBytes, 'hdd', { ip: `10.0.0.${h}`, devicePath: '/dev/sdb' });
    ids.push(id);
  }
  return ids;
}
