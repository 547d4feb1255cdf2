// The rolling restart for a config change, pure: the hash of the restart-relevant config, and the
// node plan's record, restart under a daemon-restart lease, wait and release.
import test from 'ava';
import type { ClusterSpec } from '../../src/model/ceph-kinds.js';
import type { DisruptionLease } from '../../src/model/disruption-kinds.js';
import { osdStopRefused } from '../../src/clients/ceph-stop-gates.js';
import { configHashes, configKey, RESTART_CONFIG } from '../../src/model/daemon-config.js';
import { planNode, type NodeObserved } from '../../reconcilers/node/plan.js';
import type { NodeDisruptionObserved } from '../../reconcilers/node/disruption.js';
import type { RolloutRunView } from '../../reconcilers/node/rollout.js';
import { node, nodeObserved, observation, report } from '../builders.js';
import { NOW } from './plan-fixtures.js';

const SPEC: ClusterSpec = {
  fsid: 'f',
  publicNetwork: '10.0.0.0/24',
  clusterNetwork: null,
  monPort: 3300,
  poolDefaults: { size: 3, minSize: 2 },
};
const OLD = configHashes(SPEC);
const NEW = configHashes({ ...SPEC, clusterNetwork: '10.1.0.0/24' });
const ONE = { maxUnavailable: 1, maxDisruptions: 1 };

test('daemon config hash: clusterNetwork concerns the OSDs alone; other fields restart nothing', (t) => {
  t.deepEqual(Object.keys(OLD), ['osd']);
  t.notDeepEqual(NEW, OLD);
  t.deepEqual(configHashes({ ...SPEC, publicNetwork: '10.9.0.0/24', monPort: 6789 }), OLD);
  t.deepEqual(configHashes({ ...SPEC }), OLD, 'stable');
  t.not(configKey(NEW), configKey(OLD));
  t.is(configKey({ ...OLD }), configKey(OLD));
});

test('daemon config hash: another field or daemon kind is one entry of the table', (t) => {
  const table = [...RESTART_CONFIG, { field: 'publicNetwork' as const, daemons: ['mon' as const, 'osd' as const] }];
  const a = configHashes(SPEC, table);
  const b = configHashes({ ...SPEC, publicNetwork: '10.9.0.0/24' }, table);
  t.deepEqual(Object.keys(a).sort(), ['mon', 'osd']);
  t.not(a.mon, b.mon);
  t.not(a.osd, b.osd);
  t.not(a.osd, OLD.osd, 'the OSD hash covers both its fields');
});

/** An active node running mon + osd.1, osd.2, its daemons recorded under `recorded` in boot-1. */
function rolling(
  over: {
    recorded?: Record<string, string> | null;
    recordedBoot?: string;
    osds?: number[];
    run?: RolloutRunView | null;
    disruption?: Partial<NodeDisruptionObserved>;
  } = {},
): NodeObserved {
  const r = report('boot-1');
  r.daemons.osds = over.osds ?? [1, 2];
  r.daemons.mon = true;
  const n = node('active').build();
  if (over.recorded !== null) n.status.daemonConfig = { bootId: over.recordedBoot ?? 'boot-1', hashes: { ...(over.recorded ?? OLD) } };
  return nodeObserved(
    {
      node: n,
      obs: observation({ lastReportAt: NOW - 100, report: r }),
      runs: { restart: null, shutdown: null, rollout: over.run ?? null },
      configHashes: NEW,
      domain: 'node-1',
      disruption: {
        limits: ONE,
        mine: null,
        held: [],
        stale: [],
        answers: { osd: { ...osdStopRefused([1, 2], ''), ok: true } },
        ...over.disruption,
      },
    },
    NOW,
  );
}

const run = (state: RolloutRunView['state'], over: Partial<RolloutRunView> = {}): RolloutRunView => ({
  id: 'r1',
  state,
  attempt: 1,
  config: configKey(NEW),
  daemons: [
    { daemon: 'osd', name: '1' },
    { daemon: 'osd', name: '2' },
  ],
  completedAt: state === 'pending' || state === 'running' ? null : NOW - 500,
  ...over,
});
const lease: DisruptionLease = {
  holderKind: 'Node',
  holderId: 'x',
  what: 'daemon restart of node-1 for a config change (osd.1, osd.2)',
  since: '2026-01-01T00:00:00.000Z',
  kind: 'daemon-restart',
  nodes: ['x'],
  domains: ['node-1'],
  stops: { osds: [1, 2], mons: [], mds: [] },
};

test('node rollout plan: a node seen for the first time records the config of now and restarts nothing', (t) => {
  const p = planNode(rolling({ recorded: null }));
  t.is(p.step, null);
  t.deepEqual(p.status.daemonConfig, { bootId: 'boot-1', hashes: NEW });
});

test('node rollout plan: a node booted since its record, or running no OSD, records without a restart', (t) => {
  const booted = planNode(rolling({ recordedBoot: 'boot-0' }));
  t.is(booted.step, null);
  t.deepEqual(booted.status.daemonConfig, { bootId: 'boot-1', hashes: NEW });
  const noOsd = planNode(rolling({ osds: [] }));
  t.is(noOsd.step, null);
  t.deepEqual(noOsd.status.daemonConfig?.hashes, NEW);
});

test('node rollout plan: the same config does nothing', (t) => {
  const p = planNode(rolling({ recorded: NEW }));
  t.is(p.step, null);
  t.is(p.lease.take, null);
  t.deepEqual(p.status.daemonConfig, { bootId: 'boot-1', hashes: NEW });
});

test('node rollout plan: a changed config restarts the OSDs alone under a daemon-restart lease, Ceph asked for them', (t) => {
  const p = planNode(rolling());
  t.like(p.step, { taskName: 'ceph.config.restart', config: configKey(NEW), attempt: 1 });
  t.deepEqual(p.step?.daemons, [
    { daemon: 'osd', name: '1' },
    { daemon: 'osd', name: '2' },
  ]);
  t.like(p.lease.take?.request, { kind: 'daemon-restart', domains: ['node-1'], stops: { osds: [1, 2], mons: [], mds: [] } });
  t.regex(p.lease.notes.join('\n'), /osd ok-to-stop osd\.1 osd\.2: ok/);
  t.like(p.status.disruption, { state: 'held', kind: 'daemon-restart' });
  t.deepEqual(p.status.daemonConfig?.hashes, OLD, 'recorded only once they run the new one');
});

test('node rollout plan: another failure domain holding a lease keeps the restart waiting (Blocked DisruptionBudget)', (t) => {
  const other = { ...lease, holderId: 'n2', what: 'daemon restart of node-2', domains: ['node-2'] };
  const p = planNode(rolling({ disruption: { held: [other] } }));
  t.is(p.step, null);
  t.is(p.gate?.reason, 'DisruptionBudget');
  t.regex(p.gate?.message ?? '', /daemon restart would stop osd\.1, osd\.2: at most 1 failure domain .*held by daemon restart of node-2/);
  t.like(p.status.disruption, { state: 'waiting', kind: 'daemon-restart' });
});

test('node rollout plan: the lease stays while the run runs and until the OSDs run again, then goes back with the record', (t) => {
  const running = planNode(rolling({ run: run('running'), disruption: { mine: lease } }));
  t.is(running.step, null);
  t.false(running.lease.release);
  const notBack = planNode(rolling({ run: run('completed'), osds: [1], disruption: { mine: lease } }));
  t.is(notBack.step, null);
  t.false(notBack.lease.release);
  t.true((notBack.requeueAfterMs ?? 0) > 0);
  t.deepEqual(notBack.status.daemonConfig?.hashes, OLD);
  const back = planNode(rolling({ run: run('completed'), disruption: { mine: lease } }));
  t.is(back.step, null);
  t.true(back.lease.release);
  t.deepEqual(back.status.daemonConfig, { bootId: 'boot-1', hashes: NEW });
  t.is(back.status.disruption, undefined);
});

test('node rollout plan: a failed run is retried under its lease, then ConfigRestartFailed gives the lease back', (t) => {
  const retry = planNode(rolling({ run: run('failed', { completedAt: NOW - 60_000, error: 'boom' }), disruption: { mine: lease } }));
  t.like(retry.step, { taskName: 'ceph.config.restart', attempt: 2 });
  t.is(retry.lease.take, null);
  t.false(retry.lease.release);
  const failed = planNode(rolling({ run: run('failed', { attempt: 3, error: 'boom' }), disruption: { mine: lease } }));
  t.is(failed.step, null);
  t.is(failed.gate?.reason, 'ConfigRestartFailed');
  t.regex(failed.gate?.message ?? '', /failed 3 times \(boom\)/);
  t.true(failed.lease.release);
});
