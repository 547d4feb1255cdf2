// GET /metrics at 10,000 nodes (40,000 disks, 30,000 OSDs) over real HTTP: the scrape
// Prometheus makes every 15-60 s. Baseline: a bare node:http server sending the same bytes, in
// the same run. Target: median ≤ 50 ms (p95 reported beside it).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { benchQuarry } from './quarry-fixture.js';

const NODES = Number(process.env.BENCH_METRICS_NODES ?? 10_000);
const SCRAPES = 60;

async function timeGets(url: string, headers: Record<string, string>, n: number): Promise<{ median: number; p95: number; bytes: number }> {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < n; i++) {
    const t0 = performance.now();
    const res = await fetch(url, { headers });
    if (res.status !== 200) throw new Error(`${url}: ${res.status}`);
    bytes = (await res.arrayBuffer()).byteLength;
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return {
    median: times[Math.floor(times.length / 2)]!,
    p95: times[Math.min(times.length - 1, Math.ceil(times.length * 0.95) - 1)]!,
    bytes,
  };
}

export async function run(): Promise<void> {
  const t0 = performance.now();
  const b = await benchQuarry(NODES);
  const populated = performance.now() - t0;
  try {
    const url = `${b.q.url}/metrics`;
    const headers = { cookie: b.cookie };
    // The first scrape lists the nodes and disks once (then a store watch keeps the counts).
    const f0 = performance.now();
    const first = await (await fetch(url, { headers })).text();
    const firstMs = performance.now() - f0;
    const quarry = await timeGets(url, headers, SCRAPES);
    const bare = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end(first));
    await new Promise<void>((r) => bare.listen(0, '127.0.0.1', r));
    const baseline = await timeGets(`http://127.0.0.1:${(bare.address() as AddressInfo).port}/`, {}, SCRAPES);
    bare.close();
    console.log(
      `GET /metrics at ${NODES.toLocaleString('en')} nodes / ${(NODES * 4).toLocaleString('en')} disks (populated in ${(populated / 1000).toFixed(1)} s), ${SCRAPES} sequential scrapes`,
    );
    console.log(`  first scrape (lists once)  ${firstMs.toFixed(1).padStart(7)} ms`);
    console.log(
      `  quarry median / p95        ${quarry.median.toFixed(1).padStart(7)} / ${quarry.p95.toFixed(1)} ms, ${(quarry.bytes / 1024).toFixed(0)} KiB`,
    );
    console.log(`  bare same bytes median/p95 ${baseline.median.toFixed(1).padStart(7)} / ${baseline.p95.toFixed(1)} ms`);
    console.log(`  target median ≤ 50 ms: ${quarry.median <= 50 ? 'met' : 'NOT met'}`);
  } finally {
    await b.close();
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) await run();
