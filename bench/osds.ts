// The lab at scale: 1,000 nodes x 4 data disks, zero-latency steps, from declaring an OSD on
// every eligible disk to every OSD reported running (target <= 30 s), with reconciles per
// second; baseline: the simulated cluster creating the same OSDs directly.
import { execFile } from 'node:child_process';
import { QUARRY_V8_FLAGS } from './node-flags.js';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const child = fileURLToPath(new URL('./osds-child.js', import.meta.url));

export async function run(nodes = Number(process.env.BENCH_LAB_NODES ?? 1000)): Promise<void> {
  const { stdout } = await promisify(execFile)(process.execPath, [...QUARRY_V8_FLAGS, child, String(nodes)], {
    maxBuffer: 1 << 20,
    timeout: 20 * 60_000,
  });
  const r = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as Record<string, number>;
  const s = (x: number): string => (x / 1000).toFixed(1);
  console.log(`lab: ${r.n} nodes booted to active in ${s(r.bootMs ?? 0)} s`);
  console.log(`OSDs: ${r.osds} declared in ${s(r.declaredMs ?? 0)} s; all running after ${s(r.ms ?? 0)} s (target <= 30 s)`);
  console.log(`reconciles: ${r.reconciles} in that time, ${((r.reconciles ?? 0) / ((r.ms ?? 1) / 1000)).toFixed(0)} per second`);
  console.log(
    `baseline, the simulated cluster alone: ${((r.baselineMs ?? 0) / 1000).toFixed(2)} s; ratio ${((r.ms ?? 0) / (r.baselineMs ?? 1)).toFixed(0)}x`,
  );
  console.log(`RSS at the end: ${((r.rss ?? 0) / 2 ** 20).toFixed(0)} MiB`);
}
