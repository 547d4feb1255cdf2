// Day 2 at lab scale, measured in the process of `osds-child.ts` once its thousands of OSDs run:
// one OSD created on a disk left out of the big declaration (declare → running), and one
// removed through `ceph.remove-osd` (declare → phase `removed`), in pairs (a creation, then a removal) on different
// nodes, one at a time. A removal needs the manager (`osd df` and `safe-to-destroy` are mgr
// commands) and is only a real drain with data: a pool is written first and each OSD removed
// holds some of its PGs, which the lab's Ceph moves off at its backfill rate.
import type { Quarry } from '../src/main.js';
import { Kind, type DiskSpec, type DiskStatusFields, type TaskRunSpec, type TaskRunStatus } from '../src/model/kinds.js';
import type { SimCephCluster } from '../src/sim/ceph/cluster.js';
import { CEPH_COMMANDS } from '../src/sim/ceph/commands.js';

const GiB = 1024 ** 3;
/** The pool the removals drain: about 0.8 PG replica per OSD at 3,664 OSDs, so most OSDs hold one. */
const POOL = { name: 'bench-day2', pgNum: 1024, bytes: 10 * 1024 * GiB };

export interface Day2Result {
  createMs: number[];
  removeMs: number[];
  /** Of each, the time the lab's Ceph spent answering `ceph` commands (anyone's) meanwhile. */
  createSimMs: number[];
  removeSimMs: number[];
  osds: number;
  /** Per removal, the time spent in each phase (ms), in the order seen. */
  removePhases: Array<Record<string, number>>;
  /** PGs each removed OSD held when its removal was declared. */
  victimPgs: number[];
  backfillPgsPerSec: number;
  pool: { pgNum: number; bytes: number };
}

export interface Day2Input {
  q: Quarry;
  post: (path: string, body: unknown) => Promise<unknown>;
  /** Disks left out of the big declaration, one per node, none of a monitor's node. */
  spares: string[];
  /** Disks whose OSDs run, one per node, none of a monitor's node or a spare's. */
  candidates: string[];
  /** The node that gets the manager. */
  mgrNode: string;
  count: number;
}

const diskOf = (q: Quarry, id: string) => q.store.mustGet<DiskSpec, DiskStatusFields>(Kind.Disk, id);

/** Waits for the disk's phase, polling one document every 5 ms (a step here takes tens of ms);
 * returns when each phase was first seen, relative to `t0`. */
async function phases(
  q: Quarry,
  id: string,
  until: string,
  t0: number,
  boundMs: number,
): Promise<{ ms: number; seen: Array<[string, number]> }> {
  const seen: Array<[string, number]> = [];
  for (;;) {
    const d = await diskOf(q, id);
    const phase = d.status.osd?.phase ?? '-';
    const now = performance.now() - t0;
    if (seen.at(-1)?.[0] !== phase) seen.push([phase, now]);
    if (phase === until) return { ms: now, seen };
    if (now > boundMs) throw new Error(`bench gave up waiting for disk ${id} to be ${until} (phases ${JSON.stringify(seen)})`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** How long each phase lasted, from the moments each was first seen. */
function spans(seen: Array<[string, number]>, end: number): Record<string, number> {
  const out: Record<string, number> = {};
  seen.forEach(([phase, at], i) => {
    const next = seen[i + 1]?.[1] ?? end;
    if (next > at) out[phase] = (out[phase] ?? 0) + next - at;
  });
  return out;
}

async function until(what: string, check: () => boolean | Promise<boolean>, boundMs: number): Promise<void> {
  const end = Date.now() + boundMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`bench gave up waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Time spent in the lab's Ceph answering commands: the simulation's own work, in this same
 * process (at 3,664 OSDs an `osd df` renders every OSD, and the first query after an OSD map
 * change maps every PG again). Each command's answer is synchronous, so this is CPU time on the
 * one event loop, taken from whatever step was waiting. */
let simMs = 0;
function timeSimCommands(): void {
  for (const c of CEPH_COMMANDS) {
    const run = c.run.bind(c);
    c.run = (ctx) => {
      const t0 = performance.now();
      try {
        return run(ctx);
      } finally {
        simMs += performance.now() - t0;
      }
    };
  }
}

const pgsOn = (ceph: SimCephCluster, id: number): number => ceph.pgs().filter((pg) => pg.acting.includes(id) || pg.up.includes(id)).length;

export async function day2(x: Day2Input): Promise<Day2Result> {
  const { q, post } = x;
  const ceph = q.lab!.ceph;
  process.stderr.write('day 2: a manager and a pool with data\n');
  await post('/ceph/mgr', { nodeId: x.mgrNode });
  await until('an active manager', () => ceph.mgrs.available, 120_000);
  ceph.createPool(POOL.name, POOL.pgNum);
  ceph.enableApplication(POOL.name, 'rbd');
  ceph.writeData(POOL.name, POOL.bytes);
  await until('every PG active+clean', () => ceph.pgs().every((pg) => pg.state === 'active+clean'), 120_000);

  timeSimCommands();
  // The OSDs that hold the most PGs among the candidates: a drain that moves data.
  const ranked = await Promise.all(
    x.candidates.map(async (id) => {
      const osd = (await diskOf(q, id)).status.osdId ?? null;
      return { id, pgs: osd === null ? -1 : pgsOn(ceph, osd) };
    }),
  );
  const victims = ranked.sort((a, b) => b.pgs - a.pgs).slice(0, x.count);
  const createMs: number[] = [];
  const createSimMs: number[] = [];
  const removeMs: number[] = [];
  const removeSimMs: number[] = [];
  const removePhases: Array<Record<string, number>> = [];
  const profiler = process.env.BENCH_DAY2_PROFILE ? await startProfile() : null;
  // Pairs, a creation then a removal: the load on this machine (other processes, the lab's own
  // heartbeats) drifts over a run, and the ratio compares the two under the same conditions.
  for (const [i, v] of victims.entries()) {
    const spare = x.spares[i];
    if (spare !== undefined) {
      process.stderr.write(`day 2: creating an OSD on ${spare}\n`);
      const [t0, sim0] = [performance.now(), simMs];
      const r = (await post('/invoke/disk', { operation: 'ceph.create-osd', diskIds: [spare] })) as { results: Array<{ status: string }> };
      if (r.results[0]?.status !== 'scheduled') throw new Error(`create on ${spare}: ${JSON.stringify(r)}`);
      const created = await phases(q, spare, 'running', t0, 120_000);
      createMs.push(created.ms);
      createSimMs.push(simMs - sim0);
      if (process.env.BENCH_DAY2_TRACE) await trace(q, spare, t0, created.seen);
      await until('every PG active+clean', () => ceph.pgs().every((pg) => pg.state === 'active+clean'), 120_000);
    }
    process.stderr.write(`day 2: removing the OSD of ${v.id} (${v.pgs} PGs)\n`);
    const [t0, sim0] = [performance.now(), simMs];
    const r = (await post('/invoke/disk', { operation: 'ceph.remove-osd', diskIds: [v.id] })) as { results: Array<{ status: string }> };
    if (r.results[0]?.status !== 'scheduled') throw new Error(`remove on ${v.id}: ${JSON.stringify(r)}`);
    const { ms, seen } = await phases(q, v.id, 'removed', t0, 120_000);
    removeMs.push(ms);
    removeSimMs.push(simMs - sim0);
    removePhases.push(spans(seen, ms));
    if (process.env.BENCH_DAY2_TRACE) await trace(q, v.id, t0, seen);
    await until('every PG active+clean', () => ceph.pgs().every((pg) => pg.state === 'active+clean'), 120_000);
  }
  if (profiler) await profiler.stop(process.env.BENCH_DAY2_PROFILE as string);
  return {
    createMs,
    removeMs,
    createSimMs,
    removeSimMs,
    osds: ceph.osdmap.osds.size,
    removePhases,
    victimPgs: victims.map((v) => v.pgs),
    backfillPgsPerSec: ceph.options.backfillPgsPerSec,
    pool: { pgNum: POOL.pgNum, bytes: POOL.bytes },
  };
}

/** BENCH_DAY2_TRACE=1: where a creation's or a removal's time went, on stderr — each run's creation, start and
 * end, and when each phase was first seen, in ms from the request. */
async function trace(q: Quarry, diskId: string, t0: number, seen: Array<[string, number]>): Promise<void> {
  const origin = performance.timeOrigin + t0;
  const at = (iso: string | null) => (iso ? (Date.parse(iso) - origin).toFixed(0) : '-');
  const runs = (await q.store.list<TaskRunSpec, TaskRunStatus>(Kind.TaskRun)).filter(
    (r) => r.spec.targetId === diskId && Date.parse(r.metadata.createdAt) >= origin - 5,
  );
  for (const r of runs.sort((a, b) => a.metadata.createdAt.localeCompare(b.metadata.createdAt)))
    process.stderr.write(
      `  run ${r.spec.taskName}: created ${at(r.metadata.createdAt)} started ${at(r.status.startedAt)} done ${at(r.status.completedAt)}\n`,
    );
  process.stderr.write(`  phases: ${seen.map(([p, ms]) => `${p}@${ms.toFixed(0)}`).join(' ')}\n`);
}

/** BENCH_DAY2_PROFILE=file.cpuprofile: a V8 CPU profile of the day-2 creations and removals (open it in
 * Chrome's DevTools), to see what a removal's passes spend their time on. */
async function startProfile(): Promise<{ stop: (file: string) => Promise<void> }> {
  const { Session } = await import('node:inspector/promises');
  const { writeFile } = await import('node:fs/promises');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  return {
    stop: async (file) => {
      const { profile } = await session.post('Profiler.stop');
      await writeFile(file, JSON.stringify(profile));
      session.disconnect();
    },
  };
}
