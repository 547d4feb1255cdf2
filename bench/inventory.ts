// GET /nodes/details at 1,000 and 10,000 nodes (4 disks each) over real HTTP, and Quarry's
// resident memory holding 10k nodes / 40k disks. Baseline: a bare node:http server sending the
// same bytes, in the same run. Targets: median <= 100 ms at 10k; RSS <= 400 MB at 10k.
import { execFile } from 'node:child_process';
import { QUARRY_V8_FLAGS } from './node-flags.js';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const child = fileURLToPath(new URL('./inventory-child.js', import.meta.url));

interface Row {
  n: number;
  populateMs: number;
  quarry: { median: number; p99: number; bytes: number };
  baseline: { median: number; p99: number };
  rss: number;
  settledRss: number;
  heapUsed: number;
}

export async function run(): Promise<void> {
  console.log('GET /nodes/details (20 sequential requests), Quarry vs a bare server sending the same bytes');
  console.log('nodes    disks    body MB  quarry median ms  p99 ms  bare median ms  ratio  RSS MiB  RSS settled  heap MiB');
  for (const n of [1_000, 10_000]) {
    const { stdout } = await promisify(execFile)(process.execPath, [...QUARRY_V8_FLAGS, child, String(n)], { maxBuffer: 1 << 20 });
    const r = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as Row;
    const cells = [
      n.toLocaleString('en').padEnd(8),
      (n * 4).toLocaleString('en').padEnd(8),
      (r.quarry.bytes / 1e6).toFixed(2).padStart(7),
      r.quarry.median.toFixed(1).padStart(17),
      r.quarry.p99.toFixed(1).padStart(7),
      r.baseline.median.toFixed(1).padStart(15),
      (r.quarry.median / r.baseline.median).toFixed(1).padStart(6),
      (r.rss / 2 ** 20).toFixed(0).padStart(7),
      (r.settledRss / 2 ** 20).toFixed(0).padStart(12),
      (r.heapUsed / 2 ** 20).toFixed(0).padStart(10),
    ];
    console.log(cells.join(' '));
  }
  console.log('targets: median <= 100 ms and RSS <= 400 MB (381 MiB) at 10,000 nodes (settled: 10 s idle after the load burst)');
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
