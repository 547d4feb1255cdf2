// One run of the lab-scale OSD benchmark, in its own process: N lab machines with 4 data disks
// each and zero-latency steps; from declaring an OSD on every eligible disk to every OSD
// reported running. Baseline: the simulated cluster creating and starting the same OSDs
// directly, without Quarry, in the same process. Then day 2 in the same process (osd-day2.ts):
// single creations on disks left out of the big declaration against single removals.
// Arguments: nodes, then the store: "embedded" (the default), or "etcd" and the endpoints of a
// running etcd (bench/osds.ts starts one), where Quarry campaigns and, alone, leads at once.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { loadConfig } from '../src/config.js';
import { silentLogger } from '../src/log.js';
import { startQuarry, type Quarry } from '../src/main.js';
import { Kind, type DiskSpec, type DiskStatusFields, type NodeSpec, type NodeStatusFields } from '../src/model/kinds.js';
import { diskReasons } from '../src/model/operations.js';
import { CLUSTER_ID, CephKind, type ClusterStatus } from '../src/model/ceph-kinds.js';
import { SimCephCluster } from '../src/sim/ceph/cluster.js';
import { day2 } from './osd-day2.js';
import { cacheHeap } from './cache-heap.js';

const n = Number(process.argv[2] ?? 1000);
const backend = process.argv[3] ?? 'embedded';
const endpoints = process.argv[4] ?? '';
if (backend !== 'embedded' && !(backend === 'etcd' && endpoints))
  throw new Error(`store: "embedded", or "etcd" and endpoints; got ${backend}`);
const PASSWORD = 'bench-admin-password';
/** Single creations and removals timed after the big declaration (BENCH_DAY2=0, or etcd: none). 30
 * pairs: at 9, one pair slowed by the machine's other work (or the lab cluster loop's periodic
 * status over 3,655 OSDs) moved a run's median by itself (README, "osds day 2"). */
const DAY2 = backend === 'etcd' ? 0 : Number(process.env.BENCH_DAY2 ?? 30);
/** How much longer the waits may take on etcd, where every read of the loops is a request. */
const SLACK = backend === 'etcd' ? 4 : 1;

/** On etcd: why this Quarry lost its leadership (its lease not renewed in LEADER_LEASE_TTL_S), if it did. */
let deposed: string | null = null;

async function until(what: string, check: () => Promise<boolean>, boundMs: number): Promise<void> {
  process.stderr.write(`waiting for ${what}\n`);
  const end = Date.now() + boundMs;
  while (!(await check())) {
    if (deposed) throw new Error(`bench: Quarry lost its leadership waiting for ${what} (${deposed})`);
    if (Date.now() > end) throw new Error(`bench gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

async function post(q: Quarry, cookie: string, path: string, body: unknown): Promise<unknown> {
  const r = await fetch(`${q.url}${path}`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (r.status !== 200) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  return r.json();
}

function baseline(count: number): number {
  const sim = new SimCephCluster();
  sim.bootstrap(randomUUID(), { name: 'a', addr: '192.0.2.1', host: 'a' });
  sim.startMon('a');
  const t0 = performance.now();
  for (let i = 0; i < count; i++) {
    const id = sim.createOsd(randomUUID());
    sim.startOsd(id, `host-${Math.floor(i / 4)}`, 4e12, 'hdd');
  }
  return performance.now() - t0;
}

const SECRETS_KEY = Buffer.alloc(32, 3);
const prefix = `bench-osds-${randomUUID()}/`;
const stateDir = await mkdtemp(join(tmpdir(), 'quarry-bench-osds-'));
try {
  const config = loadConfig({
    STATE_DIR: stateDir,
    SECRETS_KEY: SECRETS_KEY.toString('base64'),
    LAB_NODES: String(n),
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_PASSWORD: PASSWORD,
    HEARTBEAT_TIMEOUT_MS: '60000',
    RESYNC_MS: '3600000',
    RECONCILE_CONCURRENCY: '32',
    ...(backend === 'etcd' ? { STORE: 'etcd', ETCD_ENDPOINTS: endpoints, ETCD_PREFIX: prefix } : {}),
  });
  const q = await startQuarry({
    config,
    log: silentLogger,
    print: () => {},
    auth: { scrypt: { N: 2 ** 14, r: 8, p: 1 } },
    retryBaseMs: 200,
    onDeposed: (why) => (deposed = `${why}, after ${(performance.now() / 1000).toFixed(0)} s`),
    lab: { link: 'inprocess', bootMs: 0, stepMs: 0, heartbeatMs: 5_000, claimWaitMs: 10_000, disksPerMachine: 4 },
    cephTiming: { pollMs: 500, queryTimeoutMs: 5_000, startGraceMs: 15_000, blockedRecheckMs: 500 },
  });
  const nodes = () => q.store.list<NodeSpec, NodeStatusFields>(Kind.Node);
  const tBoot = performance.now();
  await until('every node active', async () => (await nodes()).filter((x) => x.status.phase === 'active').length === n, 300_000 * SLACK);
  const bootMs = performance.now() - tBoot;
  const login = await fetch(`${q.url}/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: PASSWORD }),
  });
  const cookie = login.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  const all = await nodes();
  const disks = await q.store.list<DiskSpec, DiskStatusFields>(Kind.Disk);
  const byNode = new Map(all.map((x) => [x.id, x] as const));
  const monNodes = new Set(all.slice(0, 3).map((x) => x.id));
  for (const node of all.slice(0, 3)) {
    const disk = disks.find((d) => d.spec.nodeId === node.id && diskReasons(d, node).length === 0)!;
    await post(q, cookie, '/ceph/mon/create', { nodeId: node.id, diskId: disk.id });
  }
  await until(
    'quorum',
    async () => ((await q.store.get<unknown, ClusterStatus>(CephKind.Cluster, CLUSTER_ID))?.status.quorum?.length ?? 0) === 3,
    120_000 * SLACK,
  );
  const eligible = (await q.store.list<DiskSpec, DiskStatusFields>(Kind.Disk))
    .filter((d) => diskReasons(d, byNode.get(d.spec.nodeId)).length === 0)
    .map((d) => d.id);
  // Day 2's creations: the first eligible disk of the last nodes, left out of the declaration.
  const spareNodes = DAY2 > 0 ? all.filter((x) => !monNodes.has(x.id)).slice(-DAY2) : [];
  const diskNode = new Map(disks.map((d) => [d.id, d.spec.nodeId] as const));
  const spares = spareNodes.map((x) => eligible.find((id) => diskNode.get(id) === x.id)).filter((id) => id !== undefined);
  const big = eligible.filter((id) => !spares.includes(id));
  const before = q.manager.stats().reconciles;
  const t0 = performance.now();
  const targets: string[] = [];
  for (let i = 0; i < big.length; i += 100) {
    const { results } = (await post(q, cookie, '/invoke/disk', { operation: 'ceph.create-osd', diskIds: big.slice(i, i + 100) })) as {
      results: Array<{ id: string; status: string }>;
    };
    // The monitors' disks are refused (monitor-disk): only what was scheduled is waited for.
    targets.push(...results.filter((r) => r.status === 'scheduled').map((r) => r.id));
  }
  const declaredMs = performance.now() - t0;
  const wanted = new Set(targets);
  await until(
    'every OSD running',
    async () =>
      (await q.store.list<DiskSpec, DiskStatusFields>(Kind.Disk)).filter((d) => wanted.has(d.id) && d.status.osd?.phase === 'running')
        .length === targets.length,
    600_000 * SLACK,
  );
  const ms = performance.now() - t0;
  const reconciles = q.manager.stats().reconciles - before;
  const rss = process.memoryUsage().rss;
  // What the etcd read cache of this converged datacenter costs (bench/cache-heap.ts).
  const cache = backend === 'etcd' ? await cacheHeap(endpoints.split(','), prefix, SECRETS_KEY) : null;
  // Day 2's removals: one OSD disk of each of the nodes in the middle (no monitor, no spare).
  const middle = new Set(all.filter((x) => !monNodes.has(x.id) && !spareNodes.includes(x)).map((x) => x.id));
  const candidates = targets.filter((id) => middle.delete(diskNode.get(id) ?? ''));
  const day =
    DAY2 > 0
      ? await day2({ q, post: (path, body) => post(q, cookie, path, body), spares, candidates, mgrNode: all[0]!.id, count: DAY2 })
      : null;
  await q.stop();
  console.log(
    JSON.stringify({
      n,
      store: backend,
      osds: targets.length,
      bootMs,
      declaredMs,
      ms,
      reconciles,
      rss,
      cache,
      baselineMs: baseline(targets.length),
      day2: day,
    }),
  );
} finally {
  await rm(stateDir, { recursive: true, force: true });
}
