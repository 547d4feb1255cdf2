// Table-driven plans of the monitor loop and of the manager/MDS/gateway loop.
import test from 'ava';
import type { ClusterSpec, ClusterStatus } from '../../src/model/ceph-kinds.js';
import type { DaemonState } from '../../src/model/kinds.js';
import type { Doc } from '../../src/model/document.js';
import type { DiskDoc, NodeDoc } from '../../src/model/operations.js';
import { planDaemon, type DaemonObserved } from '../../reconcilers/daemon/plan.js';
import { planMon, type MonObserved } from '../../reconcilers/mon/plan.js';
import type { RunInfo } from '../../reconcilers/shared/runs.js';
import { NOW, run } from './plan-fixtures.js';
import { node } from '../builders.js';

const DISK_ID = '9c1a0f3e-2b4d-5c6e-8f70-1a2b3c4d5e6f';

function cluster(status: ClusterStatus = {}): Doc<ClusterSpec, ClusterStatus> {
  return {
    kind: 'Cluster',
    id: 'default',
    name: 'ceph',
    metadata: { generation: 1, resourceVersion: 1, createdAt: '', updatedAt: '', labels: {}, source: null },
    spec: {
      fsid: '3b5c0c6e-7f4c-4f0e-9a52-2a3e1b1c9d10',
      publicNetwork: null,
      clusterNetwork: null,
      monPort: 3300,
      poolDefaults: { size: 3, minSize: 2 },
    },
    status,
  };
}

function monNode(hostname: string, opts: { phase?: 'active' | 'offline' | 'maintenance'; running?: boolean; ip?: string } = {}): NodeDoc {
  const n = node(opts.phase ?? 'active').build();
  n.id = `00000000-0000-4000-8000-${hostname
    .padStart(12, '0')
    .slice(-12)
    .replace(/[^0-9a-f]/g, 'a')}`;
  n.spec.hostname = hostname;
  n.spec.daemons = { mon: { diskId: DISK_ID } };
  n.status.ip = opts.ip ?? '192.0.2.1';
  n.status.daemons = { mon: opts.running ?? false };
  return n;
}

const monDisk = { id: DISK_ID, status: { present: true, devicePath: '/dev/sdb' } } as unknown as DiskDoc;

function mon(over: Partial<MonObserved> & { self?: NodeDoc; others?: NodeDoc[] }): MonObserved {
  const self = over.self ?? monNode('a');
  return {
    node: self,
    cluster: cluster(),
    monNodes: [self, ...(over.others ?? [])],
    monDisk,
    quorum: false,
    bootstrapKeys: true,
    gatherEndsAt: null,
    bootstrap: null,
    createRun: null,
    restartRun: null,
    now: NOW,
    retryBaseMs: 1_000,
    startGraceMs: 5_000,
    removal: { monmap: null, othersRemoving: [], monmapRun: null, nodeRun: null },
    ...over,
  };
}

const argsOf = (p: ReturnType<typeof planMon>): Record<string, unknown> => (p.step && 'args' in p.step ? p.step.args : {});

/** The bootstrap `owner` opened, with its run in `state` naming `members` in the first monmap. */
function opened(owner: string, state: RunInfo['state'], members: string[]): MonObserved['bootstrap'] {
  const node = monNode(owner);
  return {
    owner: node,
    run: run(state, { args: { initialMembers: members.map((m) => ({ nodeId: monNode(m).id, name: m, addr: '192.0.2.1' })) } }),
    members: members.map((m) => ({ nodeId: monNode(m).id, name: m, addr: '192.0.2.1' })),
  };
}

const monTable: Array<[string, MonObserved, DaemonState['phase'], string | null, string]> = [
  ['the first monitor without keys makes them first', mon({ bootstrapKeys: false }), 'starting', 'bootstrap-keys', 'CreatingKeys'],
  ['the first monitor bootstraps the cluster', mon({}), 'starting', 'bootstrap', 'Starting'],
  ['another monitor waits for the first', mon({ self: monNode('b'), others: [monNode('a')] }), 'blocked', null, 'WaitingForFirstMonitor'],
  [
    'an offline first candidate hands bootstrap to the next',
    mon({ self: monNode('b'), others: [monNode('a', { phase: 'offline' })] }),
    'starting',
    'bootstrap',
    'Starting',
  ],
  [
    'once bootstrapped, a new monitor joins when there is quorum',
    mon({ self: monNode('b'), others: [monNode('a', { running: true })], quorum: true }),
    'starting',
    'join',
    'Starting',
  ],
  [
    'no join without quorum',
    mon({ self: monNode('b'), others: [monNode('a', { running: true })], cluster: cluster({ bootstrapped: true }) }),
    'blocked',
    null,
    'WaitingForQuorum',
  ],
  ['nothing on a node that is not active', mon({ self: monNode('a', { phase: 'offline' }) }), 'blocked', null, 'NodeNotActive'],
  // #15: a node in maintenance had its monitor stopped on purpose: it is not started again.
  [
    'a node in maintenance: its stopped monitor is not started',
    mon({ self: monNode('a', { phase: 'maintenance' }), createRun: run('completed') }),
    'blocked',
    null,
    'NodeInMaintenance',
  ],
  ['a running monitor is left alone', mon({ self: monNode('a', { running: true }) }), 'running', null, 'Running'],
  ['a bootstrap in progress starts nothing more', mon({ createRun: run('running') }), 'starting', null, 'Starting'],
  [
    'a later monitor with an earlier hostname waits for the node already bootstrapping',
    mon({ self: monNode('a'), others: [monNode('b')], bootstrap: opened('b', 'running', ['b']) }),
    'blocked',
    null,
    'WaitingForFirstMonitor',
  ],
  ['the first monitor waits for others declared with it', mon({ gatherEndsAt: NOW + 300 }), 'starting', null, 'GatheringMonitors'],
  ['once the gathering ended it bootstraps', mon({ gatherEndsAt: NOW }), 'starting', 'bootstrap', 'Starting'],
  [
    'a first monitor waits while the opener starts',
    mon({ self: monNode('b'), others: [monNode('a')], bootstrap: opened('a', 'running', ['a', 'b']) }),
    'blocked',
    null,
    'WaitingForFirstMonitor',
  ],
  [
    'a first monitor bootstraps once the opener ran, not joins',
    mon({ self: monNode('b'), others: [monNode('a', { running: true })], quorum: true, bootstrap: opened('a', 'completed', ['a', 'b']) }),
    'starting',
    'bootstrap',
    'Starting',
  ],
  [
    'a first monitor bootstraps even without quorum: it is what forms the quorum',
    mon({
      self: monNode('b'),
      others: [monNode('a', { running: true })],
      cluster: cluster({ bootstrapped: true }),
      bootstrap: opened('a', 'completed', ['a', 'b']),
    }),
    'starting',
    'bootstrap',
    'Starting',
  ],
  [
    'a monitor declared after the first monmap joins',
    mon({ self: monNode('c'), others: [monNode('a', { running: true })], quorum: true, bootstrap: opened('a', 'completed', ['a', 'b']) }),
    'starting',
    'join',
    'Starting',
  ],
  [
    'a failed bootstrap waits out its backoff',
    mon({ createRun: run('failed', { completedAt: NOW - 10 }) }),
    'starting',
    null,
    'RetryBackoff',
  ],
  ['a failed bootstrap is retried', mon({ createRun: run('failed') }), 'starting', 'bootstrap', 'Retrying'],
  [
    'three failures show as failed and are still retried',
    mon({ createRun: run('failed', { attempt: 3 }) }),
    'failed',
    'bootstrap',
    'Retrying',
  ],
  ['a created monitor that stopped running is started again', mon({ createRun: run('completed') }), 'starting', 'restart', 'Starting'],
  [
    'right after creation the agent gets time to report it',
    mon({ createRun: run('completed', { completedAt: NOW - 100 }) }),
    'starting',
    null,
    'WaitingForAgent',
  ],
  ['a missing monitor disk blocks', mon({ monDisk: undefined }), 'blocked', null, 'MonitorDiskMissing'],
];

for (const [title, input, phase, step, reason] of monTable) {
  test(`mon plan: ${title}`, (t) => {
    const p = planMon(input);
    t.is(p.status?.phase, phase);
    t.is(p.status?.reason, reason);
    t.is((p.step?.kind as string | undefined) ?? null, step);
    t.is(p.gate !== null, phase === 'blocked');
  });
}

test('mon plan: a bootstrap run carries the fsid, the name, the address, the disk and the first monmap', (t) => {
  const p = planMon(mon({}));
  t.deepEqual(p.step, {
    kind: 'bootstrap',
    attempt: 1,
    args: {
      fsid: '3b5c0c6e-7f4c-4f0e-9a52-2a3e1b1c9d10',
      monName: 'a',
      addr: '192.0.2.1',
      monPort: 3300,
      devicePath: '/dev/sdb',
      initialMembers: [{ nodeId: monNode('a').id, name: 'a', addr: '192.0.2.1' }],
    },
  });
});

test('mon plan: the first monmap names every active monitor node with an address, by hostname', (t) => {
  const others = [
    monNode('c', { ip: '192.0.2.3' }),
    monNode('b', { ip: '192.0.2.2' }),
    monNode('d', { phase: 'offline', ip: '192.0.2.4' }),
    monNode('e', { ip: '' }),
  ];
  const p = planMon(mon({ others, gatherEndsAt: NOW - 1 }));
  t.deepEqual(
    (argsOf(p).initialMembers as Array<{ name: string; addr: string }>).map((m) => [m.name, m.addr]),
    [
      ['a', '192.0.2.1'],
      ['b', '192.0.2.2'],
      ['c', '192.0.2.3'],
    ],
  );
});

test('mon plan: the gathering is waited out exactly, then asked again', (t) => {
  const p = planMon(mon({ gatherEndsAt: NOW + 300 }));
  t.is(p.requeueAfterMs, 300);
});

test('mon plan: a retried bootstrap keeps the first monmap its failed attempt had', (t) => {
  const first = [{ nodeId: monNode('a').id, name: 'a', addr: '192.0.2.1' }];
  const p = planMon(mon({ others: [monNode('b', { ip: '192.0.2.2' })], createRun: run('failed', { args: { initialMembers: first } }) }));
  t.is(p.step?.kind, 'bootstrap');
  t.deepEqual(argsOf(p).initialMembers, first);
});

test("mon plan: a following first monitor takes the opener's first monmap", (t) => {
  const boot = opened('a', 'completed', ['a', 'b']);
  const p = planMon(mon({ self: monNode('b'), others: [monNode('a', { running: true })], bootstrap: boot }));
  t.deepEqual(argsOf(p).initialMembers, boot!.members);
  t.is(argsOf(p).monName, 'b');
});

function daemon(
  over: Partial<DaemonObserved> & { wanted?: boolean; running?: boolean; phase?: 'active' | 'offline' | 'maintenance' },
): DaemonObserved {
  const n = node(over.phase ?? 'active').build();
  if (over.wanted ?? true) n.spec.daemons = { mgr: {} };
  n.status.daemons = { mgr: over.running ?? false };
  return {
    type: 'mgr',
    node: n,
    quorum: true,
    keyExists: true,
    keyRun: null,
    startRun: null,
    now: NOW,
    retryBaseMs: 1_000,
    startGraceMs: 5_000,
    ...over,
  };
}

const daemonTable: Array<[string, DaemonObserved, DaemonState['phase'] | undefined, string | null]> = [
  ['not desired and not running: nothing', daemon({ wanted: false }), undefined, null],
  ['running but not desired is reported, not stopped', daemon({ wanted: false, running: true }), 'orphaned', null],
  ['waits for quorum', daemon({ quorum: false }), 'blocked', null],
  ['nothing on an offline node', daemon({ phase: 'offline' }), 'blocked', null],
  ['a node in maintenance: a stopped daemon is not started', daemon({ phase: 'maintenance', startRun: run('completed') }), 'blocked', null],
  ['makes its key first', daemon({ keyExists: false }), 'starting', 'create-key'],
  ['then starts the daemon', daemon({}), 'starting', 'start'],
  ['a start in progress starts nothing more', daemon({ startRun: run('running') }), 'starting', null],
  ['a daemon that died after starting is started again', daemon({ startRun: run('completed') }), 'starting', 'start'],
  ['a failed start is retried after backoff', daemon({ startRun: run('failed') }), 'starting', 'start'],
  ['a running daemon is left alone', daemon({ running: true }), 'running', null],
];

for (const [title, input, phase, step] of daemonTable) {
  test(`daemon plan: ${title}`, (t) => {
    const p = planDaemon(input);
    t.is(p.status?.phase, phase);
    t.is((p.step?.kind as string | undefined) ?? null, step);
  });
}
