import test from 'ava';
import { STALE_JITTER, planNode, type NodeObserved, type RunView } from '../../reconcilers/node/plan.js';
import { diskIdFor } from '../../src/model/ids.js';
import type { NodeStatus } from '../../src/model/kinds.js';
import { NODE_ID, T0, disk, node, nodeObserved, observation, report } from '../builders.js';

const HB = 10_000;

function observed(over: Partial<NodeObserved>): NodeObserved {
  return nodeObserved({ heartbeatTimeoutMs: HB, ...over });
}

const now = T0 + 100_000;
const fresh = (bootId = 'boot-1') => observation({ lastReportAt: now - 1_000, report: report(bootId) });
const run = (state: RunView['state'], over: Partial<RunView> = {}): RunView => ({
  id: 'run-1',
  state,
  attempt: 1,
  request: 1,
  bootId: 'boot-1',
  completedAt: state === 'pending' || state === 'running' ? null : now - 500,
  ...over,
});

/** The task a plan starts, as the table names it. */
type TaskName = NonNullable<ReturnType<typeof planNode>['step']>['taskName'];

const table: Array<{
  title: string;
  input: Partial<NodeObserved>;
  phase: NodeStatus;
  run?: TaskName | null;
  ack?: Record<string, number>;
  blocked?: string;
}> = [
  { title: 'a registered node that never booted is discovered', input: {}, phase: 'discovered' },
  {
    title: 'a first network boot is discovered',
    input: { obs: observation({ boots: [{ at: now - 10, stage: 'pxe' }] }) },
    phase: 'discovered',
  },
  {
    title: 'fetching the image after the boot makes it booting',
    input: {
      obs: observation({
        boots: [
          { at: now - 20, stage: 'pxe' },
          { at: now - 10, stage: 'image' },
        ],
      }),
    },
    phase: 'booting',
  },
  {
    title: 'an agent report after the boot makes it active',
    input: { obs: observation({ boots: [{ at: now - 20, stage: 'pxe' }], lastReportAt: now - 5, report: report() }) },
    phase: 'active',
  },
  {
    title: 'an active node that rebooted by itself is booting',
    input: {
      node: node('active').build(),
      obs: observation({ boots: [{ at: now - 5, stage: 'pxe' }], lastReportAt: now - 50, report: report() }),
    },
    phase: 'booting',
  },
  {
    title: 'a silent agent makes the node offline',
    input: { node: node('active').build(), obs: observation({ lastReportAt: now - HB - 1, report: report() }) },
    phase: 'offline',
  },
  {
    title: 'right after a master restart an unreported node keeps its phase',
    input: { node: node('active').build(), startedAt: now - 1_000 },
    phase: 'active',
  },
  {
    title: 'a restart request on a fresh node starts a restart run',
    input: { node: node('active').restartRequested().build(), obs: fresh() },
    phase: 'rebooting',
    run: 'node.restart',
  },
  {
    title: 'a restart request on an offline node is blocked and starts nothing',
    input: { node: node('active').restartRequested().build(), obs: observation({ lastReportAt: now - HB - 1, report: report() }) },
    phase: 'offline',
    run: null,
    blocked: 'NodeOffline',
  },
  {
    title: 'a running restart run keeps the node rebooting and starts nothing',
    input: { node: node('active').restartRequested().build(), obs: fresh(), runs: { restart: run('running'), shutdown: null } },
    phase: 'rebooting',
    run: null,
  },
  {
    title: 'a completed restart is confirmed only by a report from a new boot',
    input: {
      node: node('rebooting').restartRequested().build(),
      obs: fresh('boot-1'),
      runs: { restart: run('completed'), shutdown: null },
    },
    phase: 'rebooting',
    run: null,
  },
  {
    title: 'a report from a new boot acknowledges the restart',
    input: {
      node: node('rebooting').restartRequested().build(),
      obs: fresh('boot-2'),
      runs: { restart: run('completed'), shutdown: null },
    },
    phase: 'active',
    ack: { observedRestartGeneration: 1 },
  },
  {
    title: 'a failed restart is retried after its backoff',
    input: {
      node: node('rebooting').restartRequested().build(),
      obs: fresh(),
      runs: { restart: run('failed', { completedAt: now - 5_000 }), shutdown: null },
    },
    phase: 'rebooting',
    run: 'node.restart',
  },
  {
    title: 'a failed restart waits out its backoff',
    input: {
      node: node('rebooting').restartRequested().build(),
      obs: fresh(),
      runs: { restart: run('failed', { completedAt: now - 10 }), shutdown: null },
    },
    phase: 'rebooting',
    run: null,
  },
  {
    title: 'a restart that failed three times puts the node in error',
    input: {
      node: node('rebooting').restartRequested().build(),
      obs: fresh(),
      runs: { restart: run('failed', { attempt: 3, completedAt: now - 60_000 }), shutdown: null },
    },
    phase: 'error',
    run: null,
  },
  {
    title: 'a run for an older request does not satisfy a new one',
    input: {
      node: node('active').restartRequested(2, 1).build(),
      obs: fresh('boot-2'),
      runs: { restart: run('completed', { request: 1 }), shutdown: null },
    },
    phase: 'rebooting',
    run: 'node.restart',
  },
  {
    title: 'a shutdown request starts a shutdown run',
    input: { node: node('active').shutdownRequested().build(), obs: fresh() },
    phase: 'shutting-down',
    run: 'node.shutdown',
  },
  {
    title: 'a completed shutdown whose agent fell silent is acknowledged as powered off',
    input: {
      node: node('shutting-down').shutdownRequested().build(),
      obs: observation({ lastReportAt: now - 600, report: report() }),
      runs: { restart: null, shutdown: run('completed') },
    },
    phase: 'offline',
    ack: { observedShutdownGeneration: 1 },
  },
  {
    title: 'a powered-off node stays offline while its last report is still fresh',
    input: {
      node: node('offline').shutdownRequested(1, 1).build(),
      obs: observation({ lastReportAt: now - 600, report: report() }),
      runs: { restart: null, shutdown: run('completed') },
    },
    phase: 'offline',
  },
  {
    title: 'a powered-off node that boots again comes back',
    input: {
      node: node('offline').shutdownRequested(1, 1).build(),
      obs: fresh('boot-9'),
      runs: { restart: null, shutdown: run('completed') },
    },
    phase: 'active',
  },
];

for (const row of table) {
  test(`node plan: ${row.title}`, (t) => {
    const plan = planNode(observed(row.input));
    t.is(plan.status.phase, row.phase);
    if (row.run !== undefined) t.is(plan.step?.taskName ?? null, row.run);
    for (const [k, v] of Object.entries(row.ack ?? {})) t.is((plan.status as Record<string, unknown>)[k], v, k);
    if (row.blocked) {
      t.is(plan.gate?.reason, row.blocked);
      t.is(plan.status.conditions?.find((c) => c.type === 'Blocked')?.status, 'True');
    }
  });
}

test('node plan: a restart run carries the request and the boot it was sent to', (t) => {
  const plan = planNode(
    observed({
      node: node('active').restartRequested(3, 2).build(),
      obs: fresh('boot-7'),
      runs: { restart: run('failed', { request: 2 }), shutdown: null },
    }),
  );
  t.deepEqual(plan.step, { taskName: 'node.restart', request: 3, attempt: 1, bootId: 'boot-7' });
});

test('node plan: reported disks become disk documents, missing ones are marked absent', (t) => {
  const known = diskIdFor(NODE_ID, 'OLD');
  const n = node('active')
    .withStatus({ diskIds: [known] })
    .build();
  const plan = planNode(
    observed({
      node: n,
      obs: observation({ lastReportAt: now, report: report('boot-1', [disk('NEW', { sizeBytes: 123 })]) }),
      disks: new Map([[known, undefined]]),
    }),
  );
  const created = plan.disks.find((d) => d.create);
  t.is(created?.id, diskIdFor(NODE_ID, 'NEW'));
  t.deepEqual(created?.create, { nodeId: NODE_ID, serial: 'NEW', osd: false, wipeGeneration: 0 });
  t.is(created?.status.capacityBytes, 123);
  t.deepEqual(plan.status.diskIds, [known, diskIdFor(NODE_ID, 'NEW')].sort());
});

test('node plan: an unchanged world plans an identical status', (t) => {
  const first = planNode(observed({ node: node('active').build(), obs: fresh() }));
  const again = node('active').build();
  again.status = first.status;
  const second = planNode(observed({ node: again, obs: fresh(), now: now + 5 }));
  t.deepEqual(second.status, first.status);
});

test('node plan: a reporting node sets no staleness timer (the fleet sweep wakes it when its report goes stale)', (t) => {
  const plan = planNode(observed({ node: node('active').build(), obs: fresh() }));
  t.is(plan.status.phase, 'active');
  t.is(plan.requeueAfterMs, null);
});

test('node plan: a node unheard since the start is looked at when the grace ends, pushed back by the jitter, never brought forward', (t) => {
  const at = (staleJitter: number) =>
    planNode(observed({ node: node('active').build(), startedAt: now - 1_000, staleJitter })).requeueAfterMs;
  t.is(at(0), HB - 1_000 + 1);
  t.is(at(0.5), HB - 1_000 + 1 + 0.5 * STALE_JITTER * HB);
  t.is(at(-3), HB - 1_000 + 1);
  t.is(at(7), HB - 1_000 + 1 + STALE_JITTER * HB);
});

test('node plan: a report loaded from the store (before the election) keeps the node active while fresh, then waits out the grace', (t) => {
  const loaded = (age: number) => observation({ lastReportAt: now - age, report: report() });
  const freshLoaded = planNode(observed({ node: node('active').build(), startedAt: now - 1_000, obs: loaded(3_000) }));
  t.is(freshLoaded.status.phase, 'active');
  t.is(freshLoaded.requeueAfterMs, null);
  const staleLoaded = planNode(observed({ node: node('active').build(), startedAt: now - 1_000, obs: loaded(HB + 1) }));
  t.is(staleLoaded.status.phase, 'active');
  t.is(staleLoaded.status.conditions?.find((c) => c.type === 'Ready')?.reason, 'AwaitingReport');
  t.is(staleLoaded.requeueAfterMs, HB - 1_000 + 1);
  const afterGrace = planNode(observed({ node: node('active').build(), startedAt: now - HB - 1, obs: loaded(HB + 2) }));
  t.is(afterGrace.status.phase, 'offline');
});
