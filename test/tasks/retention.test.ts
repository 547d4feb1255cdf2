// Task-run retention: which finished runs go (by age, by count), which never go (unfinished,
// the newest of an existing object's step), and that pruning takes their store records, logs
// and index entries with them.
import test from 'ava';
import fc from 'fast-check';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kind, type RunState } from '../../src/model/kinds.js';
import { createMemoryStore } from '../../src/store/index.js';
import { FileLogStore } from '../../src/tasks/file-logs.js';
import { prunable, type RetentionPolicy } from '../../src/tasks/retention.js';
import { TaskService } from '../../src/tasks/service.js';
import type { TaskRun } from '../../src/tasks/types.js';
import { EventBus } from '../../src/tasks/bus.js';
import { ManualClock } from '../../src/model/clock.js';
import { FakeRunner } from '../helpers/fake-runner.js';
import { idGen } from './harness.js';
import { ensureCluster } from '../../src/services/cluster.js';
import { CLUSTER_ID } from '../../src/model/ceph-kinds.js';

const DAY = 24 * 3600_000;
const T0 = Date.parse('2026-01-01T00:00:00.000Z');

function run(i: number, over: { target?: string; step?: string; state?: RunState; day?: number } = {}): TaskRun {
  const at = new Date(T0 + (over.day ?? i) * DAY).toISOString();
  return {
    kind: Kind.TaskRun,
    id: `run-${i}`,
    name: over.step ?? 'disk.wipe',
    metadata: { createdAt: at },
    spec: { taskName: over.step ?? 'disk.wipe', targetKind: 'Disk', targetId: over.target ?? 'd1' },
    status: { state: over.state ?? 'completed', completedAt: at },
  } as unknown as TaskRun;
}

const everything = (): boolean => true;
const policy = (over: Partial<RetentionPolicy>): RetentionPolicy => ({ maxAgeMs: 0, maxRuns: 0, keepPerStep: 1, ...over });

test('retention deletes finished runs older than the age limit, oldest first, and keeps the newest of each step', (t) => {
  const runs = [run(0), run(1), run(2, { step: 'disk.zap' }), run(3), run(40)];
  const now = T0 + 41 * DAY;
  t.deepEqual(prunable(runs, policy({ maxAgeMs: 30 * DAY }), now, everything), ['run-0', 'run-1', 'run-3']);
  // The newest disk.zap run is 39 days old and kept: it is the step's newest for a disk that exists.
  t.deepEqual(prunable(runs, policy({ maxAgeMs: 30 * DAY, keepPerStep: 2 }), now, everything), ['run-0', 'run-1']);
});

test('retention never deletes a run that has not finished, however old', (t) => {
  const runs = [run(0, { state: 'running' }), run(1, { state: 'pending' }), run(2, { state: 'failed' }), run(3)];
  t.deepEqual(prunable(runs, policy({ maxAgeMs: DAY }), T0 + 100 * DAY, everything), ['run-2']);
});

test('retention keeps nothing for an object that is gone: its runs age out', (t) => {
  const runs = [run(0, { target: 'gone' }), run(1, { target: 'here' })];
  const exists = (_kind: string, id: string): boolean => id === 'here';
  t.deepEqual(prunable(runs, policy({ maxAgeMs: DAY }), T0 + 10 * DAY, exists), ['run-0']);
});

test('retention over the count limit deletes the oldest deletable runs until the history fits', (t) => {
  const runs = [0, 1, 2, 3, 4, 5].map((i) => run(i, { target: `d${i % 2}` }));
  // Six runs, limit four: the two oldest that are not the newest of their object go.
  t.deepEqual(prunable(runs, policy({ maxRuns: 4 }), T0, everything), ['run-0', 'run-1']);
  // Limit one: every run but the newest of each of the two disks goes; two stay, over the limit.
  t.deepEqual(prunable(runs, policy({ maxRuns: 1 }), T0, everything), ['run-0', 'run-1', 'run-2', 'run-3']);
});

test('retention property: what goes is finished, over a limit, and never the newest of a living step', (t) => {
  const arbRun = fc.record({
    target: fc.constantFrom('d1', 'd2', 'd3', 'gone'),
    step: fc.constantFrom('disk.wipe', 'ceph.osd.create'),
    state: fc.constantFrom<RunState>('completed', 'failed', 'canceled', 'running', 'pending'),
    day: fc.integer({ min: 0, max: 60 }),
  });
  fc.assert(
    fc.property(
      fc.array(arbRun, { maxLength: 40 }),
      fc.record({
        maxAgeMs: fc.constantFrom(0, 10 * DAY, 30 * DAY),
        maxRuns: fc.integer({ min: 0, max: 30 }),
        keepPerStep: fc.integer({ min: 1, max: 3 }),
      }),
      (specs, p) => {
        const runs = specs.sort((a, b) => a.day - b.day).map((s, i) => run(i, s));
        const exists = (_k: string, id: string): boolean => id !== 'gone';
        const now = T0 + 61 * DAY;
        const gone = new Set(prunable(runs, p, now, exists));
        for (const r of runs.filter((x) => gone.has(x.id))) {
          if (r.status.state === 'running' || r.status.state === 'pending') return false;
          const old = p.maxAgeMs > 0 && now - Date.parse(r.status.completedAt as string) > p.maxAgeMs;
          if (!old && !(p.maxRuns > 0 && runs.length > p.maxRuns)) return false;
          if (r.spec.targetId === 'gone') continue;
          const newer = runs.filter(
            (x) => x.spec.targetId === r.spec.targetId && x.spec.taskName === r.spec.taskName && runs.indexOf(x) > runs.indexOf(r),
          );
          if (newer.length < p.keepPerStep) return false;
        }
        // The count limit is met unless only protected or unfinished runs are left.
        if (p.maxRuns === 0 || runs.length - gone.size <= p.maxRuns) return true;
        return (
          prunable(
            runs.filter((x) => !gone.has(x.id)),
            { ...p, maxAgeMs: 0 },
            now,
            exists,
          ).length === 0
        );
      },
    ),
  );
  t.pass();
});

test('TaskService.prune deletes old runs with their log files and index entries; the newest of a living object stays and a restart sees the same', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'qretention-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const store = await createMemoryStore();
  await ensureCluster(store);
  const living = CLUSTER_ID;
  const clock = new ManualClock(T0);
  const make = (): { service: TaskService; logs: FileLogStore } => {
    const logs = new FileLogStore({ dir });
    const service = new TaskService({
      store,
      bus: new EventBus(),
      logs,
      runner: new FakeRunner(),
      clock,
      ids: idGen('r'),
      defaultTimeoutMs: 60_000,
    });
    t.teardown(() => service.close());
    return { service, logs };
  };
  const { service, logs } = make();
  const ids: string[] = [];
  for (const targetId of [living, 'dddddddd-0000-4000-8000-00000000dead']) {
    for (let i = 0; i < 3; i += 1) {
      const started = await service.start({
        taskName: 'cluster.check',
        target: { kind: 'Cluster', id: targetId, generation: 1 },
        script: async (ctx) => {
          ctx.log('info', 'x');
          return Promise.resolve();
        },
      });
      await service.whenFinished(started.id);
      ids.push(started.id);
      clock.advance(DAY);
    }
  }
  await logs.flush();
  t.is((await readdir(dir)).length, 6);

  clock.advance(40 * DAY);
  t.deepEqual(await service.prune({ maxAgeMs: 30 * DAY, maxRuns: 0, keepPerStep: 1 }), { deleted: 5, kept: 1 });
  const newestLiving = ids[2] as string;
  t.deepEqual(
    (await store.list(Kind.TaskRun)).map((r) => r.id),
    [newestLiving],
  );
  t.deepEqual(await readdir(dir), [`${newestLiving}.jsonl`]);
  t.deepEqual(
    (await service.recent(10)).map((r) => r.id),
    [newestLiving],
  );
  t.is((await service.latestFor('Cluster', living))?.id, newestLiving);
  t.is(await service.latestFor('Cluster', 'dddddddd-0000-4000-8000-00000000dead'), undefined);
  await t.throwsAsync(service.get(ids[0] as string), { message: /not found/ });

  // Nothing more to do, and a new process over the same store and folder agrees.
  t.deepEqual(await service.prune({ maxAgeMs: 30 * DAY, maxRuns: 0, keepPerStep: 1 }), { deleted: 0, kept: 1 });
  const again = make().service;
  t.deepEqual(
    (await again.recent(10)).map((r) => r.id),
    [newestLiving],
  );
  t.is((await again.logs(newestLiving)).at(-1)?.message, 'completed');
});
