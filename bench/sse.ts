// SSE fan-out: 1,000 raw HTTP clients on 127.0.0.1, events published at a fixed average rate
// (Poisson arrivals, same seed for every mode), each event carrying its publish time. Reports
// delivery latency (p50/p99) and the server's CPU time, with per-client batching and with the
// baseline that writes every event at once. The clients run in a child process so that their
// parsing does not share (and skew) the server's event loop or its process.cpuUsage(); on a
// small machine both still share the CPUs, so the client side adds its own queueing delay.
import { seeded } from '../src/sim/random.js';
import { fork, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { fileURLToPath } from 'node:url';
import Koa from 'koa';
import { EventBus } from '../src/tasks/bus.js';
import { SseHub } from '../src/http/sse/hub.js';
import { sseHandler } from '../src/http/sse/handler.js';

const CLIENTS = 1000;
const WARMUP_MS = 1000;
const scenarios = [
  { rate: 10, seconds: 10 },
  { rate: 100, seconds: 5 },
] as const;
const modes = [
  { name: 'batched 50 ms (default)', flushIntervalMs: 50 },
  { name: 'batched 100 ms', flushIntervalMs: 100 },
  { name: 'unbatched', flushIntervalMs: 0 },
] as const;

const CHILD_FLAG = '--sse-bench-clients';
const epochMs = (): number => performance.timeOrigin + performance.now();
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(0, ms)));

interface ChildReport {
  delivered: number;
  p50: number;
  p99: number;
  max: number;
  /** Share of the client process's event loop that was busy: high means latency is theirs. */
  clientElu: number;
}

interface Row extends ChildReport {
  mode: string;
  rate: number;
  published: number;
  cpuMs: number;
  /** How long publishing took: longer than planned when the server fell behind. */
  wallMs: number;
  /** The window over which CPU was measured (publishing plus the drain). */
  cpuWallMs: number;
  serverElu: number;
}

export async function run(): Promise<void> {
  const rows: Row[] = [];
  for (const s of scenarios) {
    for (const m of modes) rows.push(await measure(m.name, m.flushIntervalMs, s.rate, s.seconds));
  }
  console.log(`${CLIENTS} clients, Poisson arrivals; latency = scheduled publish time → parsed by the client (ms);`);
  console.log('CPU = server process user+sys over the measured window; "loop busy" = event-loop utilization.');
  console.log(
    '| mode | events/s target | achieved | delivered | p50 ms | p99 ms | max ms | server CPU ms | CPU % of a core | server loop busy | client loop busy |',
  );
  console.log('|---|---|---|---|---|---|---|---|---|---|---|');
  for (const r of rows) {
    const pct = ((r.cpuMs / r.cpuWallMs) * 100).toFixed(1);
    const achieved = (r.published / (r.wallMs / 1000)).toFixed(1);
    console.log(
      `| ${r.mode} | ${r.rate} | ${achieved} | ${r.delivered}/${r.published * CLIENTS} | ${r.p50.toFixed(1)} | ${r.p99.toFixed(1)} | ${r.max.toFixed(1)} | ${r.cpuMs.toFixed(0)} | ${pct} | ${(r.serverElu * 100).toFixed(0)} % | ${(r.clientElu * 100).toFixed(0)} % |`,
    );
  }
}

async function measure(mode: string, flushIntervalMs: number, rate: number, seconds: number): Promise<Row> {
  const bus = new EventBus();
  const hub = new SseHub(bus, { flushIntervalMs });
  const app = new Koa();
  app.use(sseHandler(hub));
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const child = fork(fileURLToPath(import.meta.url), [CHILD_FLAG], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  try {
    child.send({ port, clients: CLIENTS, capacity: CLIENTS * rate * seconds * 2 });
    await reply(child, 'ready');
    while (hub.stats().clients < CLIENTS) await sleep(10);

    await publishFor(bus, rate, WARMUP_MS, true);
    child.send({ cmd: 'start' });
    const elu0 = performance.eventLoopUtilization();
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    const published = await publishFor(bus, rate, seconds * 1000, false);
    const wallMs = performance.now() - t0;
    await sleep(500); // let the last batch reach the clients
    const cpu = process.cpuUsage(cpu0);
    const serverElu = performance.eventLoopUtilization(elu0).utilization;
    const cpuWallMs = performance.now() - t0;
    child.send({ cmd: 'report' });
    const report = (await reply(child, 'report')) as unknown as ChildReport;
    return { mode, rate, published, cpuMs: (cpu.user + cpu.system) / 1000, wallMs, cpuWallMs, serverElu, ...report };
  } finally {
    child.kill();
    hub.close();
    server.closeAllConnections();
    server.close();
  }
}

/** Publishes with exponential gaps (seeded) for `ms`; returns how many it published. */
async function publishFor(bus: EventBus, rate: number, ms: number, warm: boolean): Promise<number> {
  const random = seeded(42);
  const start = performance.now();
  let next = start;
  let n = 0;
  for (;;) {
    next += (-Math.log(1 - random()) * 1000) / rate;
    if (next - start > ms) break;
    await sleep(next - performance.now());
    n += 1;
    // The scheduled time, not the actual one: a server that falls behind shows it as latency.
    const sentAt = warm ? null : performance.timeOrigin + next;
    bus.publish('image.download.progress', { imageId: 'bench', bytes: n, total: 1e9, percent: 0, done: false, sentAt } as never);
  }
  await sleep(start + ms - performance.now());
  return n;
}

async function reply(child: ChildProcess, kind: string): Promise<Record<string, unknown>> {
  for (;;) {
    const [msg] = (await once(child, 'message')) as [Record<string, unknown>];
    if (msg['kind'] === kind) return msg;
  }
}

// ---- the client side, in the forked process ----
// Raw sockets rather than http.get: the HTTP client's per-chunk stream machinery costs more
// than the server's write, and all of it would show up as "latency".

async function clientMain(): Promise<void> {
  const [cfg] = (await once(process, 'message')) as [{ port: number; clients: number; capacity: number }];
  const latencies = new Float64Array(cfg.capacity);
  let n = 0;
  const sockets: Socket[] = [];
  const record = (sentAt: number, now: number): void => {
    if (n < latencies.length) latencies[n++] = now - sentAt;
  };
  // In waves, to stay under the listen backlog.
  for (let i = 0; i < cfg.clients; i += 100) {
    const wave = Array.from({ length: Math.min(100, cfg.clients - i) }, () => openClient(cfg.port, record, sockets));
    await Promise.all(wave);
  }
  let elu = performance.eventLoopUtilization();
  process.send?.({ kind: 'ready' });
  process.on('message', (msg: { cmd?: string }) => {
    if (msg.cmd === 'start') elu = performance.eventLoopUtilization();
    if (msg.cmd !== 'report') return;
    const busy = performance.eventLoopUtilization(elu).utilization;
    const sorted = latencies.subarray(0, n).sort();
    const at = (q: number): number => sorted[Math.min(n - 1, Math.floor(q * n))] ?? NaN;
    process.send?.({ kind: 'report', delivered: n, p50: at(0.5), p99: at(0.99), max: sorted[n - 1] ?? NaN, clientElu: busy });
  });
  process.on('disconnect', () => {
    for (const s of sockets) s.destroy();
    process.exit(0);
  });
}

const SENT_AT = /"sentAt":([0-9.]+)/g;

function openClient(port: number, record: (sentAt: number, now: number) => void, sockets: Socket[]): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => {
      socket.write(`GET /events HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`);
    });
    let tail = '';
    socket.once('data', () => resolve());
    socket.on('data', (chunk: Buffer) => {
      const now = epochMs();
      // Only whole events (up to the last blank line) are scanned; the rest waits for more.
      const text = tail + chunk.toString('latin1');
      const end = text.lastIndexOf('\n\n');
      if (end < 0) {
        tail = text;
        return;
      }
      tail = text.slice(end + 2);
      for (const m of text.slice(0, end).matchAll(SENT_AT)) record(Number(m[1]), now);
    });
    socket.on('error', reject);
    sockets.push(socket);
  });
}

if (process.argv.includes(CHILD_FLAG)) await clientMain();
