// The node loop's maintenance and noout window, pure (#15 part 3): entering takes a maintenance
// lease through the budget, sets noout, stops the daemons; leaving starts them, waits for them,
// clears noout, gives the lease back. Restarts and shutdowns set noout under their lease first
// and clear it before the lease goes back.
import test from 'ava';
import type { DisruptionLease } from '../../src/model/disruption-kinds.js';
import { osdStopRefused } from '../../src/clients/ceph-stop-gates.js';
import { planNode, pendingRequest, type NodeObserved } from '../../reconcilers/node/plan.js';
import type { NodeDisruptionObserved } from '../../reconcilers/node/disruption.js';
import type { LeaseRunView } from '../../reconcilers/node/maintenance.js';
import { planDaemon } from '../../reconcilers/daemon/plan.js';
import { nooutScript } from '../../reconcilers/node/maintenance-scripts.js';
import { node, nodeObserved, observation, report } from '../builders.js';
import { NOW } from './plan-fixtures.js';

const SINCE = '2026-01-01T00:00:00.000Z';
const ONE = { maxUnavailable: 1, maxDisruptions: 1 };

const other: DisruptionLease = {
  holderKind: 'Node',
  holderId: 'n2',
  what: 'maintenance of node-2',
  since: SINCE,
  kind: 'maintenance',
  nodes: ['n2'],
  domains: ['rack:r2'],
  stops: { osds: [5], mons: [], mds: [] },
};

const lease = (kind: DisruptionLease['kind'] = 'maintenance', osds = [1, 2]): DisruptionLease => ({
  holderKind: 'Node',
  holderId: 'me',
  what: `${kind} of me`,
  since: SINCE,
  kind,
  nodes: ['me'],
  domains: ['rack:r1'],
  stops: { osds, mons: [], mds: [] },
});

const leaseRun = (state: LeaseRunView['state'], over: Partial<LeaseRunView> = {}): LeaseRunView => ({
  id: `run-${state}`,
  state,
  attempt: 1,
  lease: SINCE,
  completedAt: state === 'completed' || state === 'failed' ? NOW - 50 : null,
  ...over,
});

/** A node reporting `osds` (and a monitor), maintenance wanted or not, the budget as `d` says. */
function nodeIn(
  opts: {
    wanted?: boolean;
    d?: Partial<NodeDisruptionObserved>;
    osds?: number[];
    running?: number[];
    phase?: 'active' | 'maintenance';
    runs?: Partial<NodeObserved['runs']>;
  } = {},
): NodeObserved {
  const r = report('boot-1');
  r.daemons.osds = opts.running ?? opts.osds ?? [1, 2];
  const n = node(opts.phase ?? 'active').build();
  n.id = 'me';
  if (opts.wanted ?? true) n.spec.maintenance = true;
  const o = nodeObserved(
    {
      node: n,
      obs: observation({ lastReportAt: NOW - 100, report: r }),
      domain: 'rack:r1',
      disruptionRecheckMs: 500,
      disruption: { limits: ONE, mine: null, held: [], stale: [], ...opts.d },
    },
    NOW,
  );
  o.runs = { ...o.runs, ...opts.runs };
  // Its Disk documents: the OSDs it runs are wanted there (a maintenance waits for those).
  for (const id of opts.osds ?? [1, 2])
    o.disks.set(`d${id}`, { spec: { osd: true }, status: { osdId: id } } as unknown as NonNullable<ReturnType<typeof o.disks.get>>);
  return o;
}

test('node maintenance: admitted, it takes a maintenance lease and sets noout for its host first', (t) => {
  const o = nodeIn({ d: { answers: { osd: { ...osdStopRefused([1, 2], ''), ok: true } } } });
  const p = planNode(o);
  t.like(p.step, { taskName: 'ceph.osd.noout', set: true, lease: o.nowIso, attempt: 1 });
  t.like(p.lease.take?.request, { kind: 'maintenance', domains: ['rack:r1'], stops: { osds: [1, 2] } });
  t.regex(p.lease.notes.join('\n'), /lease "maintenance of .*" on rack:r1/);
  t.is(p.status.phase, 'maintenance');
  t.like(p.status.disruption, { state: 'held', kind: 'maintenance' });
  t.is(p.status.conditions?.find((c) => c.type === 'Progressing')?.status, 'True');
});

test('node maintenance: a node without OSDs takes its lease all the same and goes straight to stopping its daemons', (t) => {
  const o = nodeIn({ osds: [] });
  const p = planNode(o);
  t.like(p.step, { taskName: 'node.daemons-stop', lease: o.nowIso });
  t.like(p.lease.take?.request, { kind: 'maintenance', stops: { osds: [], mons: [], mds: [] } });
});

test('node maintenance: another domain holds a lease: waiting with DisruptionBudget naming it, the node left active', (t) => {
  const p = planNode(nodeIn({ d: { held: [other] } }));
  t.is(p.step, null);
  t.is(p.gate?.reason, 'DisruptionBudget');
  t.regex(p.gate?.message ?? '', /maintenance would stop osd\.1, osd\.2: at most 1 failure domain .*held by maintenance of node-2/);
  t.like(p.status.disruption, { state: 'waiting', kind: 'maintenance', heldBy: [`maintenance of node-2 since ${SINCE}`] });
  t.is(p.status.phase, 'active');
  t.is(p.requeueAfterMs, 500);
});

test('node maintenance: Ceph says no: waiting with its reason', (t) => {
  const refused = osdStopRefused([1, 2], 'unsafe to stop osd(s) at this time (3 PGs are or would become offline)');
  const p = planNode(nodeIn({ d: { answers: { osd: refused } } }));
  t.is(p.step, null);
  t.regex(p.gate?.message ?? '', /OsdNotOkToStop/);
});

test('node maintenance: observe asks the budget for a maintenance lease, and for nothing once withdrawn', (t) => {
  const o = nodeIn();
  delete o.disruption;
  t.like(pendingRequest(o), { kind: 'maintenance', stops: { osds: [1, 2] } });
  const w = nodeIn({ wanted: false });
  delete w.disruption;
  t.is(pendingRequest(w), null);
});

test('node maintenance: withdrawn while waiting, it simply stops waiting', (t) => {
  const o = nodeIn({ wanted: false, d: { held: [other] } });
  o.node.status.disruption = { state: 'waiting', kind: 'maintenance', since: SINCE, heldBy: ['x'], reason: 'y' };
  const p = planNode(o);
  t.is(p.step, null);
  t.is(p.gate, null);
  t.is(p.status.disruption, undefined);
  t.is(p.status.phase, 'active');
});

test('node maintenance: in its lease with noout set, the daemons are stopped under the same lease', (t) => {
  const p = planNode(nodeIn({ phase: 'maintenance', d: { mine: lease() }, runs: { noout: leaseRun('completed', { set: true }) } }));
  t.like(p.step, { taskName: 'node.daemons-stop', lease: SINCE });
  t.is(p.lease.take, null);
  t.false(p.lease.release);
  t.is(p.status.phase, 'maintenance');
});

test('node maintenance: found again after a crash: a noout run under way is waited for, not sent twice', (t) => {
  const p = planNode(nodeIn({ d: { mine: lease() }, runs: { noout: leaseRun('running', { set: true }) } }));
  t.is(p.step, null);
  t.is(p.status.phase, 'maintenance');
  t.regex(p.status.conditions?.find((c) => c.type === 'Ready')?.message ?? '', /noout .* \(run run-running is running\)/);
});

test('node maintenance: a failed stop is retried after its backoff', (t) => {
  const runs = { noout: leaseRun('completed', { set: true }), stop: leaseRun('failed') };
  const waiting = planNode(nodeIn({ d: { mine: lease() }, runs }));
  t.is(waiting.step, null);
  t.is(waiting.requeueAfterMs, 950);
  const o = nodeIn({ d: { mine: lease() }, runs });
  o.now += 1_000;
  t.like(planNode(o).step, { taskName: 'node.daemons-stop', attempt: 2 });
});

test('node maintenance: stopped: phase maintenance, lease held, nothing more to do', (t) => {
  const p = planNode(
    nodeIn({ running: [], d: { mine: lease() }, runs: { noout: leaseRun('completed', { set: true }), stop: leaseRun('completed') } }),
  );
  t.is(p.step, null);
  t.false(p.lease.release);
  t.is(p.status.phase, 'maintenance');
  t.like(p.status.disruption, { state: 'held', kind: 'maintenance', since: SINCE });
  const ready = p.status.conditions?.find((c) => c.type === 'Ready');
  t.like(ready, { status: 'False', reason: 'InMaintenance' });
  t.is(p.status.conditions?.find((c) => c.type === 'Progressing')?.status, 'False');
});

const stopped = { noout: leaseRun('completed', { set: true }), stop: leaseRun('completed') };

test('node maintenance exit: the daemons are started again under the lease', (t) => {
  const p = planNode(nodeIn({ wanted: false, running: [], d: { mine: lease() }, runs: stopped }));
  t.like(p.step, { taskName: 'node.daemons-start', lease: SINCE });
  t.false(p.lease.release);
  t.like(p.status, { phase: 'maintenance' });
  t.is(p.status.conditions?.find((c) => c.type === 'Ready')?.reason, 'LeavingMaintenance');
});

test('node maintenance exit: a stop still under way is waited for before anything starts', (t) => {
  const p = planNode(nodeIn({ wanted: false, d: { mine: lease() }, runs: { ...stopped, stop: leaseRun('running') } }));
  t.is(p.step, null);
  t.false(p.lease.release);
});

test('node maintenance exit: started, the daemons not reported yet: it waits for the agent', (t) => {
  const p = planNode(nodeIn({ wanted: false, running: [], d: { mine: lease() }, runs: { ...stopped, start: leaseRun('completed') } }));
  t.is(p.step, null);
  t.false(p.lease.release);
  t.is(p.status.phase, 'maintenance');
  t.true((p.requeueAfterMs ?? 0) > 0);
});

test('node maintenance exit: the daemons back, noout is cleared before the lease goes back', (t) => {
  const p = planNode(nodeIn({ wanted: false, d: { mine: lease() }, runs: { ...stopped, start: leaseRun('completed') } }));
  t.like(p.step, { taskName: 'ceph.osd.noout', set: false, lease: SINCE });
  t.false(p.lease.release);
  t.is(p.status.phase, 'maintenance');
  t.like(p.status.disruption, { state: 'held' });
});

test('node maintenance exit: daemons never reported back: after the grace it goes on (the daemon loops take over)', (t) => {
  const o = nodeIn({ wanted: false, running: [], d: { mine: lease() }, runs: { ...stopped, start: leaseRun('completed') } });
  o.now += 2 * o.heartbeatTimeoutMs;
  o.obs.lastReportAt = o.now - 100;
  t.like(planNode(o).step, { taskName: 'ceph.osd.noout', set: false });
});

test('node maintenance exit: noout cleared: the lease goes back and the node is active', (t) => {
  const runs = { stop: leaseRun('completed'), start: leaseRun('completed'), noout: leaseRun('completed', { set: false }) };
  const p = planNode(nodeIn({ wanted: false, d: { mine: lease() }, runs }));
  t.is(p.step, null);
  t.true(p.lease.release);
  t.is(p.status.phase, 'active');
  t.is(p.status.disruption, undefined);
});

test('node maintenance exit: withdrawn before anything was stopped, noout is cleared and the lease given back', (t) => {
  const p = planNode(nodeIn({ wanted: false, d: { mine: lease() }, runs: { noout: leaseRun('completed', { set: true }) } }));
  t.like(p.step, { taskName: 'ceph.osd.noout', set: false });
  const done = planNode(nodeIn({ wanted: false, d: { mine: lease() }, runs: { noout: leaseRun('completed', { set: false }) } }));
  t.true(done.lease.release);
});

test('node maintenance asked again while leaving: the daemons started, it goes on leaving (noout cleared), never "in maintenance" with its daemons running', (t) => {
  const p = planNode(nodeIn({ d: { mine: lease() }, runs: { ...stopped, start: leaseRun('completed') } }));
  t.like(p.step, { taskName: 'ceph.osd.noout', set: false, lease: SINCE });
  t.false(p.lease.release);
  t.not(p.status.conditions?.find((c) => c.type === 'Ready')?.reason, 'InMaintenance');
  const starting = planNode(nodeIn({ running: [], d: { mine: lease() }, runs: { ...stopped, start: leaseRun('running') } }));
  t.is(starting.step, null);
  t.regex(starting.status.conditions?.find((c) => c.type === 'Ready')?.message ?? '', /asked again/);
});

test('node maintenance asked again once noout is cleared: the lease goes back; the next pass takes a new lease and sets noout again', (t) => {
  const cleared = { stop: leaseRun('completed'), start: leaseRun('completed'), noout: leaseRun('completed', { set: false }) };
  const p = planNode(nodeIn({ d: { mine: lease() }, runs: cleared }));
  t.is(p.step, null);
  t.true(p.lease.release);
  // Withdrawn before anything stopped, then asked again: no stop goes out without noout.
  const early = planNode(nodeIn({ d: { mine: lease() }, runs: { noout: leaseRun('completed', { set: false }) } }));
  t.not(early.step?.taskName, 'node.daemons-stop');
  t.true(early.lease.release);
  const o = nodeIn({ d: { mine: null, answers: { osd: { ...osdStopRefused([1, 2], ''), ok: true } } }, runs: cleared });
  const anew = planNode(o);
  t.like(anew.step, { taskName: 'ceph.osd.noout', set: true, lease: o.nowIso });
  t.like(anew.lease.take?.request, { kind: 'maintenance' });
});

test('node maintenance: runs of an earlier lease do not count for this one', (t) => {
  const old = {
    noout: leaseRun('completed', { set: false, lease: '2025-01-01T00:00:00.000Z' }),
    stop: leaseRun('completed', { lease: 'x' }),
  };
  const p = planNode(nodeIn({ d: { mine: lease() }, runs: old }));
  t.like(p.step, { taskName: 'ceph.osd.noout', set: true, lease: SINCE });
});

// The noout window of restarts and shutdowns.

function restartingWith(mine: DisruptionLease | null, runs: Partial<NodeObserved['runs']>, back = false): NodeObserved {
  const o = nodeIn({ wanted: false, d: { mine } });
  o.node.spec.restartGeneration = 1;
  if (back) {
    o.node.status.observedRestartGeneration = 0;
    o.obs.report = { ...o.obs.report!, bootId: 'boot-2' };
  }
  o.runs = { ...o.runs, ...runs };
  return o;
}

test('node restart noout: under its lease, noout goes first, the restart once it is set', (t) => {
  const first = planNode(restartingWith(lease('restart'), {}));
  t.like(first.step, { taskName: 'ceph.osd.noout', set: true, lease: SINCE });
  t.is(first.status.phase, 'rebooting');
  const then = planNode(restartingWith(lease('restart'), { noout: leaseRun('completed', { set: true }) }));
  t.is(then.step?.taskName, 'node.restart');
});

test('node restart noout: back from its new boot, noout is cleared before the lease goes back', (t) => {
  const restart = { id: 'r', state: 'completed' as const, attempt: 1, request: 1, bootId: 'boot-1', completedAt: NOW - 500 };
  const p = planNode(restartingWith(lease('restart'), { restart, noout: leaseRun('completed', { set: true }) }, true));
  t.like(p.step, { taskName: 'ceph.osd.noout', set: false });
  t.false(p.lease.release);
  t.is(p.status.observedRestartGeneration, 1);
  t.like(p.status.disruption, { state: 'held', kind: 'restart' });
  const done = planNode(restartingWith(lease('restart'), { restart, noout: leaseRun('completed', { set: false }) }, true));
  t.true(done.lease.release);
  t.is(done.step, null);
});

test('node restart noout: a node that stops no OSD sets none', (t) => {
  const p = planNode(restartingWith(lease('restart', []), {}));
  t.is(p.step?.taskName, 'node.restart');
});

test('node shutdown noout: once the node is off, noout is cleared, then the lease goes back', (t) => {
  const o = nodeIn({ wanted: false, d: { mine: lease('shutdown') } });
  o.node.spec.shutdownGeneration = 1;
  o.node.status.observedShutdownGeneration = 1;
  o.obs = observation({ lastReportAt: NOW - 60_000, report: o.obs.report });
  o.runs.shutdown = { id: 's', state: 'completed', attempt: 1, request: 1, bootId: 'boot-1', completedAt: NOW - 59_000 };
  o.runs.noout = leaseRun('completed', { set: true });
  const p = planNode(o);
  t.is(p.status.phase, 'offline');
  t.like(p.step, { taskName: 'ceph.osd.noout', set: false });
  t.false(p.lease.release);
  o.runs.noout = leaseRun('completed', { set: false });
  t.true(planNode(o).lease.release);
});

test('node maintenance: a restart in maintenance goes on its lease, and the node is back in maintenance after', (t) => {
  const restart = { id: 'r', state: 'completed' as const, attempt: 1, request: 1, bootId: 'boot-1', completedAt: NOW - 500 };
  const o = restartingWith(lease('maintenance'), { ...stopped }, false);
  o.node.spec.maintenance = true;
  t.is(planNode(o).step?.taskName, 'node.restart');
  const after = restartingWith(lease('maintenance'), { ...stopped, restart }, true);
  after.node.spec.maintenance = true;
  after.obs.report!.daemons.osds = [];
  const p = planNode(after);
  t.is(p.status.phase, 'maintenance');
  t.is(p.status.observedRestartGeneration, 1, 'the restart is acknowledged');
  t.false(p.lease.release);
  t.is(p.step, null);
});

test('daemon plan: a node in maintenance says NodeInMaintenance instead of starting its daemons', (t) => {
  const n = node('maintenance').build();
  n.spec.daemons = { mds: {} };
  n.status.daemons = { mds: false };
  const p = planDaemon({
    type: 'mds',
    node: n,
    quorum: true,
    keyExists: true,
    keyRun: null,
    startRun: null,
    now: NOW,
    retryBaseMs: 1_000,
    startGraceMs: 5_000,
  });
  t.is(p.step, null);
  t.like(p.status, { phase: 'blocked', reason: 'NodeInMaintenance' });
  t.is(p.gate?.reason, 'NodeInMaintenance');
});

test('noout script: by host bucket; OSD by OSD when the hostname is no CRUSH node; clearing it then is success', async (t) => {
  const calls: string[] = [];
  const einval = (who: string) => new Error(`Error EINVAL: unable to parse osd id or crush node or device class: "${who}". `);
  const verb = (name: string) => async (_flags: string[], who: string[]) => {
    calls.push(`${name} ${who.join(' ')}`);
    if (who[0] === 'other-name') throw einval(who[0]);
    if (who[0] === 'broken') throw new Error('Error ETIMEDOUT: no manager');
    return { missing: who.filter((w) => w === 'osd.9') };
  };
  const ceph = { osdSetGroup: verb('set'), osdUnsetGroup: verb('unset') };
  const lines: string[] = [];
  const ctx = { signal: new AbortController().signal, log: (_l: string, m: string) => lines.push(m) } as unknown as Parameters<
    ReturnType<typeof nooutScript>
  >[0];
  await nooutScript(ceph, 'node-1', true, [1, 2])(ctx);
  await nooutScript(ceph, 'node-1', false, [1, 2])(ctx);
  t.deepEqual(calls, ['set node-1', 'unset node-1']);
  calls.length = 0;
  await nooutScript(ceph, 'other-name', true, [1, 9])(ctx);
  await nooutScript(ceph, 'other-name', false, [1, 9])(ctx);
  t.deepEqual(calls, ['set other-name', 'set osd.1 osd.9', 'unset other-name', 'unset osd.1 osd.9']);
  t.true(lines.some((l) => /not in the OSD map: osd\.9/.test(l)));
  // Nothing to flag by id: setting fails (nothing would hold its OSDs in), clearing succeeds.
  await t.throwsAsync(nooutScript(ceph, 'other-name', true, [])(ctx), { message: /EINVAL/ });
  await t.notThrowsAsync(nooutScript(ceph, 'other-name', false, [])(ctx));
  await t.throwsAsync(nooutScript(ceph, 'broken', false, [1])(ctx), { message: /ETIMEDOUT/ });
  await t.throwsAsync(nooutScript({}, 'node-1', true, [1])(ctx), { message: /no Ceph client that sets noout/ });
});
