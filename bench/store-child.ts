// One measurement of bench/store.ts, in a process of its own so RSS and heap are clean.
// Prints one JSON line. Modes:
//   embedded <n> <dir>        populate n nodes, time sequential status updates, compact, close
//   startup <dir> <tail>      time a reopen and RSS; then append <tail> updates as a journal tail
//   lowdb <n> <dir>           the same update through raw lowdb (Low + JSONFile, db.write())
//   latency embedded <n> <dir>        populate n, then a durable update and change → watcher
//   latency etcd <n> <endpoints>      the same on etcd (comma-separated client URLs)
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Low } from 'lowdb';
import { JSONFile } from 'lowdb/node';
import { DocumentStore, EmbeddedBackend, EtcdBackend, type Backend, type StoredDoc } from '../src/store/index.js';

const [mode, a, b, c] = process.argv.slice(2);

const hex = (n: number, width: number): string => n.toString(16).padStart(width, '0');
const uuidOf = (i: number): string => `${hex(i, 8)}-0000-4000-8000-${hex(i * 7, 12)}`;

/** About 450 bytes stored: a Node as the controller keeps it, with a condition in status. */
function nodeSpec(i: number, restartGeneration = 0) {
  const mac = (k: number) => `52:54:${hex((i >> 16) & 255, 2)}:${hex((i >> 8) & 255, 2)}:${hex(i & 255, 2)}:${hex(k, 2)}`;
  return {
    hostname: `node-${i}`,
    macs: [mac(1), mac(2)],
    role: 'worker',
    image: null,
    power: 'on',
    restartGeneration,
    shutdownGeneration: 0,
    daemons: { mon: { diskId: uuidOf(i + 1) } },
  };
}

function nodeStatus(bootCount: number) {
  const ready = {
    type: 'Ready',
    status: 'True',
    reason: 'Booted',
    message: 'agent reported in',
    lastTransitionTime: '2026-01-01T00:00:00.000Z',
    observedGeneration: 1,
  };
  return { phase: 'active', ip: '10.0.0.10', bootCount, observedGeneration: 1, conditions: [ready] };
}

function stats(samples: number[]): { median: number; p99: number; iterations: number } {
  const s = [...samples].sort((x, y) => x - y);
  const at = (q: number) => s[Math.min(s.length - 1, Math.floor(q * s.length))] ?? NaN;
  return { median: at(0.5), p99: at(0.99), iterations: s.length };
}

const iterationsFor = (n: number, lowdb: boolean): number => (lowdb ? (n >= 100_000 ? 20 : n >= 10_000 ? 100 : 500) : 1000);

async function openStore(dir: string): Promise<{ store: DocumentStore; backend: EmbeddedBackend<StoredDoc> }> {
  const backend = new EmbeddedBackend<StoredDoc>(dir);
  const store = new DocumentStore(backend);
  await store.open();
  return { store, backend };
}

async function timedUpdates(store: DocumentStore, n: number, iterations: number, from = 0): Promise<number[]> {
  const samples: number[] = [];
  for (let k = 0; k < iterations; k++) {
    const id = uuidOf(Math.floor(Math.random() * n));
    const t0 = performance.now();
    await store.updateStatus('Node', id, nodeStatus(from + k + 1));
    samples.push(performance.now() - t0);
  }
  return samples;
}

async function populate(store: DocumentStore, n: number): Promise<void> {
  for (let i = 0; i < n; i += 1000) {
    const batch = Array.from({ length: Math.min(1000, n - i) }, (_, k) => i + k);
    await Promise.all(
      batch.map((j) =>
        store.create({
          kind: 'Node',
          id: uuidOf(j),
          name: `node-${j}`,
          spec: nodeSpec(j),
          status: nodeStatus(0),
          labels: { rack: `r${j % 40}` },
        }),
      ),
    );
  }
}

async function embedded(n: number, dir: string): Promise<object> {
  const { store, backend } = await openStore(dir);
  const t0 = performance.now();
  await populate(store, n);
  const populateMs = performance.now() - t0;
  const result = stats(await timedUpdates(store, n, iterationsFor(n, false)));
  await backend.compact();
  await store.close();
  return { populateMs, ...result };
}

async function startup(dir: string, tail: number): Promise<object> {
  const t0 = performance.now();
  const { store, backend } = await openStore(dir);
  const openMs = performance.now() - t0;
  const rss = process.memoryUsage().rss;
  const objects = (await backend.list('Node/')).items.length;
  if (tail > 0) await timedUpdates(store, objects, tail, 1_000_000);
  await store.close();
  return { openMs, rss, objects, replayed: backend.recovery.replayed };
}

async function lowdb(n: number, dir: string): Promise<object> {
  const db = new Low<{ nodes: Record<string, unknown> }>(new JSONFile(join(dir, 'lowdb.json')), { nodes: {} });
  for (let i = 0; i < n; i++)
    db.data.nodes[uuidOf(i)] = { kind: 'Node', id: uuidOf(i), name: `node-${i}`, spec: nodeSpec(i), status: nodeStatus(0) };
  await db.write();
  const samples: number[] = [];
  for (let k = 0; k < iterationsFor(n, true); k++) {
    const id = uuidOf(Math.floor(Math.random() * n));
    const t0 = performance.now();
    (db.data.nodes[id] as { status: unknown }).status = nodeStatus(k + 1);
    await db.write();
    samples.push(performance.now() - t0);
  }
  return stats(samples);
}

/** The same durable update on either backend, then the time from a write's start to its event
 * reaching a watcher of the store, one write at a time. */
async function latency(kind: string, n: number, target: string): Promise<object> {
  const backend: Backend<StoredDoc> =
    kind === 'etcd'
      ? new EtcdBackend<StoredDoc>({ endpoints: target.split(','), prefix: `bench/${process.pid}/` })
      : new EmbeddedBackend<StoredDoc>(target);
  const store = new DocumentStore(backend);
  await store.open();
  await populate(store, n);
  const iterations = 500;
  const update = stats(await timedUpdates(store, n, iterations));
  let waiting: { id: string; seen: (at: number) => void } | null = null;
  const stop = store.watch(store.revision(), (e) => {
    if (e.type !== 'relist' && waiting?.id === e.doc.id) {
      waiting.seen(performance.now());
      waiting = null;
    }
  });
  const samples: number[] = [];
  for (let k = 0; k < iterations; k++) {
    const id = uuidOf(Math.floor(Math.random() * n));
    const seen = new Promise<number>((resolve) => (waiting = { id, seen: resolve }));
    const t0 = performance.now();
    await store.updateStatus('Node', id, nodeStatus(2_000_000 + k));
    samples.push((await seen) - t0);
  }
  stop();
  await store.close();
  return { update, watch: stats(samples) };
}

const result =
  mode === 'latency'
    ? await latency(String(a), Number(b), String(c))
    : mode === 'embedded'
      ? await embedded(Number(a), String(b))
      : mode === 'startup'
        ? await startup(String(a), Number(b))
        : mode === 'lowdb'
          ? await lowdb(Number(a), String(b))
          : undefined;
if (!result) throw new Error(`unknown mode ${mode}`);
process.stdout.write(`${JSON.stringify(result)}\n`);
