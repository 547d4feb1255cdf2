// The OSD lifecycle's effects: the drain lease (a store document, one holder at a time, stale
// holders dropped), the master steps' scripts (each idempotent: a retry after a crash does not
// act twice), what observe reads (a running OSD costs no Ceph call and no look at other disks),
// and the BlueStore label the node loop records.
import test from 'ava';
import { acquireLease, leaseState, readLease, releaseLease } from '../../reconcilers/shared/drain-lease.js';
import { osdDestroyScript, osdNewScript, osdPurgeScript } from '../../reconcilers/osd/scripts.js';
import { observeLifecycle, observePeers } from '../../reconcilers/osd/observe.js';
import type { OsdLoopDeps } from '../../reconcilers/osd/observe.js';
import type { OsdObserved } from '../../reconcilers/osd/plan.js';
import { planDisks } from '../../reconcilers/node/disks.js';
import { systemClock } from '../../src/model/clock.js';
import { DISRUPTION_BUDGET_ID, DisruptionKind } from '../../src/model/disruption-kinds.js';
import { diskIdFor } from '../../src/model/ids.js';
import type { DiskSpec, DiskStatusFields } from '../../src/model/kinds.js';
import type { DiskDoc } from '../../src/model/operations.js';
import { createMemoryStore } from '../../src/store/index.js';
import type { RunContext } from '../../src/tasks/types.js';
import { NODE_ID, disk as hwDisk, node, report } from '../builders.js';
import { NOW } from './plan-fixtures.js';

const A = { kind: 'Disk', id: 'a0000000-0000-4000-8000-000000000001' };
const B = { kind: 'Disk', id: 'b0000000-0000-4000-8000-000000000002' };
const UUID = 'b2c3d4e5-f607-4182-9a3b-4c5d6e7f8091';

test('drain lease: one holder at a time, held again is success, given back frees it', async (t) => {
  const store = await createMemoryStore();
  t.true(await acquireLease(store, A, 'drain of osd.1', '2026-01-01T00:00:00.000Z'));
  t.true(await acquireLease(store, A, 'drain of osd.1', '2026-01-01T00:00:01.000Z'), 'held already');
  t.false(await acquireLease(store, B, 'drain of osd.2', '2026-01-01T00:00:02.000Z'));
  const view = await readLease(store);
  t.deepEqual(leaseState(view, B), { kind: 'taken', by: view.leases });
  t.is(view.leases[0]?.since, '2026-01-01T00:00:00.000Z', 'taken again, the lease keeps its start');
  await releaseLease(store, A);
  await releaseLease(store, A);
  t.true(await acquireLease(store, B, 'drain of osd.2', '2026-01-01T00:00:03.000Z'));
  t.deepEqual(
    (await readLease(store)).leases.map((l) => l.holderId),
    [B.id],
  );
});

test('drain lease: a holder whose disk is gone or no longer drains does not block the others', async (t) => {
  const store = await createMemoryStore();
  await acquireLease(store, A, 'drain of osd.1', '2026-01-01T00:00:00.000Z');
  t.deepEqual(leaseState(await readLease(store), B, [A.id]), { kind: 'free' });
  t.true(await acquireLease(store, B, 'drain of osd.2', '2026-01-01T00:00:01.000Z', [A.id]));
  t.deepEqual(
    (await readLease(store)).leases.map((l) => l.holderId),
    [B.id],
  );
});

test('drain lease: it is a store document, found again by a new reader (a restart)', async (t) => {
  const store = await createMemoryStore();
  await acquireLease(store, A, 'drain of osd.1', '2026-01-01T00:00:00.000Z');
  const doc = await store.get(DisruptionKind.DisruptionBudget, DISRUPTION_BUDGET_ID);
  t.like(doc, { spec: { maxDisruptions: 1 }, status: { leases: [{ holderId: A.id, what: 'drain of osd.1' }] } });
});

function ctx(): RunContext {
  return { runId: 'r', args: {}, signal: new AbortController().signal, log: () => {}, runner: undefined as never, ask: async () => 'no' };
}

function fakeCeph(osds: Array<{ id: number; uuid: string; state: string[] }>, over: Record<string, unknown> = {}) {
  const calls: string[] = [];
  const ceph = {
    osdDump: async () => (calls.push('osdDump'), { osds }),
    osdNew: async (uuid: string, o: { id?: number; deviceClass?: string }) => (
      calls.push(`osdNew ${uuid} ${o.id ?? '-'} ${o.deviceClass ?? '-'}`),
      o.id ?? 7
    ),
    osdPurge: async (id: number) => (calls.push(`osdPurge ${id}`), { removed: osds.some((o) => o.id === id) }),
    osdDestroy: async (id: number) => {
      calls.push(`osdDestroy ${id}`);
    },
    authGet: async (entity: string) => (
      calls.push(`authGet ${entity}`),
      { entity, key: 'AQBnbmRmAAAAABAAu2e5ZIbTj4b0dJq2m7xT9w==', caps: {} }
    ),
    ...over,
  };
  return { ceph: ceph as never, calls };
}

test('osd scripts: a purge of a purged OSD is success', async (t) => {
  const store = await createMemoryStore();
  const { ceph, calls } = fakeCeph([]);
  t.deepEqual(await osdPurgeScript({ store, ceph, clock: systemClock }, 4)(ctx()), {});
  t.deepEqual(calls, ['osdPurge 4']);
});

test('osd scripts: a destroy retried after a crash finds the OSD destroyed and does not destroy it again', async (t) => {
  const store = await createMemoryStore();
  const { ceph, calls } = fakeCeph([{ id: 4, uuid: UUID, state: ['exists', 'destroyed'] }]);
  await osdDestroyScript({ store, ceph, clock: systemClock }, 4, 2)(ctx());
  t.deepEqual(calls, ['osdDump']);
});

test('osd scripts: a first destroy Ceph refuses counts as done only when the OSD is destroyed', async (t) => {
  const store = await createMemoryStore();
  const refuse = { osdDestroy: async () => Promise.reject(new Error('EBUSY osd.4 is up')) };
  const done = fakeCeph([{ id: 4, uuid: UUID, state: ['exists', 'destroyed'] }], refuse);
  await t.notThrowsAsync(osdDestroyScript({ store, ceph: done.ceph, clock: systemClock }, 4, 1)(ctx()));
  const up = fakeCeph([{ id: 4, uuid: UUID, state: ['exists', 'up'] }], refuse);
  await t.throwsAsync(osdDestroyScript({ store, ceph: up.ceph, clock: systemClock }, 4, 1)(ctx()), { message: /EBUSY/ });
});

test('osd scripts: osd new for a replacement passes the destroyed id and the device class', async (t) => {
  const store = await createMemoryStore();
  const { ceph, calls } = fakeCeph([]);
  t.deepEqual(await osdNewScript({ store, ceph, clock: systemClock }, UUID, NODE_ID, 1, { id: 4, deviceClass: 'ssd' })(ctx()), {
    osdId: 4,
    uuid: UUID,
  });
  t.deepEqual(calls, [`osdNew ${UUID} 4 ssd`]);
});

test('osd scripts: an adoption looks the uuid up and never registers a new OSD', async (t) => {
  const store = await createMemoryStore();
  const known = fakeCeph([{ id: 3, uuid: UUID, state: ['exists', 'up'] }]);
  t.deepEqual(await osdNewScript({ store, ceph: known.ceph, clock: systemClock }, UUID, NODE_ID, 1, { adopt: true })(ctx()), {
    osdId: 3,
    uuid: UUID,
  });
  t.deepEqual(known.calls, ['osdDump', 'authGet osd.3']);
  const gone = fakeCeph([{ id: 3, uuid: UUID, state: ['exists', 'destroyed'] }]);
  t.deepEqual(await osdNewScript({ store, ceph: gone.ceph, clock: systemClock }, UUID, NODE_ID, 1, { adopt: true })(ctx()), { uuid: UUID });
  t.deepEqual(gone.calls, ['osdDump'], 'a destroyed OSD is not adopted, nothing registered');
});

// ---- observe: only what each phase needs ----

function osdDisk(spec: Partial<DiskSpec>, status: Partial<DiskStatusFields>): DiskDoc {
  return {
    kind: 'Disk',
    id: A.id,
    name: 'node-1/SER1',
    metadata: { generation: 1, resourceVersion: 3, createdAt: '', updatedAt: '', labels: {}, source: null },
    spec: { nodeId: NODE_ID, serial: 'SER1', osd: true, wipeGeneration: 0, ...spec },
    status: { present: true, devicePath: '/dev/sdb', osdUuid: UUID, osdId: 4, ...status },
  };
}

async function observeWith(d: DiskDoc, runs: Record<string, unknown> = {}, phase: 'active' | 'offline' = 'active') {
  const store = await createMemoryStore();
  const calls: string[] = [];
  const count = (name: string, answer: unknown) => async (): Promise<unknown> => (calls.push(name), answer);
  const deps = {
    store: {
      ...store,
      get: async (kind: string, id: string) => (calls.push(`get ${kind}`), store.get(kind, id)),
    },
    ceph: {
      osdDfOf: count('osdDfOf', { id: 4, deviceClass: 'hdd', pgs: 3, dataBytes: 9, usedBytes: 9, totalBytes: 99, status: 'up' }),
      safeToDestroy: count('safeToDestroy', { safe: false, safeIds: [], activeIds: [4], missingStatsIds: [], storedPgIds: [] }),
      osdDump: count('osdDump', { osds: [] }),
    },
    tasks: { latestFor: async (_k: string, _id: string, task?: string) => (calls.push(`run ${task}`), runs[task ?? ''] as never) },
    clock: systemClock,
    retryBaseMs: 1_000,
    startGraceMs: 1_000,
    blockedRecheckMs: 2_000,
    runTimeoutMs: 60_000,
    diskGoneGraceMs: 60_000,
  } as unknown as OsdLoopDeps;
  const n = node(phase).build();
  n.status.diskIds = [A.id, B.id];
  n.status.daemons = { mon: false, mgr: false, mds: false, rgw: false, osds: [4] };
  const o = {
    disk: d,
    node: n,
    quorum: true,
    newRun: null,
    createRun: null,
    restartRun: null,
    now: NOW,
    nowIso: new Date(NOW).toISOString(),
    retryBaseMs: 1_000,
    startGraceMs: 1_000,
    diskGoneGraceMs: 60_000,
  } as OsdObserved & { nowIso: string };
  const lifecycle = await observeLifecycle(deps, o);
  const peers = await observePeers(deps, o);
  return { calls, lifecycle, peers };
}

test('osd observe: a running OSD costs no Ceph call, no removal run, no look at other disks', async (t) => {
  const { calls, lifecycle, peers } = await observeWith(osdDisk({}, {}));
  t.deepEqual(calls, []);
  t.is(lifecycle, null);
  t.is(peers, null);
});

test('osd observe: a disk that needs an id reads its node’s other disks', async (t) => {
  const { calls, peers } = await observeWith(osdDisk({}, { osdId: null, osdUuid: undefined }));
  t.deepEqual(peers, []);
  t.deepEqual(calls, ['get Disk']);
});

const run = (task: string, state: string, revision: number) => ({
  id: task,
  metadata: { resourceVersion: revision },
  spec: { attempt: 1, args: { osdId: 4 } },
  status: { state, completedAt: new Date(NOW - 1000).toISOString(), error: null, result: null },
});

test('osd observe: a removal reads its runs and the lease; before the out only what is on the OSD, safe-to-destroy once it is out', async (t) => {
  const removing = osdDisk({ osd: false, osdRemoval: 'remove' }, {});
  const before = await observeWith(removing);
  t.deepEqual(
    before.calls.filter((c) => c === 'osdDfOf' || c === 'safeToDestroy' || c === 'osdDump'),
    ['osdDfOf'],
    'the lease is free: where the drain starts from, nothing more',
  );
  t.true(before.calls.includes('get DisruptionBudget'));
  const out = await observeWith(removing, { 'ceph.osd.out': run('out', 'completed', 5) });
  t.true(out.calls.includes('osdDfOf'));
  t.true(out.calls.includes('safeToDestroy'));
  t.false(out.calls.includes('osdDump'));
  t.like(out.lifecycle, { df: { pgs: 3 }, safe: { safe: false } });
});

test('osd observe: a drain asks Ceph at most once per recheck (its answer is written, and a write wakes the loop)', async (t) => {
  const blocked = {
    type: 'Blocked',
    status: 'True' as const,
    reason: 'OsdNotSafeToDestroy',
    message: 'm',
    lastTransitionTime: '',
    observedGeneration: 1,
  };
  const drain = { osdId: 4, startPgs: 3, startBytes: 9, pgs: 3, bytes: 9, observedAt: new Date(NOW - 100).toISOString() };
  const d = osdDisk(
    { osd: false, osdRemoval: 'remove' },
    { drain, conditions: [blocked], osd: { phase: 'draining', reason: 'x', message: '' } },
  );
  const { calls, lifecycle } = await observeWith(d, { 'ceph.osd.out': run('out', 'completed', 5) });
  t.false(calls.includes('osdDfOf'));
  t.is(lifecycle?.safe, null);
});

test('osd observe: osd dump is read only while a stop waits for a node that is not active', async (t) => {
  const d = osdDisk({ osd: false, osdRemoval: 'remove' }, { osd: { phase: 'stopping', reason: 'x', message: '' } });
  const active = await observeWith(d, { 'ceph.osd.out': run('out', 'completed', 5) });
  t.false(active.calls.includes('osdDump'));
  const offline = await observeWith(d, { 'ceph.osd.out': run('out', 'completed', 5) }, 'offline');
  t.true(offline.calls.includes('osdDump'));
  t.is(offline.lifecycle?.down, false, 'Ceph does not list it down');
});

test('node disks: the agent’s BlueStore label is recorded, and dropped once the disk reports none', (t) => {
  const id = diskIdFor(NODE_ID, 'SER1');
  const label = { fsid: '11111111-2222-4333-8444-555555555555', osdUuid: UUID, osdId: 3 };
  const [w] = planDisks(NODE_ID, [], report('boot-1', [hwDisk('SER1', { bluestore: label })]), new Map());
  t.deepEqual(w?.status.label, label);
  const doc = { status: { label } } as unknown as DiskDoc;
  const [blank] = planDisks(NODE_ID, [id], report('boot-1', [hwDisk('SER1')]), new Map([[id, doc]]));
  t.false('label' in (blank?.status ?? {}));
  const [gone] = planDisks(NODE_ID, [id], report('boot-1', []), new Map([[id, doc]]));
  t.deepEqual(gone?.status.label, label, 'a disk no longer reported keeps what was last seen');
});
