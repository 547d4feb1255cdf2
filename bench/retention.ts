// Run-history retention: the state directory of a 1,000-node controller over simulated months,
// with the default retention (src/tasks/retention.ts) against none, in the same run.
//
// Each simulated day every node gets BENCH_RETENTION_RUNS_PER_NODE finished runs (default 1:
// a restart, a config push, a disk operation — a quiet fleet's day) of LOG_LINES lines each,
// through the real TaskService on the embedded store and the file-backed run logs, with a
// clock moved by hand. With retention the history is pruned once a simulated day (the server
// does it hourly). Sizes are what is on disk: the store's snapshot and journal, the log files.
import { mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newNodeSpec } from '../src/fleet/discovery.js';
import { ManualClock, uuid } from '../src/model/clock.js';
import { Kind } from '../src/model/kinds.js';
import { macFor } from '../src/sim/machines.js';
import { openEmbeddedStore } from '../src/store/index.js';
import type { Store } from '../src/store/types.js';
import { EventBus } from '../src/tasks/bus.js';
import { FileLogStore } from '../src/tasks/file-logs.js';
import { DEFAULT_RETENTION } from '../src/tasks/retention.js';
import { TaskService } from '../src/tasks/service.js';
import { ZxRunner } from '../src/exec/zx-runner.js';

const NODES = Number(process.env.BENCH_RETENTION_NODES ?? 1_000);
const RUNS_PER_NODE = Number(process.env.BENCH_RETENTION_RUNS_PER_NODE ?? 1);
const DAYS = Number(process.env.BENCH_RETENTION_DAYS ?? 90);
const LOG_LINES = 10;
const STEPS = ['node.restart', 'ceph.config.push', 'disk.wipe'];
const DAY = 24 * 3_600_000;
const CHUNK = 250;

interface Sample {
  day: number;
  runs: number;
  storeBytes: number;
  logBytes: number;
  logFiles: number;
  pruneMs: number;
}

async function du(dir: string): Promise<{ bytes: number; files: number }> {
  let bytes = 0;
  let files = 0;
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    bytes += (await stat(join(entry.parentPath, entry.name))).size;
    files += 1;
  }
  return { bytes, files };
}

async function nodes(store: Store): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 1; i <= NODES; i += CHUNK) {
    const made = await Promise.all(
      Array.from({ length: Math.min(CHUNK, NODES + 1 - i) }, (_, k) =>
        store.create({ kind: Kind.Node, name: `node-${i + k}`, spec: newNodeSpec(macFor(i + k), `node-${i + k}`) }),
      ),
    );
    ids.push(...made.map((d) => d.id));
  }
  return ids;
}

async function simulate(prune: boolean): Promise<Sample[]> {
  const dir = await mkdtemp(join(tmpdir(), 'quarry-bench-retention-'));
  // A small journal threshold: the store's size on disk is then the snapshot of what it holds
  // (the server's 64 MiB default would add up to that much journal to either variant).
  const store = await openEmbeddedStore(join(dir, 'store'), { compactAfterBytes: 4 * 1024 * 1024 });
  const logs = new FileLogStore({ dir: join(dir, 'runs') });
  const clock = new ManualClock();
  const tasks = new TaskService({
    store,
    bus: new EventBus(),
    logs,
    runner: new ZxRunner(),
    clock,
    ids: uuid,
    defaultTimeoutMs: 60_000,
  });
  const samples: Sample[] = [];
  try {
    const nodeIds = await nodes(store);
    for (let day = 1; day <= DAYS; day += 1) {
      for (let r = 0; r < RUNS_PER_NODE; r += 1) {
        for (let i = 0; i < nodeIds.length; i += CHUNK) {
          const slice = nodeIds.slice(i, i + CHUNK);
          await Promise.all(
            slice.map(async (id, k) => {
              const run = await tasks.start({
                taskName: STEPS[(day + r + k) % STEPS.length] as string,
                target: { kind: Kind.Node, id, generation: 1 },
                script: async (ctx) => {
                  for (let l = 0; l < LOG_LINES; l += 1) ctx.log('info', `step ${l} of the simulated day ${day} on ${id}`);
                },
              });
              await tasks.whenFinished(run.id);
            }),
          );
        }
      }
      clock.advance(DAY);
      const t0 = performance.now();
      if (prune) await tasks.prune(DEFAULT_RETENTION);
      const pruneMs = performance.now() - t0;
      if (day % 30 === 0) {
        await logs.flush();
        const s = await du(join(dir, 'store'));
        const l = await du(join(dir, 'runs'));
        samples.push({
          day,
          runs: (await store.list(Kind.TaskRun)).length,
          storeBytes: s.bytes,
          logBytes: l.bytes,
          logFiles: l.files,
          pruneMs,
        });
      }
    }
  } finally {
    await tasks.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  }
  return samples;
}

const mb = (b: number): string => (b / 1024 / 1024).toFixed(1);

export async function run(): Promise<void> {
  console.log(
    `${NODES} nodes, ${RUNS_PER_NODE} run(s) per node per simulated day of ${LOG_LINES} log lines, ${DAYS} days; retention: ${JSON.stringify(DEFAULT_RETENTION)}`,
  );
  const none = await simulate(false);
  const kept = await simulate(true);
  console.log('| day | retention | runs kept | store MB | run logs MB | log files | last prune ms |');
  console.log('|---|---|---|---|---|---|---|');
  for (const [name, rows] of [
    ['none', none],
    ['default', kept],
  ] as const) {
    for (const s of rows)
      console.log(
        `| ${s.day} | ${name} | ${s.runs} | ${mb(s.storeBytes)} | ${mb(s.logBytes)} | ${s.logFiles} | ${name === 'none' ? '–' : s.pruneMs.toFixed(0)} |`,
      );
  }
  const last = (rows: Sample[]): Sample => rows[rows.length - 1] as Sample;
  const total = (s: Sample): number => s.storeBytes + s.logBytes;
  console.log(
    `state after ${DAYS} days, retention/none: ${(total(last(kept)) / total(last(none))).toFixed(2)}× ` +
      `(${mb(total(last(kept)))} MB vs ${mb(total(last(none)))} MB)`,
  );
}
