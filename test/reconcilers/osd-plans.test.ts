// Table-driven plans of the disk loop: the OSD half, the wipe half, and the OSD safety gates.
import test from 'ava';
import type { DaemonState, DiskStatusFields } from '../../src/model/kinds.js';
import type { DiskDoc, NodeDoc } from '../../src/model/operations.js';
import { planOsd, type OsdObserved } from '../../reconcilers/osd/plan.js';
import { planWipe, type WipeObserved } from '../../reconcilers/osd/wipe.js';
import { okToStopAnswer, okToStopGate, safeToDestroyGate } from '../../reconcilers/shared/osd-gates.js';
import type { RunInfo } from '../../reconcilers/shared/runs.js';
import { NOW, diskDoc as baseDisk, run } from './plan-fixtures.js';
import { pendingRun, planNode, type NodeObserved } from '../../reconcilers/node/plan.js';
import { node, nodeObserved, observation, report } from '../builders.js';
import { osdStopRefused, type OsdStopReport } from '../../src/clients/ceph-stop-gates.js';
import type { StopAnswers } from '../../reconcilers/shared/stop-gate.js';

const UUID = '6f1c2a8e-1d3b-4c5d-9e7f-0a1b2c3d4e5f';
const GB = 1e9;

const diskDoc = (spec: Partial<DiskDoc['spec']> = {}, status: Partial<DiskStatusFields> = {}): DiskDoc => baseDisk(spec, status);

function hostNode(opts: { phase?: 'active' | 'offline' | 'maintenance'; osds?: number[]; monDisk?: string } = {}): NodeDoc {
  const n = node(opts.phase ?? 'active').build();
  n.status.daemons = { mon: false, mgr: false, mds: false, rgw: false, osds: opts.osds ?? [] };
  if (opts.monDisk) n.spec.daemons = { mon: { diskId: opts.monDisk } };
  return n;
}

function osd(over: Partial<OsdObserved> = {}): OsdObserved {
  return {
    disk: diskDoc({}, { osdUuid: UUID }),
    node: hostNode(),
    quorum: true,
    newRun: null,
    createRun: null,
    restartRun: null,
    now: NOW,
    retryBaseMs: 1_000,
    startGraceMs: 5_000,
    ...over,
  };
}
const registered = run('completed', { args: { uuid: UUID }, result: { osdId: 4, uuid: UUID } });
const created = run('completed', { args: { osdId: 4, uuid: UUID } });

const osdTable: Array<[string, OsdObserved, DaemonState['phase'] | undefined, string | null, string | undefined]> = [
  ['no OSD desired: nothing', osd({ disk: diskDoc({ osd: false }) }), undefined, null, undefined],
  [
    'an OSD on the disk no longer desired is reported, not removed',
    osd({ disk: diskDoc({ osd: false }, { osdId: 2 }) }),
    'orphaned',
    null,
    'NotDesired',
  ],
  ['nothing on a node that is not active', osd({ node: hostNode({ phase: 'offline' }) }), 'blocked', null, 'NodeNotActive'],
  // #15: an OSD its node's maintenance stopped is not restarted by the loop.
  [
    'a node in maintenance: its stopped OSD is not restarted',
    osd({ node: hostNode({ phase: 'maintenance' }) }),
    'blocked',
    null,
    'NodeInMaintenance',
  ],
  ['nothing on a disk of an unknown node', osd({ node: undefined }), 'blocked', null, 'NodeNotActive'],
  ['an absent disk blocks', osd({ disk: diskDoc({}, { present: false }) }), 'blocked', null, 'DiskAbsent'],
  ['waits for monitor quorum', osd({ quorum: false }), 'blocked', null, 'WaitingForQuorum'],
  ['the system disk takes no OSD', osd({ disk: diskDoc({}, { isSystem: true }) }), 'blocked', null, 'DiskNotEligible'],
  ['a disk with a filesystem takes no OSD', osd({ disk: diskDoc({}, { hasFilesystem: true }) }), 'blocked', null, 'DiskNotEligible'],
  ['a disk too small takes no OSD', osd({ disk: diskDoc({}, { capacityBytes: GB }) }), 'blocked', null, 'DiskNotEligible'],
  [
    'the monitor disk takes no OSD',
    osd({ node: hostNode({ monDisk: '9c1a0f3e-2b4d-4c6e-8f70-1a2b3c4d5e6f' }) }),
    'blocked',
    null,
    'DiskNotEligible',
  ],
  ['a disk being wiped takes no OSD', osd({ disk: diskDoc({ wipeGeneration: 1 }) }), 'blocked', null, 'DiskNotEligible'],
  ['the uuid is chosen and stored first', osd({ disk: diskDoc() }), 'starting', 'assign-uuid', 'Registering'],
  ['then the OSD is registered with that uuid', osd(), 'starting', 'new', 'Starting'],
  [
    'a registration in progress starts nothing more',
    osd({ newRun: run('running', { args: { uuid: UUID } }) }),
    'starting',
    null,
    'Starting',
  ],
  [
    'a failed registration waits out its backoff',
    osd({ newRun: run('failed', { args: { uuid: UUID }, completedAt: NOW - 10 }) }),
    'starting',
    null,
    'RetryBackoff',
  ],
  ['a failed registration is retried', osd({ newRun: run('failed', { args: { uuid: UUID } }) }), 'starting', 'new', 'Retrying'],
  [
    'a registration for another uuid does not count',
    osd({ newRun: run('completed', { args: { uuid: 'other' }, result: { osdId: 9 } }) }),
    'starting',
    'new',
    'Starting',
  ],
  ['once registered, the agent creates it', osd({ newRun: registered }), 'starting', 'create', 'Starting'],
  [
    'three failed creations show as failed and are still retried',
    osd({ newRun: registered, createRun: run('failed', { attempt: 3, args: { osdId: 4, uuid: UUID } }) }),
    'failed',
    'create',
    'Retrying',
  ],
  [
    'right after creation the agent gets time to report it',
    osd({ newRun: registered, createRun: { ...created, completedAt: NOW - 100 } }),
    'starting',
    null,
    'WaitingForAgent',
  ],
  [
    'reported running: running, and the id is recorded',
    osd({ newRun: registered, createRun: created, node: hostNode({ osds: [4] }) }),
    'running',
    null,
    'Running',
  ],
  ['a created OSD that stopped is started again', osd({ newRun: registered, createRun: created }), 'starting', 'restart', 'Starting'],
  [
    'a recorded OSD that stopped is started again',
    osd({ disk: diskDoc({}, { osdUuid: UUID, osdId: 4, hasFilesystem: true }) }),
    'starting',
    'restart',
    'Starting',
  ],
  [
    'a recorded OSD whose creation still runs is not restarted',
    osd({
      newRun: registered,
      disk: diskDoc({}, { osdUuid: UUID, osdId: 4 }),
      createRun: run('running', { args: { osdId: 4, uuid: UUID } }),
    }),
    'starting',
    null,
    'Starting',
  ],
  [
    'a restart in progress starts nothing more',
    osd({ newRun: registered, createRun: created, restartRun: run('running', { args: { daemon: 'osd', id: 4 } }) }),
    'starting',
    null,
    'Starting',
  ],
  [
    'a failed restart is retried',
    osd({ newRun: registered, createRun: created, restartRun: run('failed', { args: { daemon: 'osd', id: 4 } }) }),
    'starting',
    'restart',
    'Retrying',
  ],
];

for (const [title, input, phase, step, reason] of osdTable) {
  test(`osd plan: ${title}`, (t) => {
    const p = planOsd(input);
    t.is(p.status?.phase, phase);
    t.is(p.status?.reason, reason);
    t.is((p.step?.kind as string | undefined) ?? null, step);
    t.is(p.gate !== null, phase === 'blocked');
  });
}

test('osd plan: the create run carries the id, the uuid, the device, its size and its class', (t) => {
  const nvme = diskDoc({}, { osdUuid: UUID, devicePath: '/dev/nvme0n1', interface: 'nvme', rotational: false, capacityBytes: 1600 * GB });
  t.deepEqual(planOsd(osd({ disk: nvme, newRun: registered })).step, {
    kind: 'create',
    attempt: 1,
    args: { osdId: 4, uuid: UUID, devicePath: '/dev/nvme0n1', sizeBytes: 1600 * GB, deviceClass: 'nvme' },
  });
  const ssd = diskDoc({}, { osdUuid: UUID, rotational: false });
  t.like(planOsd(osd({ disk: ssd, newRun: registered })).step, { args: { deviceClass: 'ssd' } });
  t.like(planOsd(osd({ newRun: registered })).step, { args: { deviceClass: 'hdd' } });
});

test('osd plan: the id is recorded only once the agent reports the OSD running', (t) => {
  t.is(planOsd(osd({ newRun: registered, createRun: created })).osdId, null);
  t.is(planOsd(osd({ newRun: registered, createRun: created, node: hostNode({ osds: [4] }) })).osdId, 4);
  t.deepEqual(planOsd(osd({ newRun: registered })).step, {
    kind: 'create',
    attempt: 1,
    args: { osdId: 4, uuid: UUID, devicePath: '/dev/sdb', sizeBytes: 4000 * GB, deviceClass: 'hdd' },
  });
});

function wipe(over: Partial<WipeObserved> & { status?: Partial<DiskStatusFields> } = {}): WipeObserved {
  const { status, ...rest } = over;
  return {
    disk: diskDoc({ osd: false, wipeGeneration: 1 }, { hasFilesystem: true, ...status }),
    node: hostNode(),
    confirmRun: null,
    wipeRun: null,
    now: NOW,
    retryBaseMs: 1_000,
    startGraceMs: 5_000,
    ...rest,
  };
}
const asked = (answer: string) => run('completed', { args: { request: 1 }, result: { answer } });
const wiped = (over: Partial<RunInfo> = {}) => run('completed', { args: { request: 1, devicePath: '/dev/sdb' }, ...over });

const wipeTable: Array<[string, WipeObserved, string | null, string | null, number | null, boolean]> = [
  // title, input, step, Wiped reason, ack, blocked
  ['nothing requested: nothing', wipe({ disk: diskDoc({ osd: false }) }), null, null, null, false],
  ['a request already acknowledged: nothing', wipe({ status: { observedWipeGeneration: 1 } }), null, null, null, false],
  ['a disk with a filesystem: ask first', wipe(), 'confirm', 'Asking', null, false],
  ['what an OSD left there counts as data', wipe({ status: { hasFilesystem: false, osdUuid: UUID } }), 'confirm', 'Asking', null, false],
  ['a disk without data: no question, wipe', wipe({ status: { hasFilesystem: false } }), 'wipe', 'Wiping', null, false],
  [
    'while the question is open nothing more',
    wipe({ confirmRun: run('running', { args: { request: 1 } }) }),
    null,
    'AwaitingAnswer',
    null,
    false,
  ],
  ['"no" acknowledges the request as declined', wipe({ confirmRun: asked('no') }), null, 'Declined', 1, false],
  ['"yes" wipes', wipe({ confirmRun: asked('yes') }), 'wipe', 'Wiping', null, false],
  [
    'an answer to an earlier request does not count',
    wipe({
      disk: diskDoc({ osd: false, wipeGeneration: 2 }, { hasFilesystem: true, observedWipeGeneration: 1 }),
      confirmRun: asked('yes'),
    }),
    'confirm',
    'Asking',
    null,
    false,
  ],
  [
    'a canceled question leaves the disk untouched',
    wipe({ confirmRun: run('canceled', { args: { request: 1 } }) }),
    null,
    'Canceled',
    1,
    false,
  ],
  [
    'a wipe in progress starts nothing more',
    wipe({ confirmRun: asked('yes'), wipeRun: run('running', { args: { request: 1 } }) }),
    null,
    'Wiping',
    null,
    false,
  ],
  [
    'a failed wipe is retried without asking again',
    wipe({ confirmRun: asked('yes'), wipeRun: wiped({ state: 'failed', error: 'boom' }) }),
    'wipe',
    'Wiping',
    null,
    false,
  ],
  ['done once the agent reports no filesystem', wipe({ status: { hasFilesystem: false }, wipeRun: wiped() }), null, 'Wiped', 1, false],
  [
    'the agent gets time to report the wipe',
    wipe({ confirmRun: asked('yes'), wipeRun: wiped({ completedAt: NOW - 100 }) }),
    null,
    'WaitingForAgent',
    null,
    false,
  ],
  [
    'a disk that holds an OSD is never wiped',
    wipe({ disk: diskDoc({ osd: true, wipeGeneration: 1 }, { osdId: 3 }) }),
    null,
    'WipeRefused',
    null,
    true,
  ],
  ['the system disk is never wiped', wipe({ status: { isSystem: true } }), null, 'WipeRefused', null, true],
  [
    'the monitor disk is never wiped',
    wipe({ node: hostNode({ monDisk: '9c1a0f3e-2b4d-4c6e-8f70-1a2b3c4d5e6f' }) }),
    null,
    'WipeRefused',
    null,
    true,
  ],
  [
    'even after "yes", a disk that became an OSD disk is not wiped',
    wipe({ disk: diskDoc({ osd: true, wipeGeneration: 1 }, { hasFilesystem: true }), confirmRun: asked('yes') }),
    null,
    'WipeRefused',
    null,
    true,
  ],
  ['nothing on a node that is not active', wipe({ node: hostNode({ phase: 'offline' }) }), null, 'NodeNotActive', null, true],
  ['an absent disk blocks', wipe({ status: { present: false } }), null, 'DiskAbsent', null, true],
];

for (const [title, input, step, reason, ack, blocked] of wipeTable) {
  test(`wipe plan: ${title}`, (t) => {
    const p = planWipe(input);
    t.is((p.step?.kind as string | undefined) ?? null, step);
    t.is(p.condition?.reason ?? null, reason);
    t.is(p.ack, ack);
    t.is(p.gate !== null, blocked);
  });
}

test('wipe plan: the question names the node, the device, its serial and what is on it', (t) => {
  const p = planWipe(
    wipe({ disk: diskDoc({ osd: false, wipeGeneration: 1 }, { hasFilesystem: true, vendor: 'Seagate', model: 'ST4000' }) }),
  );
  if (p.step?.kind !== 'confirm') return t.fail('no question');
  t.regex(p.step.args.prompt, /\/dev\/sdb on node-1 \(serial SER1, Seagate ST4000\).*a filesystem/);
  t.is(p.step.args.request, 1);
});

test('osd gates: ok-to-stop lets through only an ok for exactly the OSDs that run', (t) => {
  t.true(okToStopGate('restart', [], null).ok, 'no OSDs: nothing to ask');
  t.false(okToStopGate('restart', [1, 2], null).ok, 'not asked: no');
  t.true(okToStopGate('restart', [2, 1], okToStopAnswer([1, 2], { ok: true, osds: [1, 2] })).ok);
  t.false(okToStopGate('restart', [1, 2, 3], okToStopAnswer([1, 2], { ok: true, osds: [1, 2] })).ok, 'asked about other ids');
  const no = okToStopGate(
    'shutdown',
    [1],
    okToStopAnswer([1], { ok: false, reason: 'unsafe to stop osd(s) at this time (12 PGs are or would become offline)', osds: [1] }),
  );
  t.like(no, { ok: false, reason: 'OsdNotOkToStop' });
  if (!no.ok) t.regex(no.message, /shutdown would stop osd\.1: unsafe to stop .*12 PGs.*nothing was sent/);
  const silent = okToStopGate('restart', [1], okToStopAnswer([1], { error: 'timed out' }));
  if (!silent.ok) t.regex(silent.message, /did not answer ok-to-stop: timed out/);
  else t.fail('no answer must block');
});

test('osd gates: safe-to-destroy needs every id safe', (t) => {
  const base = { safeIds: [] as number[], activeIds: [] as number[], missingStatsIds: [] as number[], storedPgIds: [] as number[] };
  t.true(safeToDestroyGate([3], { ...base, safe: true, safeIds: [3] }).ok);
  const active = safeToDestroyGate([3, 4], {
    ...base,
    safe: false,
    safeIds: [3],
    activeIds: [4],
    reason: 'OSD(s) 4 have PGs currently mapped to them',
  });
  t.like(active, { ok: false, reason: 'OsdNotSafeToDestroy' });
  if (!active.ok) t.regex(active.message, /osd\.3, osd\.4 cannot be destroyed: OSD\(s\) 4 have PGs/);
  t.false(safeToDestroyGate([3], null).ok);
  t.false(safeToDestroyGate([3], { error: 'no mgr' }).ok);
});

// The node's own OSDs alone were the gate before #15; the disruption budget asks Ceph about the
// whole set that would be down together (test/reconcilers/disruption-gate.test.ts has the table),
// and every refusal reads DisruptionBudget with Ceph's reason in its message.
const osdAnswer = (ids: number[], ok: boolean, reason?: string): OsdStopReport => ({
  ...osdStopRefused(ids, reason ?? ''),
  ok,
  ...(ok ? { reason: undefined } : {}),
});
function restarting(osds: number[], answers?: StopAnswers): NodeObserved {
  const r = report('boot-1');
  r.daemons.osds = osds;
  return nodeObserved(
    {
      node: node('active').restartRequested(1, 0).build(),
      obs: observation({ lastReportAt: NOW - 100, report: r }),
      disruption: { limits: { maxUnavailable: 1, maxDisruptions: 1 }, mine: null, held: [], stale: [], ...(answers ? { answers } : {}) },
    },
    NOW,
  );
}

const nodeGateTable: Array<[string, NodeObserved, string | null, string | null]> = [
  ['a node without OSDs restarts without asking', restarting([]), 'node.restart', null],
  ['a node with OSDs is not restarted before Ceph is asked', restarting([1, 2]), null, 'DisruptionBudget'],
  // #15 part 3: noout for its OSDs goes first under the new lease, then the restart.
  [
    'ok to stop: noout is set first, then the restart is sent',
    restarting([1, 2], { osd: osdAnswer([1, 2], true) }),
    'ceph.osd.noout',
    null,
  ],
  [
    'not ok to stop: blocked, nothing sent',
    restarting([1, 2], { osd: osdAnswer([1, 2], false, 'unsafe to stop osd(s) at this time (3 PGs are or would become offline)') }),
    null,
    'DisruptionBudget',
  ],
  ['Ceph silent: blocked, nothing sent', restarting([1], { osd: { error: 'timed out' } }), null, 'DisruptionBudget'],
];

for (const [title, input, run, blocked] of nodeGateTable) {
  test(`node plan osd gate: ${title}`, (t) => {
    const p = planNode(input);
    t.is((p.step?.taskName as string | undefined) ?? null, run);
    t.is(p.gate?.reason ?? null, blocked);
    if (blocked) t.is(p.status.phase, 'active', 'a refused restart leaves the node as it is');
    t.is(pendingRun(input)?.taskName ?? null, 'node.restart', 'observe sees that a restart is due, and asks');
  });
}
