// A drain's pace: nothing announces that an OSD's data has moved off, so the loop asks Ceph
// again; the first questions come soon after the out and the gaps double up to the loop's
// recheck, so a short drain (an almost empty OSD, the lab) is not held for a whole recheck and
// a long one is still asked once per recheck.
import test from 'ava';
import { DRAIN_FIRST_RECHECK, drainRecheckMs } from '../../reconcilers/osd/remove.js';
import { planDisk, type DiskObserved } from '../../reconcilers/osd/loop.js';
import { observeLifecycle, type OsdLoopDeps } from '../../reconcilers/osd/observe.js';
import type { LifecycleObserved } from '../../reconcilers/osd/plan.js';
import type { RunInfo } from '../../reconcilers/shared/runs.js';
import { resultOf } from '../../src/runtime/loop-kit/result.js';
import { systemClock } from '../../src/model/clock.js';
import type { DiskSpec, DiskStatusFields } from '../../src/model/kinds.js';
import type { DiskDoc } from '../../src/model/operations.js';
import { createMemoryStore } from '../../src/store/index.js';
import { NODE_ID, node } from '../builders.js';
import { NOW, life, run } from './plan-fixtures.js';

const RECHECK = 2_000;
const FIRST = RECHECK * DRAIN_FIRST_RECHECK;
const UUID = '6f1c2a8e-1d3b-4c5d-9e7f-0a1b2c3d4e5f';
const NOT_SAFE = {
  safe: false,
  reason: 'OSD(s) 4 have 2 pgs currently mapped to them',
  safeIds: [],
  activeIds: [4],
  missingStatsIds: [],
  storedPgIds: [],
};

const blocked = {
  type: 'Blocked',
  status: 'True' as const,
  reason: 'OsdNotSafeToDestroy',
  message: 'osd.4 cannot be destroyed yet',
  lastTransitionTime: '',
  observedGeneration: 1,
};

function removing(status: Partial<DiskStatusFields> = {}): DiskDoc {
  const spec: DiskSpec = { nodeId: NODE_ID, serial: 'SER1', osd: false, osdRemoval: 'remove', wipeGeneration: 0 };
  return {
    kind: 'Disk',
    id: 'a0000000-0000-4000-8000-000000000001',
    name: 'node-1/SER1',
    metadata: { generation: 2, resourceVersion: 3, createdAt: '', updatedAt: '', labels: {}, source: null },
    spec,
    status: {
      present: true,
      devicePath: '/dev/sdb',
      osdUuid: UUID,
      osdId: 4,
      osd: { phase: 'draining', reason: 'x', message: '' },
      ...status,
    },
  };
}

/** The out of osd.4, completed `ago` ms before NOW. */
const outDone = (ago: number): RunInfo => run('completed', { args: { osdId: 4 }, revision: 20, completedAt: NOW - ago });

function observed(disk: DiskDoc, lifecycle: Partial<LifecycleObserved>, recheckMs?: number): DiskObserved {
  const n = node('active').build();
  n.status.daemons = { mon: false, mgr: false, mds: false, rgw: false, osds: [4] };
  return {
    disk,
    node: n,
    quorum: true,
    newRun: null,
    createRun: run('completed', { args: { osdId: 4, uuid: UUID }, revision: 10 }),
    restartRun: null,
    confirmRun: null,
    wipeRun: null,
    now: NOW,
    nowIso: new Date(NOW).toISOString(),
    retryBaseMs: 1_000,
    startGraceMs: 5_000,
    diskGoneGraceMs: 600_000,
    ...(recheckMs === undefined ? {} : { recheckMs }),
    lifecycle: life(lifecycle),
  };
}

test('osd drain recheck: the wait doubles with the drain’s age, from a 256th of the recheck up to the recheck', (t) => {
  const out = NOW - 10_000;
  t.is(drainRecheckMs(out, out, RECHECK), FIRST, 'right after the out');
  t.is(drainRecheckMs(out, out + 4, RECHECK), FIRST);
  t.is(drainRecheckMs(out, out + 100, RECHECK), 100, 'as long as it has lasted');
  t.is(drainRecheckMs(out, out + 700, RECHECK), 700);
  t.is(drainRecheckMs(out, out + 60_000, RECHECK), RECHECK, 'a long drain: once per recheck');
  t.is(drainRecheckMs(null, NOW, RECHECK), RECHECK, 'no out known: the recheck');
});

test('osd drain recheck: a drain not safe to destroy yet is looked at again after its own wait, not the loop’s recheck', (t) => {
  const o = observed(removing(), { outRun: outDone(100), safe: NOT_SAFE }, RECHECK);
  const plan = planDisk(o);
  t.is(plan.gate?.reason, 'OsdNotSafeToDestroy');
  t.is(plan.osd.status?.phase, 'draining');
  t.is(plan.requeueAfterMs, 100);
  t.like(resultOf(plan, { recheckMs: RECHECK }), { type: 'blocked', reason: 'OsdNotSafeToDestroy', retryAfterMs: 100 });
  const old = planDisk(observed(removing(), { outRun: outDone(3_600_000), safe: NOT_SAFE }, RECHECK));
  t.is(old.requeueAfterMs, RECHECK, 'an hour into the drain');
});

test('osd drain recheck: another gate keeps the loop’s recheck', (t) => {
  const o = observed(
    removing(),
    { lease: { kind: 'taken', by: [{ holderKind: 'Disk', holderId: 'b', what: 'drain of osd.7', since: '' }] } },
    RECHECK,
  );
  const plan = planDisk(o);
  t.is(plan.gate?.reason, 'DisruptionBudget');
  t.is(plan.requeueAfterMs, null);
  t.like(resultOf(plan, { recheckMs: RECHECK }), { type: 'blocked', retryAfterMs: RECHECK });
});

async function asks(disk: DiskDoc, outAgo: number): Promise<string[]> {
  const store = await createMemoryStore();
  const calls: string[] = [];
  const out = {
    id: 'out',
    metadata: { resourceVersion: 20 },
    spec: { attempt: 1, args: { osdId: 4 } },
    status: { state: 'completed', completedAt: new Date(NOW - outAgo).toISOString(), error: null, result: null },
  };
  const deps = {
    store,
    ceph: {
      osdDfOf: async () => (
        calls.push('osdDfOf'),
        { id: 4, deviceClass: 'hdd', pgs: 2, dataBytes: 9, usedBytes: 9, totalBytes: 99, status: 'up' }
      ),
      safeToDestroy: async () => (calls.push('safeToDestroy'), NOT_SAFE),
      osdDump: async () => (calls.push('osdDump'), { osds: [] }),
    },
    tasks: { latestFor: async (_k: string, _id: string, task?: string) => (task === 'ceph.osd.out' ? out : undefined) as never },
    clock: systemClock,
    retryBaseMs: 1_000,
    startGraceMs: 1_000,
    blockedRecheckMs: RECHECK,
    runTimeoutMs: 60_000,
    diskGoneGraceMs: 60_000,
  } as unknown as OsdLoopDeps;
  const { lifecycle: _l, ...o } = observed(disk, {});
  await observeLifecycle(deps, o);
  return calls;
}

const answeredAgo = (ms: number) =>
  removing({
    conditions: [blocked],
    drain: { osdId: 4, startPgs: 3, startBytes: 9, pgs: 2, bytes: 9, observedAt: new Date(NOW - ms).toISOString() },
  });

test('osd drain recheck: observe asks Ceph again once the drain’s own wait has passed since the last answer, and not before', async (t) => {
  // Out 200 ms ago, last answered 150 ms ago (50 ms into the drain): its wait was those 50 ms.
  t.deepEqual((await asks(answeredAgo(150), 200)).sort(), ['osdDfOf', 'safeToDestroy']);
  t.deepEqual(await asks(answeredAgo(30), 200), [], 'woken by its own write: not asked again at once');
  // An hour into the drain, last answered a second ago: once per recheck, as before.
  t.deepEqual(await asks(answeredAgo(1_000), 3_600_000), []);
  t.deepEqual((await asks(answeredAgo(RECHECK), 3_600_000)).sort(), ['osdDfOf', 'safeToDestroy']);
});
