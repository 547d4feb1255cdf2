// Store benchmark: the embedded backend (snapshot + fsynced journal) against raw lowdb (the
// whole file rewritten per change) for one small durable update, plus start-up time and RSS;
// then the etcd backend against the embedded one (a durable update, change → watcher) on a
// real local etcd (test/store/etcd-server.ts) started for the run.
// Each measurement runs in a child process (bench/store-child.ts) so memory figures are clean.
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { EtcdCluster, etcdMissing } from '../test/store/etcd-server.js';

const child = fileURLToPath(new URL('./store-child.js', import.meta.url));
const SIZES = [1_000, 10_000, 100_000];
/** Updates appended after the compacted start-up, replayed by the second start-up. */
const TAIL = 10_000;

interface Latency {
  median: number;
  p99: number;
  iterations: number;
}
interface Populated extends Latency {
  populateMs: number;
}
interface Startup {
  openMs: number;
  rss: number;
  objects: number;
  replayed: number;
}

async function measure<T>(...args: string[]): Promise<T> {
  const { stdout } = await promisify(execFile)(process.execPath, [child, ...args], { maxBuffer: 1 << 20 });
  const last = stdout.trim().split('\n').pop() ?? '';
  return JSON.parse(last) as T;
}

interface Row {
  n: number;
  embedded: Populated;
  lowdb: Latency;
  cold: Startup;
  tail: Startup;
}

async function measureSize(n: number): Promise<Row> {
  const dir = await mkdtemp(join(tmpdir(), 'quarry-bench-store-'));
  try {
    const embedded = await measure<Populated>('embedded', String(n), dir);
    const cold = await measure<Startup>('startup', dir, String(TAIL));
    const tail = await measure<Startup>('startup', dir, '0');
    const lowdb = await measure<Latency>('lowdb', String(n), dir);
    return { n, embedded, lowdb, cold, tail };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const ms = (x: number): string => (x < 10 ? x.toFixed(2) : x.toFixed(0));

function table(rows: Row[]): string {
  const head = [
    'objects',
    'populate s',
    'update median ms',
    'p99 ms',
    'lowdb median ms',
    'lowdb p99 ms',
    'embedded/lowdb',
    'start-up s',
    `start-up +${TAIL / 1000}k tail s`,
    'RSS MiB',
  ];
  const body = rows.map((r) => [
    r.n.toLocaleString('en'),
    (r.embedded.populateMs / 1000).toFixed(1),
    `${ms(r.embedded.median)} (n=${r.embedded.iterations})`,
    ms(r.embedded.p99),
    `${ms(r.lowdb.median)} (n=${r.lowdb.iterations})`,
    ms(r.lowdb.p99),
    (r.embedded.median / r.lowdb.median).toFixed(4),
    (r.cold.openMs / 1000).toFixed(2),
    (r.tail.openMs / 1000).toFixed(2),
    (r.cold.rss / 2 ** 20).toFixed(0),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? '').length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i] ?? 0)).join('  ');
  return [line(head), line(widths.map((w) => '-'.repeat(w))), ...body.map(line)].join('\n');
}

interface BackendLatency {
  update: Latency;
  watch: Latency;
}

/** Objects in the etcd comparison: both populated alike, then measured one write at a time. */
const ETCD_OBJECTS = 1_000;

async function etcdAgainstEmbedded(): Promise<string> {
  const missing = etcdMissing();
  if (missing) return `store etcd: skipped (${missing})`;
  const etcd = await EtcdCluster.start(1);
  try {
    return await latencyTable(etcd.endpoints());
  } finally {
    await etcd.stop();
  }
}

/** A durable update and change → watcher on the embedded store (a temporary directory) and on
 * the etcd at `endpoints`, one after the other, as a table with etcd/embedded ratios. Also run by
 * the osds suite on its etcd, so one run gives every number of the comparison. */
export async function latencyTable(endpoints: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'quarry-bench-store-'));
  try {
    const embedded = await measure<BackendLatency>('latency', 'embedded', String(ETCD_OBJECTS), dir);
    const onEtcd = await measure<BackendLatency>('latency', 'etcd', String(ETCD_OBJECTS), endpoints.join(','));
    const head = ['backend', 'update median ms', 'p99 ms', 'change → watcher median ms', 'p99 ms'];
    const row = (name: string, r: BackendLatency) => [
      name,
      `${ms(r.update.median)} (n=${r.update.iterations})`,
      ms(r.update.p99),
      `${ms(r.watch.median)} (n=${r.watch.iterations})`,
      ms(r.watch.p99),
    ];
    const ratio = (x: number, y: number) => `${(x / y).toFixed(1)}×`;
    const body = [
      row('embedded', embedded),
      row('etcd', onEtcd),
      [
        'etcd/embedded',
        ratio(onEtcd.update.median, embedded.update.median),
        ratio(onEtcd.update.p99, embedded.update.p99),
        ratio(onEtcd.watch.median, embedded.watch.median),
        ratio(onEtcd.watch.p99, embedded.watch.p99),
      ],
    ];
    const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? '').length)));
    const line = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i] ?? 0)).join('  ');
    return [
      `store etcd: ${ETCD_OBJECTS.toLocaleString('en')} objects, one status update at a time (etcd: one local member, its own fsync)`,
      line(head),
      line(widths.map((w) => '-'.repeat(w))),
      ...body.map(line),
    ].join('\n');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function run(): Promise<void> {
  const rows: Row[] = [];
  for (const n of SIZES) rows.push(await measureSize(n));
  console.log('store: one durable status update (embedded: journal + fdatasync; lowdb: whole-file rewrite, no fsync)');
  console.log(table(rows));
  console.log('targets: update median <= 1 ms and start-up <= 3 s at 100,000 objects');
  console.log(await etcdAgainstEmbedded());
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await run();
