// The lab at scale: 1,000 nodes x 4 data disks, zero-latency steps, from declaring an OSD on
// every eligible disk to every OSD reported running (target <= 30 s), with reconciles per
// second; baseline: the simulated cluster creating the same OSDs directly. Then, in the same
// process, day 2: one OSD removed (declare → removed) against one created (declare → running),
// a few of each, one at a time (target: removal <= 2x creation).
import { execFile } from 'node:child_process';
import { QUARRY_V8_FLAGS } from './node-flags.js';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Day2Result } from './osd-day2.js';

const child = fileURLToPath(new URL('./osds-child.js', import.meta.url));
const REMOVAL_TARGET = 2;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

export async function run(nodes = Number(process.env.BENCH_LAB_NODES ?? 1000)): Promise<void> {
  const { stdout } = await promisify(execFile)(process.execPath, [...QUARRY_V8_FLAGS, child, String(nodes)], {
    maxBuffer: 1 << 20,
    timeout: 20 * 60_000,
  });
  const r = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as Record<string, number> & { day2: Day2Result | null };
  const s = (x: number): string => (x / 1000).toFixed(1);
  console.log(`lab: ${r.n} nodes booted to active in ${s(r.bootMs ?? 0)} s`);
  console.log(`OSDs: ${r.osds} declared in ${s(r.declaredMs ?? 0)} s; all running after ${s(r.ms ?? 0)} s (target <= 30 s)`);
  console.log(`reconciles: ${r.reconciles} in that time, ${((r.reconciles ?? 0) / ((r.ms ?? 1) / 1000)).toFixed(0)} per second`);
  console.log(
    `baseline, the simulated cluster alone: ${((r.baselineMs ?? 0) / 1000).toFixed(2)} s; ratio ${((r.ms ?? 0) / (r.baselineMs ?? 1)).toFixed(0)}x`,
  );
  console.log(`RSS at the end: ${((r.rss ?? 0) / 2 ** 20).toFixed(0)} MiB`);
  if (r.day2) day2(r.day2);
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
