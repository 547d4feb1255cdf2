// The node loop's part in the disruption budget, pure: when a restart or shutdown goes (with its
// lease, a lease to take, none), when it waits and what it shows, and when the lease goes back.
import test from 'ava';
import type { DisruptionLease } from '../../src/model/disruption-kinds.js';
import { osdStopRefused } from '../../src/clients/ceph-stop-gates.js';
import { planNode, type NodeObserved } from '../../reconcilers/node/plan.js';
import { keepLease, stopsOfNode } from '../../reconcilers/node/disruption.js';
import type { NodeDisruptionObserved } from '../../reconcilers/node/disruption.js';
import { node, nodeObserved, observation, report } from '../builders.js';
import { NOW } from './plan-fixtures.js';

const SINCE = '2026-01-01T00:00:00.000Z';
const ONE = { maxUnavailable: 1, maxDisruptions: 1 };

function restarting(d: Partial<NodeDisruptionObserved> | undefined, osds = [1, 2], mon = true): NodeObserved {
  const r = report('boot-1');
  r.daemons.osds = osds;
  r.daemons.mon = mon;
  return nodeObserved(
    {
      node: node('active').restartRequested(1, 0).build(),
      obs: observation({ lastReportAt: NOW - 100, report: r }),
      domain: 'rack:r1',
      disruptionRecheckMs: 500,
      ...(d ? { disruption: { limits: ONE, mine: null, held: [], stale: [], ...d } } : {}),
    },
    NOW,
  );
}

const other: DisruptionLease = {
  holderKind: 'Node',
  holderId: 'n2',
  what: 'restart of node-2',
  since: SINCE,
  kind: 'restart',
  nodes: ['n2'],
  domains: ['rack:r2'],
  stops: { osds: [5], mons: ['node-2'], mds: [] },
};

test('node disruption: admitted, the run starts with a lease to take against the leases Ceph was asked about', (t) => {
  const o = restarting({ answers: { osd: { ...osdStopRefused([1, 2], ''), ok: true }, mon: okMon(['host']) } });
  // The lab's builder names the node; the monitor is named by its hostname.
  o.disruption!.answers!.mon = okMon([o.node.spec.hostname]);
  const p = planNode(o);
  // #15 part 3: the first step under the new lease is noout for its OSDs; the restart follows.
  t.is(p.step?.taskName, 'ceph.osd.noout');
  t.like(p.step, { set: true, lease: o.nowIso });
  t.like(p.lease.take?.request, { kind: 'restart', domains: ['rack:r1'], stops: { osds: [1, 2], mons: [o.node.spec.hostname], mds: [] } });
  t.is(p.lease.take?.basis, '');
  t.regex(p.lease.notes.join('\n'), /admitted by the disruption budget: lease "restart of .*" on rack:r1 \(no other lease held\)/);
  t.like(p.status.disruption, { state: 'held', kind: 'restart' });
});

test('node disruption: another domain holds a lease: waiting, naming it, woken by its release or after the recheck', (t) => {
  const p = planNode(restarting({ held: [other] }));
  t.is(p.step, null);
  t.is(p.gate?.reason, 'DisruptionBudget');
  t.regex(
    p.gate?.message ?? '',
    /restart would stop osd\.1, osd\.2, mon\..*: at most 1 failure domain .*held by restart of node-2 since 2026.*nothing was sent/,
  );
  t.like(p.status.disruption, { state: 'waiting', kind: 'restart', heldBy: [`restart of node-2 since ${SINCE}`] });
  t.is(p.requeueAfterMs, 500);
  t.is(p.status.phase, 'active', 'a waiting node is left as it is');
});

test('node disruption: a lease it holds lets the run go without asking anyone', (t) => {
  const mine: DisruptionLease = { ...other, holderId: 'me', what: 'restart of me', domains: ['rack:r1'] };
  const o = restarting({ mine, held: [other] });
  // noout was set under it already (#15 part 3: the restart goes after it).
  o.runs.noout = { id: 'r-noout', state: 'completed', attempt: 1, lease: SINCE, set: true, completedAt: NOW - 50 };
  const p = planNode(o);
  t.is(p.step?.taskName, 'node.restart');
  t.is(p.lease.take, null);
  t.false(p.lease.release);
  t.like(p.status.disruption, { state: 'held', since: SINCE });
  t.deepEqual(p.lease.notes, [`sent under the disruption lease it holds: restart of me since ${SINCE}`]);
});

test('node disruption: a node running no Ceph daemon restarts without a lease, and its run log says so', (t) => {
  const p = planNode(restarting({ held: [other] }, [], false));
  t.is(p.step?.taskName, 'node.restart');
  t.is(p.lease.take, null);
  t.regex(p.lease.notes[0] ?? '', /stops no Ceph daemon: sent without a disruption lease/);
});

test('node disruption: Ceph not due again keeps the last verdict and its time to look again', (t) => {
  const o = restarting({ notDue: { retryInMs: 123 } });
  const message = 'restart would stop osd.1: OsdNotOkToStop: stopping osd.1: unsafe; nothing was sent';
  o.node.status.conditions = [
    { type: 'Blocked', status: 'True', reason: 'DisruptionBudget', message, lastTransitionTime: SINCE, observedGeneration: 1 },
  ];
  const p = planNode(o);
  t.is(p.gate?.message, message);
  t.is(p.requeueAfterMs, 123);
});

const facts = (over: Partial<Parameters<typeof keepLease>[1]> = {}): Parameters<typeof keepLease>[1] => ({
  pending: false,
  error: false,
  offline: false,
  backFromBoot: true,
  running: { osds: [1, 2], mon: true },
  wanted: { osds: [1, 2], mon: true, mds: false },
  ...over,
});
const restartLease: DisruptionLease = { ...other, stops: { osds: [1, 2], mons: ['h'], mds: [] } };
const keepTable: Array<[string, DisruptionLease, Parameters<typeof keepLease>[1], boolean]> = [
  ['a restart still asked for keeps it', restartLease, facts({ pending: true, backFromBoot: false }), true],
  ['a restart back from its boot with its daemons gives it back', restartLease, facts(), false],
  ['back from its boot but an OSD not running yet keeps it', restartLease, facts({ running: { osds: [1], mon: true } }), true],
  ['back but its monitor not running yet keeps it', restartLease, facts({ running: { osds: [1, 2], mon: false } }), true],
  [
    'an OSD no longer wanted is not waited for',
    restartLease,
    facts({ running: { osds: [1], mon: true }, wanted: { osds: [1], mon: true, mds: false } }),
    false,
  ],
  ['not yet back from the boot keeps it', restartLease, facts({ backFromBoot: false }), true],
  ['a request failed for good gives it back', restartLease, facts({ pending: true, error: true }), false],
  [
    'a shutdown acknowledged (off) gives it back',
    { ...restartLease, kind: 'shutdown' },
    facts({ offline: true, backFromBoot: false }),
    false,
  ],
  ['a shutdown still asked for keeps it', { ...restartLease, kind: 'shutdown' }, facts({ pending: true }), true],
];
for (const [title, lease, f, keep] of keepTable) {
  test(`node disruption lease: ${title}`, (t) => {
    t.is(keepLease(lease, f), keep);
  });
}

test('node disruption: a node stops its OSDs, and its monitor and MDS by its hostname', (t) => {
  t.deepEqual(stopsOfNode('h1', { osds: [3, 1], mon: true, mds: false }), { osds: [1, 3], mons: ['h1'], mds: [] });
  t.deepEqual(stopsOfNode('h1', undefined), { osds: [], mons: [], mds: [] });
});

function okMon(mons: string[]) {
  return { ok: true, mons, remaining: [], message: `quorum should be preserved after stopping [${mons.join(',')}]` };
}

test('node disruption: a report from before this controller led (loaded at its election) stops nothing — the restart waits for the next report', (t) => {
  // The stored report says the node runs nothing: the daemon the old leader started just
  // before it died is not in it. Taken at its word, the restart would go without a lease.
  const o = restarting({}, [], false);
  o.startedAt = NOW - 50;
  o.obs.lastReportAt = NOW - 100;
  const waiting = planNode(o);
  t.is(waiting.step, null, 'nothing is stopped on a report from before the election');
  t.is(waiting.lease.take, null);
  t.like(
    waiting.status.conditions?.find((c) => c.type === 'Blocked'),
    { status: 'True', reason: 'AwaitingReport' },
  );
  // The agent's first report since: what it says goes.
  o.obs.lastReportAt = NOW - 10;
  const going = planNode(o);
  t.is(going.step?.taskName, 'node.restart');
});
