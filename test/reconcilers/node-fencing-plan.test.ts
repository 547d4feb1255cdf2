// Fencing a hung node (`fencing: bmc`), pure: the grace, the BMC read, the power-cycle under a
// `fence` lease of the disruption budget, the wait for the new boot, the retries, and the nodes
// fencing leaves alone.
import test from 'ava';
import type { DisruptionLease } from '../../src/model/disruption-kinds.js';
import { planNode, type NodeObserved } from '../../reconcilers/node/plan.js';
import type { NodeDisruptionObserved } from '../../reconcilers/node/disruption.js';
import type { PowerRunView } from '../../reconcilers/node/power.js';
import { T0, node, nodeObserved, observation, report } from '../builders.js';

const HB = 10_000;
const GRACE = 60_000;
const BOOT_WAIT = 30_000;
const now = T0 + 1_000_000;
const BMC = { address: '198.51.100.2', username: 'quarry', password: 'pw' };
const ONE = { maxUnavailable: 1, maxDisruptions: 1 };

/** Silent since `silentFor` ms ago; its last report ran osd.3. */
function hung(
  silentFor: number,
  over: { fencing?: 'bmc' | 'none'; runs?: Partial<NodeObserved['runs']>; disruption?: Partial<NodeDisruptionObserved> | null } = {},
): NodeObserved {
  const r = report('boot-1');
  r.daemons.osds = [3];
  const n = node('offline')
    .withSpec({ bmc: BMC, fencing: over.fencing ?? 'bmc' })
    .withStatus({ daemons: { osds: [3] } })
    .build();
  return nodeObserved(
    {
      node: n,
      obs: observation({ lastReportAt: now - silentFor, report: r }),
      runs: { restart: null, shutdown: null, ...over.runs },
      heartbeatTimeoutMs: HB,
      fenceAfterMs: GRACE,
      powerOnBootMs: BOOT_WAIT,
      domain: 'rack:r1',
      ...(over.disruption === null ? {} : { disruption: { limits: ONE, mine: null, held: [], stale: [], ...over.disruption } }),
    },
    now,
  );
}

const since = (silentFor: number) => now - silentFor;
const bmcRun = (state: PowerRunView['state'], request: number, over: Partial<PowerRunView> = {}): PowerRunView => ({
  id: 'b1',
  state,
  attempt: 1,
  request,
  completedAt: state === 'pending' || state === 'running' ? null : now - 1_000,
  ...over,
});
const blocked = (p: ReturnType<typeof planNode>) => p.status.conditions?.find((c) => c.type === 'Blocked' && c.status === 'True');
const fenceLease = (silentFor: number): DisruptionLease => ({
  holderKind: 'Node',
  holderId: 'x',
  what: 'fence (power-cycle) of node-1',
  since: new Date(since(silentFor)).toISOString(),
  kind: 'fence',
  nodes: ['x'],
  domains: ['rack:r1'],
});

test('node fencing plan: a node silent for less than the grace is only offline, and looked at again when the grace ends', (t) => {
  const p = planNode(hung(HB + 5_000));
  t.is(p.step, null);
  t.is(p.status.phase, 'offline');
  t.is(blocked(p), undefined);
  t.is(p.requeueAfterMs, GRACE - HB - 5_000 + 1);
});

test('node fencing plan: past the grace, its BMC is asked first whether the power is on, keyed by the silence', (t) => {
  const p = planNode(hung(GRACE + 1));
  t.like(p.step, { taskName: 'bmc.power-status', request: since(GRACE + 1), attempt: 1 });
  t.is(p.lease.take, null, 'reading the power takes no lease');
  t.is(p.status.phase, 'offline');
});

test('node fencing plan: a machine its BMC reads off is not power-cycled: Blocked MachineOff, power-on left to the operator', (t) => {
  const p = planNode(hung(GRACE + 1, { runs: { fenceStatus: bmcRun('completed', since(GRACE + 1), { was: 'off' }) } }));
  t.is(p.step, null);
  t.like(blocked(p), { reason: 'MachineOff' });
  t.regex(blocked(p)!.message, /power is off: it is not power-cycled; powering it on \(node\.power-on\) is the operator's call/);
});

test('node fencing plan: power on and silent is a hung machine: power-cycled with a fence lease, the run log saying why', (t) => {
  const s = since(GRACE + 1);
  const p = planNode(hung(GRACE + 1, { runs: { fenceStatus: bmcRun('completed', s, { was: 'on' }) } }));
  t.like(p.step, { taskName: 'bmc.power-cycle', request: s, attempt: 1 });
  t.like(p.lease.take?.request, { kind: 'fence', domains: ['rack:r1'], what: 'fence (power-cycle) of node-1' });
  const notes = p.lease.notes.join('\n');
  t.regex(notes, new RegExp(`silent since ${new Date(s).toISOString()}`));
  t.regex(notes, /its BMC said the power is on \(run b1\): a hung machine/);
  t.regex(notes, /admitted by the disruption budget: lease "fence \(power-cycle\) of node-1" on rack:r1/);
  t.like(p.status.disruption, { state: 'held', kind: 'fence' });
});

test('node fencing plan: another failure domain holding a lease keeps the cycle waiting (Blocked DisruptionBudget)', (t) => {
  const other: DisruptionLease = { ...fenceLease(GRACE + 1), holderId: 'n2', what: 'fence (power-cycle) of node-2', domains: ['rack:r2'] };
  const p = planNode(
    hung(GRACE + 1, { runs: { fenceStatus: bmcRun('completed', since(GRACE + 1), { was: 'on' }) }, disruption: { held: [other] } }),
  );
  t.is(p.step, null);
  t.is(p.lease.take, null);
  t.like(blocked(p), { reason: 'DisruptionBudget' });
  t.regex(blocked(p)!.message, /fence would stop osd\.3: at most 1 failure domain .*held by fence \(power-cycle\) of node-2/);
  t.like(p.status.disruption, { state: 'waiting', kind: 'fence' });
});

test('node fencing plan: a fence asks Ceph nothing, and takes a lease even for a node without Ceph daemons', (t) => {
  const o = hung(GRACE + 1, { runs: { fenceStatus: bmcRun('completed', since(GRACE + 1), { was: 'on' }) } });
  o.node.status.daemons = { osds: [] };
  const p = planNode(o);
  t.is(p.step?.taskName, 'bmc.power-cycle');
  t.like(p.lease.take?.request, { kind: 'fence' });
  t.regex(p.lease.notes.join('\n'), /Ceph was not asked/);
});

test('node fencing plan: after the cycle it waits for the new boot under its lease, then cycles again, then FenceFailed', (t) => {
  const s = since(GRACE + 1);
  const waiting = planNode(
    hung(GRACE + 1, { runs: { fenceCycle: bmcRun('completed', s, { was: 'on' }) }, disruption: { mine: fenceLease(GRACE + 1) } }),
  );
  t.is(waiting.step, null);
  t.false(waiting.lease.release);
  t.like(waiting.status.disruption, { state: 'held', kind: 'fence' });
  t.regex(waiting.status.conditions!.find((c) => c.type === 'Ready')!.message, /waiting for its agent to report from a new boot/);
  t.is(waiting.requeueAfterMs, BOOT_WAIT - 1_000);
  const again = planNode(
    hung(GRACE + 1, {
      runs: { fenceCycle: bmcRun('completed', s, { was: 'on', completedAt: now - BOOT_WAIT - 1 }) },
      disruption: { mine: fenceLease(GRACE + 1) },
    }),
  );
  t.like(again.step, { taskName: 'bmc.power-cycle', attempt: 2 });
  t.is(again.lease.take, null, 'under the lease it holds');
  t.regex(again.lease.notes.join('\n'), /attempt 2: the last cycle brought no report/);
  const failed = planNode(
    hung(GRACE + 1, {
      runs: { fenceCycle: bmcRun('completed', s, { was: 'on', attempt: 3, completedAt: now - BOOT_WAIT - 1 }) },
      disruption: { mine: fenceLease(GRACE + 1) },
    }),
  );
  t.is(failed.step, null);
  t.like(blocked(failed), { reason: 'FenceFailed' });
  t.true(failed.lease.release, 'the lease goes back');
  t.is(failed.status.disruption, undefined);
});

test('node fencing plan: the agent reporting again gives the fence lease back', (t) => {
  const o = hung(GRACE + 1, {
    runs: { fenceCycle: bmcRun('completed', since(GRACE + 1), { was: 'on' }) },
    disruption: { mine: fenceLease(GRACE + 1) },
  });
  o.obs = observation({ lastReportAt: now - 10, report: report('boot-2') });
  const p = planNode(o);
  t.is(p.step, null);
  t.true(p.lease.release);
  t.is(p.status.phase, 'active');
});

test('node fencing plan: a BMC that cannot be read is retried, then FenceFailed without a cycle', (t) => {
  const s = since(GRACE + 1);
  const backoff = planNode(
    hung(GRACE + 1, { runs: { fenceStatus: bmcRun('failed', s, { error: 'BMC x: no answer', completedAt: now - 100 }) } }),
  );
  t.is(backoff.step, null);
  t.true((backoff.requeueAfterMs ?? 0) > 0);
  const retry = planNode(
    hung(GRACE + 1, { runs: { fenceStatus: bmcRun('failed', s, { error: 'BMC x: no answer', completedAt: now - 60_000 }) } }),
  );
  t.like(retry.step, { taskName: 'bmc.power-status', attempt: 2 });
  const failed = planNode(hung(GRACE + 1, { runs: { fenceStatus: bmcRun('failed', s, { attempt: 3, error: 'BMC x: no answer' }) } }));
  t.is(failed.step, null);
  t.like(blocked(failed), { reason: 'FenceFailed' });
  t.regex(blocked(failed)!.message, /could not be read 3 times \(BMC x: no answer\): not power-cycled/);
});

test('node fencing plan: nodes fencing leaves alone: no fencing: bmc, no BMC, shut down on request, booting', (t) => {
  const none = planNode(hung(GRACE + 1, { fencing: 'none' }));
  t.is(none.step, null);
  t.is(none.status.phase, 'offline');
  t.is(blocked(none), undefined);
  const noBmc = hung(GRACE + 1);
  delete noBmc.node.spec.bmc;
  t.is(planNode(noBmc).step, null);
  const off = hung(GRACE + 1);
  off.node.spec.shutdownGeneration = 1;
  off.node.status.observedShutdownGeneration = 1;
  off.runs.shutdown = { id: 's', state: 'completed', attempt: 1, request: 1, bootId: 'boot-1', completedAt: now - GRACE - 10 };
  const offPlan = planNode(off);
  t.is(offPlan.step, null);
  t.is(offPlan.status.phase, 'offline');
  const booting = hung(GRACE + 1);
  booting.obs.boots = [{ stage: 'pxe', at: now - 5 }];
  t.is(planNode(booting).step, null);
  const restartPending = hung(GRACE + 1);
  restartPending.node.spec.restartGeneration = 1;
  t.is(planNode(restartPending).step, null, 'a pending request is the node loop’s, not fencing’s');
});

test('node fencing plan: a node in maintenance is the operator’s: silent past the grace, its power is never read nor cycled', (t) => {
  const m = hung(GRACE + 1, {
    disruption: {
      mine: { ...fenceLease(GRACE + 1), what: 'maintenance of node-1', kind: 'maintenance', stops: { osds: [3], mons: [], mds: [] } },
    },
  });
  m.node.spec.maintenance = true;
  m.node.status.phase = 'maintenance';
  const p = planNode(m);
  t.false(['bmc.power-status', 'bmc.power-cycle'].includes(p.step?.taskName ?? ''), JSON.stringify(p.step));
  // The same node out of maintenance is fenced: the test above is not vacuous.
  t.is(planNode(hung(GRACE + 1)).step?.taskName, 'bmc.power-status');
});
