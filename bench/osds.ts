// The lab at scale: 1,000 nodes x 4 data disks, zero-latency steps, from declaring an OSD on
// every eligible disk to every OSD reported running (target <= 30 s), with reconciles per
// second; baseline: the simulated cluster creating the same OSDs directly. Then, in the same
// process, day 2: one OSD removed (declare → removed) against one created (declare → running),
// a few of each, one at a time (target: removal <= 2x creation). Then, on a real etcd (one local
// member, test/store/etcd-server.ts, started for the run), the store's durable update and change
// → watcher against the embedded store's (bench/store.ts), and the same convergence with Quarry
// on etcd (no day 2 there), side by side with the embedded store's, with the etcd read cache's
// heap at that size: every number of the etcd comparison in one run.
import { execFile } from 'node:child_process';
import { QUARRY_V8_FLAGS } from './node-flags.js';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { EtcdCluster, etcdMissing } from '../test/store/etcd-server.js';
import type { Day2Result } from './osd-day2.js';
import type { CacheHeap } from './cache-heap.js';
import { latencyTable } from './store.js';

const child = fileURLToPath(new URL('./osds-child.js', import.meta.url));
const REMOVAL_TARGET = 2;

type Convergence = Record<'n' | 'osds' | 'bootMs' | 'declaredMs' | 'ms' | 'reconciles' | 'rss' | 'baselineMs', number> & {
  day2: Day2Result | null;
  /** On etcd: the read cache's heap (bench/cache-heap.ts). */
  cache: CacheHeap | null;
};

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

async function converge(nodes: number, ...store: string[]): Promise<Convergence> {
  // --expose-gc: the etcd run measures its read cache's heap after full collections.
  const flags = store.length ? [...QUARRY_V8_FLAGS, '--expose-gc'] : QUARRY_V8_FLAGS;
  const { stdout } = await promisify(execFile)(process.execPath, [...flags, child, String(nodes), ...store], {
    maxBuffer: 1 << 20,
    // etcd's run waits up to 4x longer for each step (osds-child.ts).
    timeout: (store.length ? 80 : 20) * 60_000,
  });
  return JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as Convergence;
}

const s = (x: number): string => (x / 1000).toFixed(1);
const perSecond = (r: Convergence): number => r.reconciles / (r.ms / 1000);

function report(r: Convergence): void {
  console.log(`lab: ${r.n} nodes booted to active in ${s(r.bootMs)} s`);
  console.log(`OSDs: ${r.osds} declared in ${s(r.declaredMs)} s; all running after ${s(r.ms)} s (target <= 30 s)`);
  console.log(`reconciles: ${r.reconciles} in that time, ${perSecond(r).toFixed(0)} per second`);
  console.log(`baseline, the simulated cluster alone: ${(r.baselineMs / 1000).toFixed(2)} s; ratio ${(r.ms / r.baselineMs).toFixed(0)}x`);
  console.log(`RSS at the end: ${(r.rss / 2 ** 20).toFixed(0)} MiB`);
}

/** The two convergences side by side, and etcd's over the embedded store's. */
function sideBySide(e: Convergence, etcd: Convergence): void {
  const ratio = (x: number, y: number): string => `${(x / y).toFixed(2)}×`;
  console.log(`convergence by store: ${e.n} nodes booted, then OSDs declared → all running (embedded: less day 2's spare disks)`);
  console.log('| store | booted to active | OSDs | all running | reconciles per second | × the simulated cluster | RSS MiB |');
  console.log('|---|---|---|---|---|---|---|');
  for (const [name, r] of [
    ['embedded', e],
    ['etcd (one local member)', etcd],
  ] as const)
    console.log(
      `| ${name} | ${s(r.bootMs)} s | ${r.osds} | ${s(r.ms)} s | ${perSecond(r).toFixed(0)} | ${(r.ms / r.baselineMs).toFixed(0)}x (${(r.baselineMs / 1000).toFixed(2)} s) | ${(r.rss / 2 ** 20).toFixed(0)} |`,
    );
  console.log(
    `| etcd ÷ embedded | ${ratio(etcd.bootMs, e.bootMs)} | | ${ratio(etcd.ms, e.ms)} | ${ratio(perSecond(etcd), perSecond(e))} | | ${ratio(etcd.rss, e.rss)} |`,
  );
}

export async function run(nodes = Number(process.env.BENCH_LAB_NODES ?? 1000)): Promise<void> {
  const embedded = await converge(nodes);
  report(embedded);
  if (embedded.day2) day2(embedded.day2);
  const missing = etcdMissing();
  if (missing) {
    console.log(`on etcd: skipped (${missing})`);
    return;
  }
  const cluster = await EtcdCluster.start(1);
  let onEtcd: Convergence;
  try {
    console.log(await latencyTable(cluster.endpoints()));
    onEtcd = await converge(nodes, 'etcd', cluster.endpoints().join(','));
  } finally {
    await cluster.stop();
  }
  console.log('on etcd (STORE=etcd, one local member, its own fsync; reads from the read cache; day 2 on the embedded store only):');
  report(onEtcd);
  if (onEtcd.cache)
    console.log(
      `etcd read cache: ${onEtcd.cache.keys.toLocaleString('en')} documents, ${(onEtcd.cache.bytes / 2 ** 20).toFixed(1)} MiB of heap ` +
        `(${(onEtcd.cache.bytes / Math.max(1, onEtcd.cache.keys) / 1024).toFixed(1)} KiB each)`,
    );
  sideBySide(embedded, onEtcd);
}

function day2(d: Day2Result): void {
  const ms = (xs: number[]): string => xs.map((x) => x.toFixed(0)).join(', ');
  const create = median(d.createMs);
  const remove = median(d.removeMs);
  const ratio = remove / create;
  console.log(`day 2, one at a time, the other OSDs running:`);
  console.log(`  one OSD created (ceph.create-osd → running): median ${create.toFixed(0)} ms (${ms(d.createMs)})`);
  console.log(`  one OSD removed (ceph.remove-osd → removed): median ${remove.toFixed(0)} ms (${ms(d.removeMs)})`);
  const phases = [...new Set(d.removePhases.flatMap((p) => Object.keys(p)))];
  console.log(
    `  removal by phase, median ms: ${phases.map((p) => `${p} ${median(d.removePhases.map((x) => x[p] ?? 0)).toFixed(0)}`).join(', ')}`,
  );
  // The drain itself is the lab's Ceph moving PGs at its backfill rate: a few PGs take a few ms
  // of it, so what the ratio measures is the loop's own work (lease, out, safe-to-destroy
  // rechecks, stop, purge, zap) against a creation's (osd new, create, the agent's report).
  const pgs = median(d.victimPgs);
  console.log(
    `  drained at the lab's backfill rate of ${d.backfillPgsPerSec} PGs/s (src/sim/ceph, backfillPgsPerSec): the ${pgs} PGs (median) on each removed OSD ` +
      `(a ${d.pool.pgNum}-PG size-3 pool holding ${(d.pool.bytes / 2 ** 40).toFixed(0)} TiB) move in ~${((pgs / d.backfillPgsPerSec) * 1000).toFixed(0)} ms, ` +
      `so the ratio is the loop's own overhead: lease, out, safe-to-destroy rechecks, stop, purge, zap`,
  );
  console.log(
    `  ratio removal/creation ${ratio.toFixed(2)}x (target <= ${REMOVAL_TARGET}x: ${ratio <= REMOVAL_TARGET ? 'met' : 'NOT met'})`,
  );
  // The lab's Ceph runs in this process: its answers (osd df over every OSD, PGs mapped again
  // after each OSD map change) take the event loop from the steps. A creation asks it little,
  // a removal asks osd df twice and changes the map three times.
  const simC = median(d.createSimMs);
  const simR = median(d.removeSimMs);
  const own = (xs: number[], sims: number[]) => median(xs.map((x, i) => x - (sims[i] ?? 0)));
  const [ownC, ownR] = [own(d.createMs, d.createSimMs), own(d.removeMs, d.removeSimMs)];
  const ownRatio = ownR / ownC;
  console.log(
    `  of which the lab's Ceph answering commands (${d.osds} OSDs, in this process): creation ${simC.toFixed(0)} ms, removal ${simR.toFixed(0)} ms (medians; ${ms(d.removeSimMs)})`,
  );
  console.log(
    `  without it, Quarry's own: creation ${ownC.toFixed(0)} ms, removal ${ownR.toFixed(0)} ms; ratio ${ownRatio.toFixed(2)}x (target <= ${REMOVAL_TARGET}x: ${ownRatio <= REMOVAL_TARGET ? 'met' : 'NOT met'})`,
  );
}
