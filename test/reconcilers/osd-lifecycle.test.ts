// The OSD lifecycle as pure plans: removal (lease, out, safe-to-destroy, stop, purge, zap),
// replacement and dead disks (destroy keeping the id, the claim of the disk that replaces it),
// adoption, a removal withdrawn, and the faults (node offline mid-drain, a crash mid-purge, a
// step that keeps failing, an id Ceph gave again).
import test from 'ava';
import type { DiskSpec, DiskStatusFields } from '../../src/model/kinds.js';
import type { DiskDoc, NodeDoc } from '../../src/model/operations.js';
import { planOsd, type OsdObserved } from '../../reconcilers/osd/plan.js';
import { ownedStatus } from '../../reconcilers/osd/status.js';
import { planWipe } from '../../reconcilers/osd/wipe.js';
import { planDisk } from '../../reconcilers/osd/loop.js';
import type { RunInfo } from '../../reconcilers/shared/runs.js';
import { NOW, diskDoc as baseDisk, life, run } from './plan-fixtures.js';
import { node } from '../builders.js';

const FSID = '11111111-2222-4333-8444-555555555555';
const UUID = '6f1c2a8e-1d3b-4c5d-9e7f-0a1b2c3d4e5f';
const LABEL_UUID = '7a2d3b9f-2e4c-4d6e-8f80-1b2c3d4e5f60';
const OLD = '9c1a0f3e-2b4d-4c6e-8f70-1a2b3c4d5e6f';
const NEW = '8b2a1f4e-3c5d-4d7e-9f81-2b3c4d5e6f70';
const GB = 1e9;
const GRACE = 600_000;

/** The disk of osd.4 (hasFilesystem: its BlueStore). */
const diskDoc = (spec: Partial<DiskSpec> = {}, status: Partial<DiskStatusFields> = {}, id = OLD, serial = 'SER1'): DiskDoc =>
  baseDisk(spec, { hasFilesystem: true, osdUuid: UUID, osdId: 4, ...status }, id, serial);

function hostNode(opts: { phase?: 'active' | 'offline'; osds?: number[] } = {}): NodeDoc {
  const n = node(opts.phase ?? 'active').build();
  n.status.daemons = { mon: false, mgr: false, mds: false, rgw: false, osds: opts.osds ?? [4] };
  n.status.diskIds = [OLD, NEW];
  return n;
}

/** A run of a removal step for osd.4, ordered by its revision. */
const step = (state: RunInfo['state'], revision: number, over: Partial<RunInfo> = {}): RunInfo =>
  run(state, { args: { osdId: 4 }, revision, ...over });

const SAFE = { safe: true, safeIds: [4], activeIds: [], missingStatsIds: [], storedPgIds: [] };
const NOT_SAFE = {
  safe: false,
  reason: 'OSD(s) 4 have 12 pgs currently mapped to them',
  safeIds: [],
  activeIds: [4],
  missingStatsIds: [],
  storedPgIds: [],
};
const df = (pgs: number, bytes: number) => ({
  id: 4,
  deviceClass: 'hdd',
  pgs,
  dataBytes: bytes,
  usedBytes: bytes,
  totalBytes: 4000 * GB,
  status: 'up',
});

function obs(over: Partial<OsdObserved> = {}): OsdObserved {
  return {
    disk: diskDoc({ osd: false, osdRemoval: 'remove' }),
    node: hostNode(),
    quorum: true,
    newRun: null,
    createRun: run('completed', { args: { osdId: 4, uuid: UUID }, revision: 10 }),
    restartRun: null,
    now: NOW,
    retryBaseMs: 1_000,
    startGraceMs: 5_000,
    fsid: FSID,
    diskGoneGraceMs: GRACE,
    lifecycle: life(),
    ...over,
  };
}

const removing = (status: Partial<DiskStatusFields> = {}) => diskDoc({ osd: false, osdRemoval: 'remove' }, status);
const replacing = (status: Partial<DiskStatusFields> = {}) => diskDoc({ osd: false, osdRemoval: 'replace' }, status);
const out = step('completed', 20);
const stopped = step('completed', 30);
const purged = step('completed', 40);

type Row = [string, OsdObserved, string | undefined, string | null, string | undefined];
const table: Row[] = [
  // title, input, phase, step, reason
  [
    'a removal with the drain lease free: takes it with the out',
    obs({ lifecycle: life({ lease: { kind: 'free' } }) }),
    'draining',
    'out',
    'InProgress',
  ],
  [
    'a removal while another OSD drains is blocked by the budget',
    obs({ lifecycle: life({ lease: { kind: 'taken', by: [{ holderKind: 'Disk', holderId: NEW, what: 'drain of osd.7', since: '' }] } }) }),
    'draining',
    null,
    'DisruptionBudget',
  ],
  ['holding the lease, the OSD is marked out', obs(), 'draining', 'out', 'InProgress'],
  ['an out in progress starts nothing more', obs({ lifecycle: life({ outRun: step('running', 20) }) }), 'draining', null, 'InProgress'],
  [
    'out, not safe to destroy: blocked with Ceph’s reason, still draining',
    obs({ lifecycle: life({ outRun: out, safe: NOT_SAFE, df: df(12, 5 * GB) }) }),
    'draining',
    null,
    'OsdNotSafeToDestroy',
  ],
  ['out and safe: the OSD is stopped', obs({ lifecycle: life({ outRun: out, safe: SAFE }) }), 'stopping', 'stop', 'InProgress'],
  [
    'node offline mid-drain, the OSD still up: waits for the node',
    obs({
      node: hostNode({ phase: 'offline' }),
      disk: removing({ osd: { phase: 'stopping', reason: 'x', message: '' } }),
      lifecycle: life({ outRun: out, down: false }),
    }),
    'stopping',
    null,
    'NodeNotActive',
  ],
  [
    'node offline mid-drain, Ceph sees the OSD down: the stop is skipped, it is purged',
    obs({
      node: hostNode({ phase: 'offline' }),
      disk: removing({ osd: { phase: 'stopping', reason: 'x', message: '' } }),
      lifecycle: life({ outRun: out, down: true }),
    }),
    'purging',
    'purge',
    'InProgress',
  ],
  ['stopped: purged', obs({ lifecycle: life({ outRun: out, stopRun: stopped }) }), 'purging', 'purge', 'InProgress'],
  [
    'Quarry killed mid-purge (the run failed as interrupted): the purge is sent again, nothing else',
    obs({
      disk: removing({ osd: { phase: 'purging', reason: 'x', message: '' } }),
      lifecycle: life({ outRun: out, stopRun: stopped, purgeRun: step('failed', 40) }),
    }),
    'purging',
    'purge',
    'Retrying',
  ],
  [
    'a purge under way is finished even if the removal is withdrawn (and the zap beside it started)',
    obs({
      disk: diskDoc({ osd: true }, { osd: { phase: 'purging', reason: 'x', message: '' } }),
      lifecycle: life({ outRun: out, stopRun: stopped, purgeRun: step('running', 40) }),
    }),
    'purging',
    'zap',
    'InProgress',
  ],
  [
    'a purge and its zap under way start nothing more',
    obs({
      disk: removing({ osd: { phase: 'purging', reason: 'x', message: '' } }),
      lifecycle: life({ outRun: out, stopRun: stopped, purgeRun: step('running', 40), zapRun: step('running', 41) }),
    }),
    'purging',
    null,
    'InProgress',
  ],
  [
    'purged: the disk is zapped',
    obs({ lifecycle: life({ outRun: out, stopRun: stopped, purgeRun: purged }) }),
    'zapping',
    'zap',
    'InProgress',
  ],
  [
    'purged, node offline: the zap waits for it',
    obs({ node: hostNode({ phase: 'offline' }), lifecycle: life({ outRun: out, stopRun: stopped, purgeRun: purged }) }),
    'zapping',
    null,
    'NodeNotActive',
  ],
  [
    'zapped: removed',
    obs({
      lifecycle: life({
        outRun: out,
        stopRun: stopped,
        purgeRun: purged,
        zapRun: step('completed', 50, { args: { osdId: 4, devicePath: '/dev/sdb' } }),
      }),
    }),
    'removed',
    null,
    'Removed',
  ],
  ['no quorum: the drain waits', obs({ quorum: false }), 'draining', null, 'WaitingForQuorum'],
  // Replacement
  ['a replacement drains the same way', obs({ disk: replacing() }), 'draining', 'out', 'InProgress'],
  [
    'a replacement, stopped: destroyed, not purged',
    obs({ disk: replacing(), lifecycle: life({ outRun: out, stopRun: stopped }) }),
    'destroying',
    'destroy',
    'InProgress',
  ],
  [
    'a replacement, destroyed: destroyed, the id kept',
    obs({ disk: replacing(), lifecycle: life({ outRun: out, stopRun: stopped, destroyRun: step('completed', 40) }) }),
    'destroyed',
    null,
    'Destroyed',
  ],
  [
    'a destroyed OSD waits for its replacement, no step',
    obs({ disk: replacing({ osd: { phase: 'destroyed', reason: 'Destroyed', message: '' } }), lifecycle: null }),
    'destroyed',
    null,
    'Destroyed',
  ],
  // Dead disk
  [
    'an OSD disk gone within the grace: blocked, nothing sent',
    obs({ disk: diskDoc({}, { present: false }), lifecycle: life({ lease: null }) }),
    'blocked',
    null,
    'DiskAbsent',
  ],
  [
    'an OSD disk gone past the grace: out at once, without waiting for the lease',
    obs({ disk: gone(GRACE + 1), lifecycle: life({ lease: { kind: 'taken', by: [] } }) }),
    'draining',
    'out',
    'InProgress',
  ],
  [
    'a dead disk, out and safe: destroyed without a stop',
    obs({ disk: gone(GRACE + 1), lifecycle: life({ outRun: out, safe: SAFE }) }),
    'destroying',
    'destroy',
    'InProgress',
  ],
  [
    'a dead disk past the grace on an offline node is not taken as dead',
    obs({ disk: gone(GRACE + 1), node: hostNode({ phase: 'offline' }), lifecycle: life() }),
    'blocked',
    null,
    'NodeNotActive',
  ],
  // Withdrawn
  [
    'a removal withdrawn while draining: the OSD is marked in again',
    obs({ disk: diskDoc({ osd: true }, { osd: { phase: 'draining', reason: 'x', message: '' } }), lifecycle: life({ outRun: out }) }),
    'draining',
    'in',
    'InProgress',
  ],
  [
    'withdrawn after its stop: in first',
    obs({
      disk: diskDoc({ osd: true }, { osd: { phase: 'stopping', reason: 'x', message: '' } }),
      node: hostNode({ osds: [] }),
      lifecycle: life({ outRun: out, stopRun: stopped }),
    }),
    'stopping',
    'in',
    'InProgress',
  ],
  [
    'withdrawn, in again, declared: started again',
    obs({
      disk: diskDoc({ osd: true }, { osd: { phase: 'stopping', reason: 'x', message: '' } }),
      node: hostNode({ osds: [] }),
      lifecycle: life({ outRun: out, stopRun: stopped, inRun: step('completed', 35) }),
    }),
    'starting',
    'restart',
    'Starting',
  ],
  [
    'withdrawn, in again, unowned: what the removal stopped is started again',
    obs({
      disk: diskDoc({ osd: false }, { osd: { phase: 'stopping', reason: 'x', message: '' } }),
      node: hostNode({ osds: [] }),
      lifecycle: life({ outRun: out, stopRun: stopped, inRun: step('completed', 35) }),
    }),
    'stopping',
    'restart',
    'InProgress',
  ],
  [
    'withdrawn and running again: running',
    obs({
      disk: diskDoc({ osd: true }, { osd: { phase: 'draining', reason: 'x', message: '' } }),
      lifecycle: life({ outRun: out, inRun: step('completed', 35) }),
    }),
    'running',
    null,
    'Running',
  ],
  [
    'withdrawn while its out still runs: the out finishes first',
    obs({
      disk: diskDoc({ osd: true }, { osd: { phase: 'draining', reason: 'x', message: '' } }),
      lifecycle: life({ outRun: step('running', 20) }),
    }),
    'draining',
    null,
    'Undoing',
  ],
  [
    'the dead disk is back before its destroy: in again',
    obs({ disk: diskDoc({}, { osd: { phase: 'draining', reason: 'x', message: '' } }), lifecycle: life({ outRun: out }) }),
    'draining',
    'in',
    'InProgress',
  ],
  [
    'an id Ceph gave again: the old life’s out and purge do not count',
    obs({
      createRun: run('completed', { args: { osdId: 4, uuid: UUID }, revision: 60 }),
      lifecycle: life({ outRun: out, stopRun: stopped, purgeRun: purged }),
    }),
    'draining',
    'out',
    'InProgress',
  ],
  [
    'unmanaged, no removal asked: orphaned, left running',
    obs({ disk: diskDoc({ osd: false }), lifecycle: null }),
    'orphaned',
    null,
    'NotDesired',
  ],
];

function gone(forMs: number): DiskDoc {
  const since = new Date(NOW - forMs).toISOString();
  return diskDoc(
    {},
    {
      present: false,
      conditions: [{ type: 'Present', status: 'False', reason: 'DiskGone', message: '', lastTransitionTime: since, observedGeneration: 1 }],
    },
  );
}

for (const [title, input, phase, stepKind, reason] of table) {
  test(`osd lifecycle: ${title}`, (t) => {
    const p = planOsd(input);
    t.is(String(p.status?.phase), String(phase));
    t.is(p.status?.reason, reason);
    t.is((p.step?.kind as string | undefined) ?? null, stepKind);
    t.is(
      p.gate !== null,
      ['DisruptionBudget', 'OsdNotSafeToDestroy', 'NodeNotActive', 'WaitingForQuorum', 'DiskAbsent'].includes(reason ?? ''),
    );
  });
}

test('osd lifecycle: the lease is held from the out until the purge is done, and given back after', (t) => {
  t.true(planOsd(obs()).lease);
  t.true(planOsd(obs({ lifecycle: life({ outRun: out, stopRun: stopped }) })).lease);
  t.falsy(planOsd(obs({ lifecycle: life({ outRun: out, stopRun: stopped, purgeRun: purged }) })).lease, 'zapping needs no lease');
  t.falsy(
    planOsd(
      obs({ disk: diskDoc({ osd: true }, { osd: { phase: 'draining', reason: 'x', message: '' } }), lifecycle: life({ outRun: out }) }),
    ).lease,
    'withdrawn',
  );
  t.falsy(planOsd(obs({ disk: gone(GRACE + 1) })).lease, 'a dead disk does not take it');
});

test('osd lifecycle: once stopped, the purge and the zap start in the same pass; a zap that must wait does not hold the purge', (t) => {
  const both = planOsd(obs({ lifecycle: life({ outRun: out, stopRun: stopped }) }));
  t.is(both.status?.phase, 'purging');
  t.like(both.step, { kind: 'purge', args: { osdId: 4 } });
  t.like(both.also, { kind: 'zap', args: { osdId: 4, devicePath: '/dev/sdb' } });
  t.true(both.lease, 'the lease is held until the purge is done');
  t.regex(both.status?.message ?? '', /purging osd\.4 .*wiping \/dev\/sdb \(verified\) beside it/);
  // The loop starts both runs from one plan.
  const disk = planDisk({ ...obs({ lifecycle: life({ outRun: out, stopRun: stopped }) }), nowIso: new Date(NOW).toISOString() } as never);
  t.deepEqual([disk.step?.osd?.kind, disk.step?.osdAlso?.kind], ['purge', 'zap']);
  // The node not active (Ceph saw the OSD down): the purge alone; the disk is not present: the same.
  for (const o of [
    obs({
      node: hostNode({ phase: 'offline' }),
      disk: removing({ osd: { phase: 'stopping', reason: 'x', message: '' } }),
      lifecycle: life({ outRun: out, down: true }),
    }),
    obs({ disk: removing({ present: false }), lifecycle: life({ outRun: out, stopRun: stopped }) }),
  ]) {
    const p = planOsd(o);
    t.is(p.step?.kind, 'purge');
    t.falsy(p.also);
  }
  // No quorum: neither (the zap goes with the purge, or after it).
  const quorumless = planOsd(obs({ quorum: false, lifecycle: life({ outRun: out, stopRun: stopped }) }));
  t.is(quorumless.step, null);
  t.falsy(quorumless.also);
  // The zap done first: the purge goes on, nothing is zapped again; the purge done: removed.
  const zapped = step('completed', 41, { args: { osdId: 4, devicePath: '/dev/sdb' } });
  const waiting = planOsd(obs({ lifecycle: life({ outRun: out, stopRun: stopped, purgeRun: step('running', 40), zapRun: zapped }) }));
  t.is(waiting.status?.phase, 'purging');
  t.is(waiting.step, null);
  t.falsy(waiting.also);
  t.is(
    planOsd(obs({ lifecycle: life({ outRun: out, stopRun: stopped, purgeRun: step('completed', 42), zapRun: zapped }) })).status?.phase,
    'removed',
  );
  // The purge done first: `zapping`, the lease given back while the zap runs.
  const zapping = planOsd(obs({ lifecycle: life({ outRun: out, stopRun: stopped, purgeRun: purged, zapRun: step('running', 41) }) }));
  t.is(zapping.status?.phase, 'zapping');
  t.is(zapping.step, null);
  t.falsy(zapping.lease);
});

test('osd lifecycle: Quarry killed after the zap, before the purge, and the disk declared again: the purge is sent again, nothing undone, nothing zapped twice', (t) => {
  const zapped = step('completed', 41, { args: { osdId: 4, devicePath: '/dev/sdb' } });
  const interrupted = step('failed', 42, { error: 'interrupted: Quarry restarted while this run was running' });
  for (const phase of ['purging', 'stopping'] as const) {
    // `stopping`: a status from before the phase was written (the runs are the memory too).
    const p = planOsd(
      obs({
        disk: diskDoc({ osd: true }, { osd: { phase, reason: 'x', message: '' } }),
        lifecycle: life({ outRun: out, stopRun: stopped, purgeRun: interrupted, zapRun: zapped }),
      }),
    );
    t.is(p.status?.phase, 'purging', phase);
    t.is(p.step?.kind, 'purge', phase);
    t.falsy(p.also, phase);
    // Only the zap ran (the purge's run never recorded): still past the point of no return.
    const q = planOsd(
      obs({
        disk: diskDoc({ osd: true }, { osd: { phase, reason: 'x', message: '' } }),
        lifecycle: life({ outRun: out, stopRun: stopped, zapRun: zapped }),
      }),
    );
    t.is(q.step?.kind, 'purge', `${phase}: no in, no restart`);
  }
});

test('osd lifecycle: the budget names who holds it', (t) => {
  const p = planOsd(
    obs({
      lifecycle: life({
        lease: { kind: 'taken', by: [{ holderKind: 'Disk', holderId: NEW, what: 'drain of osd.7 (node-2/X)', since: 'T' }] },
      }),
    }),
  );
  t.regex(p.gate?.message ?? '', /osd\.4 waits for the disruption budget, held by drain of osd\.7 \(node-2\/X\) since T/);
});

test('osd lifecycle: not safe to destroy shows Ceph’s reason and the drain’s progress from osd df', (t) => {
  const first = planOsd(obs({ lifecycle: life({ outRun: out, safe: NOT_SAFE, df: df(12, 5 * GB) }) }));
  t.regex(first.gate?.message ?? '', /osd\.4 cannot be destroyed: OSD\(s\) 4 have 12 pgs currently mapped/);
  t.like(first.drain, { osdId: 4, startPgs: 12, pgs: 12, startBytes: 5 * GB, bytes: 5 * GB });
  const later = planOsd(obs({ disk: removing({ drain: first.drain! }), lifecycle: life({ outRun: out, safe: NOT_SAFE, df: df(3, GB) }) }));
  t.like(later.drain, { startPgs: 12, pgs: 3, startBytes: 5 * GB, bytes: GB });
  // Not asked this time (once per recheck): the words and the progress stay as they were.
  const blocked = {
    type: 'Blocked',
    status: 'True' as const,
    reason: 'OsdNotSafeToDestroy',
    message: first.gate!.message,
    lastTransitionTime: '',
    observedGeneration: 1,
  };
  const quiet = planOsd(obs({ disk: removing({ drain: later.drain!, conditions: [blocked] }), lifecycle: life({ outRun: out }) }));
  t.is(quiet.gate?.message, first.gate!.message);
  t.deepEqual(quiet.drain, later.drain);
});

test('osd lifecycle: a removal ends with the id and uuid dropped and the history said once', (t) => {
  const zap = step('completed', 50, { args: { osdId: 4, devicePath: '/dev/sdb' } });
  const p = planOsd(obs({ lifecycle: life({ outRun: out, stopRun: stopped, purgeRun: purged, zapRun: zap }) }));
  t.is(p.osdId, null);
  t.is(p.osdUuid, null);
  t.deepEqual(
    p.history?.map((h) => [h.event, h.osdId]),
    [
      ['removed', 4],
      ['zapped', 4],
    ],
  );
  const s = ownedStatus(
    removing(),
    p,
    { condition: null, ack: null, step: null, requeueAfterMs: null, gate: null, failing: null },
    new Date(NOW).toISOString(),
  );
  t.is(s.osdId, null);
  t.false('osdUuid' in s);
  t.is(s.osd?.phase, 'removed');
  // The next look: no id, the removal stays shown, nothing more.
  const after = planOsd(obs({ disk: removing({ ...s, osdId: null }), lifecycle: null }));
  t.is(after.status?.phase, 'removed');
  t.is(after.step, null);
  t.is(after.history, undefined);
});

test('osd lifecycle: a step that keeps failing is Degraded, its phase kept, and retried', (t) => {
  const p = planOsd(
    obs({ lifecycle: life({ outRun: out, stopRun: stopped, purgeRun: step('failed', 40, { attempt: 3, error: 'EBUSY' }) }) }),
  );
  t.is(p.status?.phase, 'purging');
  t.is(p.step?.kind, 'purge');
  t.regex(p.failing ?? '', /attempt 3 failed: EBUSY/);
  const s = ownedStatus(
    removing(),
    p,
    { condition: null, ack: null, step: null, requeueAfterMs: null, gate: null, failing: null },
    '2026-01-01T00:00:00.000Z',
  );
  t.like(
    s.conditions?.find((c) => c.type === 'Degraded'),
    { status: 'True' },
  );
});

test('osd lifecycle: the dead disk’s grace counts from when it was first seen gone', (t) => {
  const p = planOsd(obs({ disk: diskDoc({}, { present: false }), lifecycle: life({ lease: null }) }));
  t.regex(p.gate?.message ?? '', new RegExp(`destroyed if it is still gone at ${new Date(NOW + GRACE).toISOString()}`));
  const s = ownedStatus(
    diskDoc({}, { present: false }),
    p,
    { condition: null, ack: null, step: null, requeueAfterMs: null, gate: null, failing: null },
    new Date(NOW).toISOString(),
  );
  t.like(
    s.conditions?.find((c) => c.type === 'Present'),
    { status: 'False', lastTransitionTime: new Date(NOW).toISOString() },
  );
  const back = ownedStatus(
    diskDoc({}, { conditions: s.conditions! }),
    planOsd(obs({ disk: diskDoc({ osd: true }) })),
    { condition: null, ack: null, step: null, requeueAfterMs: null, gate: null, failing: null },
    new Date(NOW).toISOString(),
  );
  t.is(
    back.conditions?.find((c) => c.type === 'Present'),
    undefined,
    'back: the condition goes',
  );
});

test('osd lifecycle: a destroy keeps the id on the disk and says so in its history', (t) => {
  const p = planOsd(obs({ disk: replacing(), lifecycle: life({ outRun: out, stopRun: stopped, destroyRun: step('completed', 40) }) }));
  t.is(p.osdId, 4);
  t.is(p.history?.[0]?.event, 'destroyed');
  t.falsy(p.lease);
});

// ---- Replacement: the new disk claims the destroyed id ----

const destroyedOld = (over: Partial<DiskStatusFields> = {}) =>
  replacing({ osd: { phase: 'destroyed', reason: 'Destroyed', message: '' }, hasFilesystem: false, ...over });
const blank = (spec: Partial<DiskSpec> = {}, status: Partial<DiskStatusFields> = {}) =>
  diskDoc(
    { osd: true, ...spec },
    { hasFilesystem: false, osdId: null, osdUuid: 'a0b1c2d3-e4f5-4a6b-8c7d-8e9fa0b1c2d3', ...status },
    NEW,
    'SER2',
  );

function newDisk(over: Partial<OsdObserved> = {}): OsdObserved {
  return obs({ disk: blank(), createRun: null, lifecycle: null, peers: [destroyedOld()], node: hostNode({ osds: [] }), ...over });
}

test('osd replacement: a new disk of the node claims the destroyed id first', (t) => {
  t.deepEqual(planOsd(newDisk()).step, { kind: 'claim', oldDiskId: OLD, osdId: 4 });
});

test('osd replacement: once claimed, osd new is asked for that id with the device class', (t) => {
  const p = planOsd(newDisk({ peers: [destroyedOld({ replacedBy: NEW })] }));
  t.deepEqual(p.step, { kind: 'new', attempt: 1, args: { uuid: 'a0b1c2d3-e4f5-4a6b-8c7d-8e9fa0b1c2d3', id: 4, deviceClass: 'hdd' } });
});

test('osd replacement: the lowest destroyed id nobody claimed; one claimed by another disk is left', (t) => {
  const other = (id: string, osdId: number, replacedBy?: string) => ({
    ...diskDoc(
      { osd: false, osdRemoval: 'replace' },
      { osd: { phase: 'destroyed', reason: '', message: '' }, osdId, ...(replacedBy ? { replacedBy } : {}) },
      id,
      `S${osdId}`,
    ),
  });
  const peers = [
    other('a1b2c3d4-0000-4000-8000-000000000001', 9),
    other('a1b2c3d4-0000-4000-8000-000000000002', 2, 'someone'),
    other('a1b2c3d4-0000-4000-8000-000000000003', 5),
  ];
  t.like(planOsd(newDisk({ peers })).step, { kind: 'claim', osdId: 5 });
});

test('osd replacement: replaces names a disk still draining: the new disk waits', (t) => {
  const draining = replacing({ osd: { phase: 'draining', reason: '', message: '' } });
  const p = planOsd(newDisk({ disk: blank({ replaces: OLD }), peers: [draining] }));
  t.is(p.gate?.reason, 'WaitingForReplacedOsd');
  t.is(p.step, null);
});

test('osd replacement: a new disk waits for the id of an OSD of its node that is being destroyed, without replaces', (t) => {
  // Its disk died (still wanted, not reported) or its replacement was asked: it ends destroyed.
  const dead = diskDoc({ osd: true }, { osdId: 4, present: false, osd: { phase: 'running', reason: '', message: '' } }, OLD, 'SER1');
  const asked = replacing({ osd: { phase: 'draining', reason: '', message: '' } });
  for (const dying of [dead, asked]) {
    const p = planOsd(newDisk({ peers: [dying] }));
    t.is(p.gate?.reason, 'WaitingForReplacedOsd');
    t.is(p.step, null);
  }
  // A removal (purge) or a live OSD of the node does not hold a new disk back.
  const removing = diskDoc(
    { osd: false, osdRemoval: 'remove' },
    { osdId: 4, osd: { phase: 'draining', reason: '', message: '' } },
    OLD,
    'SER1',
  );
  const live = diskDoc({ osd: true }, { osdId: 4, osd: { phase: 'running', reason: '', message: '' } }, OLD, 'SER1');
  for (const other of [removing, live]) t.like(planOsd(newDisk({ peers: [other] })).step, { kind: 'new' });
});

test('osd replacement: replaces names a disk replaced by another already: a new OSD', (t) => {
  const taken = destroyedOld({ replacedBy: 'c0ffee00-0000-4000-8000-000000000000' });
  const p = planOsd(newDisk({ disk: blank({ replaces: OLD }), peers: [taken] }));
  t.deepEqual(p.step, { kind: 'new', attempt: 1, args: { uuid: 'a0b1c2d3-e4f5-4a6b-8c7d-8e9fa0b1c2d3', deviceClass: 'hdd' } });
});

test('osd replacement: running with the claimed id, the new disk records it and says whom it replaces', (t) => {
  const registered = run('completed', { args: { uuid: 'a0b1c2d3-e4f5-4a6b-8c7d-8e9fa0b1c2d3', id: 4 }, result: { osdId: 4 } });
  const p = planOsd(newDisk({ peers: [destroyedOld({ replacedBy: NEW })], newRun: registered, node: hostNode({ osds: [4] }) }));
  t.is(p.status?.phase, 'running');
  t.is(p.osdId, 4);
  t.like(p.history?.[0], { event: 'replaces', osdId: 4, otherSerial: 'SER1' });
});

test('osd replacement: the old disk is replaced once the new one runs its id, and drops it', (t) => {
  const mine = (s: Partial<DiskStatusFields>) => obs({ disk: destroyedOld({ replacedBy: NEW }), lifecycle: null, replacer: blank({}, s) });
  const waiting = planOsd(mine({}));
  t.is(waiting.status?.phase, 'destroyed');
  t.is(waiting.status?.reason, 'Replacing');
  t.is(waiting.osdId, 4);
  const done = planOsd(mine({ osdId: 4 }));
  t.is(done.status?.phase, 'replaced');
  t.is(done.osdId, null);
  t.like(done.history?.[0], { event: 'replaced-by', osdId: 4, otherSerial: 'SER2' });
});

test('osd replacement: a claimer that is gone gives the id back to wait again', (t) => {
  const p = planOsd(obs({ disk: destroyedOld({ replacedBy: NEW }), lifecycle: null, replacer: null }));
  t.is(p.status?.phase, 'destroyed');
  t.is(p.replacedBy, null);
});

// ---- Adoption ----

test('osd adoption: an orphan declared again becomes owned and running, no step, no restart', (t) => {
  const p = planOsd(
    obs({ disk: diskDoc({ osd: true }, { osd: { phase: 'orphaned', reason: 'NotDesired', message: '' } }), lifecycle: null }),
  );
  t.is(p.status?.phase, 'running');
  t.is(p.step, null);
  t.like(p.history?.[0], { event: 'adopted', osdId: 4 });
});

const labelled = (fsid: string, status: Partial<DiskStatusFields> = {}) =>
  blank({}, { osdUuid: undefined, hasFilesystem: true, label: { fsid, osdUuid: LABEL_UUID, osdId: 3 }, ...status });

test('osd adoption: a declared disk with this cluster’s label takes the label’s uuid, its filesystem no reason', (t) => {
  t.deepEqual(planOsd(newDisk({ disk: labelled(FSID), peers: [] })).step, { kind: 'assign-uuid', uuid: LABEL_UUID });
  const chosen = labelled(FSID, { osdUuid: 'a0b1c2d3-e4f5-4a6b-8c7d-8e9fa0b1c2d3' });
  t.deepEqual(
    planOsd(newDisk({ disk: chosen, peers: [] })).step,
    { kind: 'assign-uuid', uuid: LABEL_UUID },
    'a uuid chosen before the label was seen gives way',
  );
});

test('osd adoption: the label of the OSD this disk just removed is not adopted; it waits for the agent to report the disk blank', (t) => {
  const removed = labelled(FSID, { osd: { phase: 'removed', reason: 'Removed', message: '' } });
  const p = planOsd(newDisk({ disk: removed, peers: [] }));
  t.not(p.step?.kind, 'assign-uuid');
  t.is(p.gate?.reason, 'DiskNotEligible', 'its stale BlueStore still counts as a filesystem');
});

test('osd adoption: a removed disk declared again is blocked by the stale label’s filesystem and still does not adopt it', (t) => {
  // The sequence CI's load showed: `removed` → declared again → Blocked (the report still shows
  // BlueStore) → the phase is no longer `removed`, but the label is the purged osd.3's.
  const zapped = [
    { at: '2026-11-24T00:00:00.000Z', event: 'removed' as const, osdId: 3, message: '' },
    { at: '2026-11-24T00:00:00.000Z', event: 'zapped' as const, osdId: 3, message: '' },
  ];
  const blocked = labelled(FSID, { osd: { phase: 'blocked', reason: 'DiskNotEligible', message: '' }, history: zapped });
  const p = planOsd(newDisk({ disk: blocked, peers: [] }));
  t.not(p.step?.kind, 'assign-uuid');
  t.is(p.gate?.reason, 'DiskNotEligible');
  const blank = labelled(FSID, { hasFilesystem: false, label: undefined, history: zapped });
  t.deepEqual(planOsd(newDisk({ disk: blank, peers: [] })).step, { kind: 'assign-uuid' }, 'once reported blank, a new OSD');
  const recreated = [...zapped, { at: '2026-11-24T00:01:00.000Z', event: 'created' as const, osdId: 3, message: '' }];
  const later = labelled(FSID, { history: recreated });
  t.deepEqual(
    planOsd(newDisk({ disk: later, peers: [] })).step,
    { kind: 'assign-uuid', uuid: LABEL_UUID },
    'a label of that id made since is adopted',
  );
});

test('osd adoption: then osd dump is asked for the label’s uuid, never a new registration', (t) => {
  const p = planOsd(newDisk({ disk: labelled(FSID, { osdUuid: LABEL_UUID }), peers: [destroyedOld()] }));
  t.deepEqual(p.step, { kind: 'new', attempt: 1, args: { uuid: LABEL_UUID }, adopt: true });
});

test('osd adoption: Ceph no longer knows the label’s uuid: ForeignOsd, wipe it', (t) => {
  const answered = run('completed', { args: { uuid: LABEL_UUID }, result: { uuid: LABEL_UUID } });
  const p = planOsd(newDisk({ disk: labelled(FSID, { osdUuid: LABEL_UUID }), newRun: answered, peers: [] }));
  t.is(p.gate?.reason, 'ForeignOsd');
  t.regex(p.gate?.message ?? '', /osd\.3 .*no longer knows.*wipe it/);
  t.is(p.step, null);
});

test('osd adoption: found, the OSD is created on the agent with the label’s uuid and recorded as adopted', (t) => {
  const found = run('completed', { args: { uuid: LABEL_UUID }, result: { osdId: 3, uuid: LABEL_UUID } });
  const disk = labelled(FSID, { osdUuid: LABEL_UUID });
  t.like(planOsd(newDisk({ disk, newRun: found, peers: [] })).step, { kind: 'create', args: { osdId: 3, uuid: LABEL_UUID } });
  const runs = planOsd(newDisk({ disk, newRun: found, peers: [], node: hostNode({ osds: [3] }) }));
  t.is(runs.osdId, 3);
  t.like(runs.history?.[0], { event: 'adopted', osdId: 3 });
});

test('osd adoption: another cluster’s label is not eligible and says whose it is', (t) => {
  const p = planOsd(newDisk({ disk: labelled('99999999-2222-4333-8444-555555555555'), peers: [] }));
  t.is(p.gate?.reason, 'DiskNotEligible');
  t.regex(p.gate?.message ?? '', /has-filesystem.*another cluster's \(fsid 99999999-/);
});

test('osd plan: a new OSD is recorded with a created entry, and the spec’s device class wins', (t) => {
  const registered = run('completed', { args: { uuid: 'a0b1c2d3-e4f5-4a6b-8c7d-8e9fa0b1c2d3' }, result: { osdId: 6 } });
  const ssd = blank({ deviceClass: 'ssd' });
  t.deepEqual(planOsd(newDisk({ disk: ssd, peers: [] })).step, {
    kind: 'new',
    attempt: 1,
    args: { uuid: 'a0b1c2d3-e4f5-4a6b-8c7d-8e9fa0b1c2d3', deviceClass: 'ssd' },
  });
  t.like(planOsd(newDisk({ disk: ssd, newRun: registered, peers: [] })).step, { kind: 'create', args: { deviceClass: 'ssd', osdId: 6 } });
  const p = planOsd(newDisk({ disk: ssd, newRun: registered, peers: [], node: hostNode({ osds: [6] }) }));
  t.like(p.history?.[0], { event: 'created', osdId: 6 });
});

test('osd status: the history is appended once and bounded', (t) => {
  const old = Array.from({ length: 20 }, (_, i) => ({ at: 'T', event: 'created' as const, osdId: i, message: '' }));
  const p = planOsd(
    obs({ disk: replacing({ history: old }), lifecycle: life({ outRun: out, stopRun: stopped, destroyRun: step('completed', 40) }) }),
  );
  const s = ownedStatus(
    replacing({ history: old }),
    p,
    { condition: null, ack: null, step: null, requeueAfterMs: null, gate: null, failing: null },
    'T',
  );
  t.is(s.history?.length, 20);
  t.is(s.history?.at(-1)?.event, 'destroyed');
  t.is(s.history?.[0]?.osdId, 1);
});

test('wipe plan: a destroyed OSD’s disk nobody wants an OSD on may be wiped, after the question', (t) => {
  const d = { ...destroyedOld(), spec: { ...destroyedOld().spec, wipeGeneration: 1 } };
  const p = planWipe({ disk: d, node: hostNode(), confirmRun: null, wipeRun: null, now: NOW, retryBaseMs: 1_000, startGraceMs: 5_000 });
  t.is(p.gate, null);
  t.is(p.step?.kind, 'confirm');
  const declared = { ...d, spec: { ...d.spec, osd: true } };
  t.is(
    planWipe({ disk: declared, node: hostNode(), confirmRun: null, wipeRun: null, now: NOW, retryBaseMs: 1_000, startGraceMs: 5_000 }).gate
      ?.reason,
    'WipeRefused',
  );
});

test('osd lifecycle: what is on the OSD before its out is where the drain starts (an out OSD reports no bytes)', (t) => {
  const before = planOsd(obs({ lifecycle: life({ df: df(30, 8 * GB) }) }));
  t.is(before.step?.kind, 'out');
  t.like(before.drain, { startPgs: 30, startBytes: 8 * GB });
  const after = planOsd(obs({ disk: removing({ drain: before.drain! }), lifecycle: life({ outRun: out, safe: NOT_SAFE, df: df(30, 0) }) }));
  t.like(after.drain, { startPgs: 30, startBytes: 8 * GB, pgs: 30, bytes: 0 });
});

test('osd removal: the out waits while the OSD’s creation still runs, so its completion cannot date the out into an old life', (t) => {
  // Seen in the lab under load: Ceph reported the new OSD up, the removal sent its out, the
  // creation's node part completed after it, and the out was then taken for an old life's and
  // sent again.
  const creating = run('running', { args: { osdId: 4, uuid: UUID }, revision: 10 });
  const waiting = planOsd(obs({ createRun: creating }));
  t.is(waiting.step, null);
  t.like(waiting.status, { phase: 'draining', reason: 'CreationRunning' });
  t.regex(waiting.status?.message ?? '', /creation of osd\.4 is still running: its removal begins when it ends/);
  t.is(planOsd(obs({ createRun: run('completed', { args: { osdId: 4, uuid: UUID }, revision: 12 }) })).step?.kind, 'out');
  // Another id's creation does not hold this removal.
  t.is(planOsd(obs({ createRun: run('running', { args: { osdId: 7, uuid: UUID }, revision: 10 }) })).step?.kind, 'out');
});

test('osd removal: the out takes a free drain lease with it, never when the lease is held already or taken', (t) => {
  const free = planOsd(obs({ lifecycle: life({ lease: { kind: 'free' } }) }));
  t.like(free.step, { kind: 'out', args: { osdId: 4 }, lease: { what: 'drain of osd.4 (node-1/SER1)' } });
  t.true(free.lease);
  const held = planOsd(obs());
  t.is(held.step?.kind, 'out');
  t.false(held.step !== null && 'lease' in held.step, 'held: no second take');
  const by = [{ holderKind: 'Disk', holderId: NEW, what: 'drain of osd.7', since: '' }];
  t.is(planOsd(obs({ lifecycle: life({ lease: { kind: 'taken', by } }) })).step, null);
});
