// The node plan's power decisions (pure): a power-on request through the BMC and its outcomes,
// Blocked: NoPowerControl without one, and a shutdown that ends with the BMC's power check.
import test from 'ava';
import { planNode, type NodeObserved, type RunView } from '../../reconcilers/node/plan.js';
import type { PowerRunView } from '../../reconcilers/node/power.js';
import { T0, node, nodeObserved, observation, report } from '../builders.js';

const HB = 10_000;
const now = T0 + 100_000;
const BMC = { address: '198.51.100.2', username: 'quarry', password: 'pw' };

function observed(over: Partial<NodeObserved>): NodeObserved {
  return nodeObserved({ heartbeatTimeoutMs: HB, powerOnBootMs: 60_000, softOffGraceMs: 5_000, ...over }, now);
}

/** A node shut down on request (acknowledged), silent since, with a power-on asked for. */
function offNode(withBmc: boolean) {
  const n = node('offline').build();
  n.spec = { ...n.spec, shutdownGeneration: 1, powerOnGeneration: 1, ...(withBmc ? { bmc: BMC } : {}) };
  n.status = { ...n.status, observedShutdownGeneration: 1 };
  return n;
}
const silent = observation({ lastReportAt: now - HB - 1, report: report('boot-1') });
const powerRun = (state: PowerRunView['state'], over: Partial<PowerRunView> = {}): PowerRunView => ({
  id: 'p1',
  state,
  attempt: 1,
  request: 1,
  completedAt: state === 'pending' || state === 'running' ? null : now - 500,
  ...over,
});
const blocked = (p: ReturnType<typeof planNode>) => p.status.conditions?.find((c) => c.type === 'Blocked');

test('node power plan: a power-on request without a BMC starts nothing and says Blocked: NoPowerControl', (t) => {
  const p = planNode(observed({ node: offNode(false), obs: silent }));
  t.is(p.step, null);
  t.is(p.status.phase, 'offline');
  t.like(blocked(p), { status: 'True', reason: 'NoPowerControl' });
  t.regex(blocked(p)!.message, /declare a BMC or power the machine on by hand/);
  t.is(p.status.observedPowerOnGeneration, undefined, 'the request waits');
});

test('node power plan: with a BMC the request starts bmc.power-on, then waits for the boot, then tries again', (t) => {
  const first = planNode(observed({ node: offNode(true), obs: silent }));
  t.like(first.step, { taskName: 'bmc.power-on', request: 1, attempt: 1 });
  t.is(first.status.phase, 'booting');
  const waiting = planNode(
    observed({ node: offNode(true), obs: silent, runs: { restart: null, shutdown: null, powerOn: powerRun('completed', { was: 'off' }) } }),
  );
  t.is(waiting.step, null);
  t.is(waiting.status.phase, 'booting');
  t.true((waiting.requeueAfterMs ?? 0) > 0);
  const late = planNode(
    observed({
      node: offNode(true),
      obs: silent,
      runs: { restart: null, shutdown: null, powerOn: powerRun('completed', { was: 'off', completedAt: now - 61_000 }) },
    }),
  );
  t.like(late.step, { taskName: 'bmc.power-on', attempt: 2 });
  const failedThrice = planNode(
    observed({
      node: offNode(true),
      obs: silent,
      runs: { restart: null, shutdown: null, powerOn: powerRun('failed', { attempt: 3, error: 'BMC x: no answer' }) },
    }),
  );
  t.is(failedThrice.step, null);
  t.like(blocked(failedThrice), { reason: 'PowerOnFailed' });
  t.regex(blocked(failedThrice)!.message, /BMC x: no answer/);
  const hung = planNode(
    observed({ node: offNode(true), obs: silent, runs: { restart: null, shutdown: null, powerOn: powerRun('completed', { was: 'on' }) } }),
  );
  t.is(hung.step, null);
  t.like(blocked(hung), { reason: 'Unresponsive' });
  // A retry (Quarry died after its first try) that finds the power on waits for the boot.
  const retried = planNode(
    observed({
      node: offNode(true),
      obs: silent,
      runs: { restart: null, shutdown: null, powerOn: powerRun('completed', { was: 'on', attempt: 2 }) },
    }),
  );
  t.is(retried.step, null);
  t.like(retried.status, { phase: 'booting' });
  t.is(blocked(retried)?.status, 'False');
});

test('node power plan: the agent reporting from a new boot acknowledges the power-on; its last words before the shutdown do not', (t) => {
  const sd: RunView = { id: 's1', state: 'completed', attempt: 1, request: 1, bootId: 'boot-1', completedAt: now - 2_000 };
  const lastWords = planNode(
    observed({
      node: offNode(true),
      obs: observation({ lastReportAt: now - 1_000, report: report('boot-1') }),
      runs: { restart: null, shutdown: sd },
    }),
  );
  t.like(lastWords.step, { taskName: 'bmc.power-on' });
  const back = planNode(
    observed({
      node: offNode(true),
      obs: observation({ lastReportAt: now - 1_000, report: report('boot-2') }),
      runs: { restart: null, shutdown: sd },
    }),
  );
  t.is(back.step, null);
  t.is(back.status.observedPowerOnGeneration, 1);
  t.is(back.status.phase, 'active');
});

test('node power plan: declared power: off holds a power-on request', (t) => {
  const n = offNode(true);
  n.spec.power = 'off';
  const p = planNode(observed({ node: n, obs: silent }));
  t.is(p.step, null);
  t.like(blocked(p), { reason: 'PowerDeclaredOff' });
});

test('node power plan: a completed soft shutdown on a node with a BMC is acknowledged only once bmc.power-off completed', (t) => {
  const n = node('shutting-down').build();
  n.spec = { ...n.spec, shutdownGeneration: 1, bmc: BMC };
  const sd: RunView = { id: 's1', state: 'completed', attempt: 1, request: 1, bootId: 'boot-1', completedAt: now - 500 };
  const check = planNode(observed({ node: n, obs: silent, runs: { restart: null, shutdown: sd } }));
  t.like(check.step, { taskName: 'bmc.power-off', request: 1, graceMs: 5_000 });
  t.is(check.status.observedShutdownGeneration, undefined);
  const done = planNode(
    observed({ node: n, obs: silent, runs: { restart: null, shutdown: sd, powerOff: powerRun('completed', { was: 'on' }) } }),
  );
  t.is(done.step, null);
  t.is(done.status.phase, 'offline');
  t.is(done.status.observedShutdownGeneration, 1);
  // Every BMC try failed: the agent's silence confirms it, as on a node without a BMC.
  const fallback = planNode(
    observed({
      node: n,
      obs: silent,
      runs: { restart: null, shutdown: sd, powerOff: powerRun('failed', { attempt: 3, error: 'no answer' }) },
    }),
  );
  t.is(fallback.step, null);
  t.is(fallback.status.observedShutdownGeneration, 1);
});
