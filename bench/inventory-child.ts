// One size of the inventory benchmark, in its own process so its memory is its own:
// Quarry (no lab machines) over an embedded store holding N nodes with 4 disks each, then
// GET /nodes/details over real HTTP, against a bare node:http server answering the same JSON.
import { createServer } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import { silentLogger } from '../src/log.js';
import { startQuarry } from '../src/main.js';
import { diskIdFor, nodeIdForMac } from '../src/model/ids.js';
import { Kind } from '../src/model/kinds.js';
import { newNodeSpec } from '../src/fleet/discovery.js';
import { macFor } from '../src/sim/machines.js';

const n = Number(process.argv[2] ?? 1000);
const ROUNDS = 20;
const PASSWORD = 'bench-admin-password';

async function populate(store: Awaited<ReturnType<typeof startQuarry>>['store']): Promise<void> {
  const CHUNK = 500;
  for (let start = 1; start <= n; start += CHUNK) {
    const writes: Promise<unknown>[] = [];
    for (let i = start; i < Math.min(n + 1, start + CHUNK); i++) {
      const mac = macFor(i);
      const id = nodeIdForMac(mac);
      const serials = ['SYS', 'D1', 'D2', 'D3'].map((s) => `B${i}-${s}`);
      const diskIds = serials.map((s) => diskIdFor(id, s)).sort();
      writes.push(
        store.create({
          kind: Kind.Node,
          id,
          name: `node-${i}`,
          spec: newNodeSpec(mac, `node-${i}`),
          status: { phase: 'active', ip: `192.0.2.${i % 250}`, diskIds, daemons: { mon: false, mgr: false, mds: false, rgw: false } },
        }),
      );
      serials.forEach((serial, d) =>
        writes.push(
          store.create({
            kind: Kind.Disk,
            id: diskIdFor(id, serial),
            name: `node-${i}/${serial}`,
            spec: { nodeId: id, serial, osd: false, wipeGeneration: 0 },
            status: {
              present: true,
              devicePath: `/dev/sd${'abcd'[d]}`,
              capacityBytes: d === 0 ? 240e9 : 4e12,
              rotational: d > 0,
              interface: 'sata',
              model: 'M',
              vendor: 'V',
              isSystem: d === 0,
              hasFilesystem: d === 0,
              osdId: null,
            },
          }),
        ),
      );
    }
    await Promise.all(writes);
  }
}

async function timeGets(url: string, headers: Record<string, string>): Promise<{ median: number; p99: number; bytes: number }> {
  const times: number[] = [];
  let bytes = 0;
  for (let i = 0; i < ROUNDS; i++) {
    const t0 = performance.now();
    const res = await fetch(url, { headers });
    // Counted as they arrive, not gathered: the client shares this process, and 20 gathered
    // 3.2 MB bodies are 64 MB of the client's garbage in the RSS measured as Quarry's.
    bytes = 0;
    for await (const chunk of res.body as AsyncIterable<Uint8Array>) bytes += chunk.byteLength;
    times.push(performance.now() - t0);
  }
  times.sort((a, b) => a - b);
  return {
    median: times[Math.floor(times.length / 2)]!,
    p99: times[Math.min(times.length - 1, Math.ceil(times.length * 0.99) - 1)]!,
    bytes,
  };
}

const stateDir = await mkdtemp(join(tmpdir(), 'quarry-bench-inv-'));
try {
  const config = loadConfig({
    STATE_DIR: stateDir,
    SECRETS_KEY: Buffer.alloc(32, 3).toString('base64'),
    LAB_NODES: '0',
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_PASSWORD: PASSWORD,
    RESYNC_MS: '86400000',
  });
  const q = await startQuarry({ config, log: silentLogger, print: () => {}, auth: { scrypt: { N: 2 ** 14, r: 8, p: 1 } } });
  const t0 = performance.now();
  await populate(q.store);
  const populateMs = performance.now() - t0;
  await q.manager.idle();
  const login = await fetch(`${q.url}/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: PASSWORD }),
  });
  const cookie = login.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const quarry = await timeGets(`${q.url}/nodes/details`, { cookie });
  const body = Buffer.from(await (await fetch(`${q.url}/nodes/details`, { headers: { cookie } })).arrayBuffer());
  const rss = process.memoryUsage().rss;
  // Populating 50,000 documents in a burst leaves V8's heap grown with garbage; a running
  // Quarry holds its inventory at steady state, which is what the second figure shows.
  await new Promise((r) => setTimeout(r, 10_000));
  const settledRss = process.memoryUsage().rss;
  const { heapUsed, heapTotal, external } = process.memoryUsage();
  // The baseline: the same bytes from a bare server, so the ratio is Quarry's own work.
  const bare = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end(body));
  await new Promise<void>((r) => bare.listen(0, '127.0.0.1', r));
  const port = (bare.address() as { port: number }).port;
  const baseline = await timeGets(`http://127.0.0.1:${port}/`, {});
  bare.close();
  await q.stop();
  console.log(JSON.stringify({ n, populateMs, quarry, baseline, rss, settledRss, heapUsed, heapTotal, external }));
} finally {
  await rm(stateDir, { recursive: true, force: true });
}
