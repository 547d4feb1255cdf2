// Table-driven plans of the filesystem loop, the RGW user loop, and the gateway's stop of a
// daemon no longer desired.
import test from 'ava';
import type { Doc } from '../../src/model/document.js';
import type { DaemonState } from '../../src/model/kinds.js';
import type { FilesystemSpec, FilesystemStatus, RgwUserSpec, RgwUserStatus } from '../../src/model/storage-kinds.js';
import { planFs, type FsCephView, type FsObserved } from '../../reconcilers/fs/plan.js';
import { mdsOf } from '../../reconcilers/fs/loop.js';
import { planRgwUser, type RgwUserObserved } from '../../reconcilers/rgw-user/plan.js';
import { planDaemon, type DaemonObserved } from '../../reconcilers/daemon/plan.js';
import { NOW, run } from './plan-fixtures.js';
import { node } from '../builders.js';

const ISO = new Date(NOW).toISOString();
const meta = { generation: 1, resourceVersion: 1, createdAt: '', updatedAt: '', labels: {}, source: null };

const fsDoc: Doc<FilesystemSpec, FilesystemStatus> = {
  kind: 'Filesystem',
  id: 'f1',
  name: 'cephfs',
  metadata: meta,
  spec: { name: 'cephfs', metadataPool: 'meta', metadataPG: 16, dataPool: 'data', dataPG: 32 },
  status: {},
};
const pools = [
  { name: 'meta', pgNum: 16 },
  { name: 'data', pgNum: 32 },
];
const cephView = (over: Partial<FsCephView> = {}): FsCephView => ({ pools: [], listed: null, mdsUp: 1, activeMds: null, ...over });
const listed = { metadataPool: 'meta', dataPools: ['data'] };
const fs = (over: Partial<FsObserved> = {}): FsObserved => ({
  fs: fsDoc,
  quorum: true,
  ceph: cephView(),
  run: null,
  now: NOW,
  nowIso: ISO,
  retryBaseMs: 1_000,
  ...over,
});

const fsTable: Array<[string, FsObserved, NonNullable<FilesystemStatus['phase']>, string, boolean]> = [
  ['waits for monitor quorum', fs({ quorum: false, ceph: null }), 'blocked', 'WaitingForQuorum', false],
  ['says so when Ceph does not answer', fs({ ceph: { error: 'timed out' } }), 'blocked', 'CephUnavailable', false],
  ['waits for a metadata server before creating anything', fs({ ceph: cephView({ mdsUp: 0 }) }), 'blocked', 'WaitingForMds', false],
  ['creates pools and filesystem in one run', fs({}), 'creating', 'Creating', true],
  ['a create run under way starts nothing more', fs({ run: run('running') }), 'creating', 'Creating', false],
  ['a failed run waits out its backoff', fs({ run: run('failed', { completedAt: NOW - 10 }) }), 'creating', 'RetryBackoff', false],
  ['a failed run is retried', fs({ run: run('failed') }), 'creating', 'Retrying', true],
  ['three failures show as failed and are still retried', fs({ run: run('failed', { attempt: 3 }) }), 'failed', 'Retrying', true],
  ['a filesystem removed behind its back is created again', fs({ run: run('completed') }), 'creating', 'Creating', true],
  ['listed and served by an active MDS: ready', fs({ ceph: cephView({ pools, listed, activeMds: 'a' }) }), 'ready', 'Active', false],
  ['listed, an MDS up but not yet active for it', fs({ ceph: cephView({ pools, listed }) }), 'creating', 'WaitingForMdsActive', false],
  [
    'listed, and its MDS gone: degraded, nothing to run',
    fs({ ceph: cephView({ pools, listed, mdsUp: 0 }) }),
    'degraded',
    'WaitingForMds',
    false,
  ],
  [
    'a filesystem of that name over other pools is left alone',
    fs({ ceph: cephView({ listed: { metadataPool: 'x', dataPools: ['y'] } }) }),
    'blocked',
    'ExistsWithOtherPools',
    false,
  ],
];

for (const [title, input, phase, reason, step] of fsTable) {
  test(`fs plan: ${title}`, (t) => {
    const p = planFs(input);
    t.is(p.status.phase, phase);
    t.is(p.reason, reason);
    t.is(p.step !== null, step);
    t.is(p.gate !== null, phase === 'blocked');
    t.is(p.status.conditions?.find((c) => c.type === 'Ready')?.status, phase === 'ready' ? 'True' : 'False');
  });
}

test('fs plan: the MDS gate says why in words an operator acts on', (t) => {
  const p = planFs(fs({ ceph: cephView({ mdsUp: 0 }) }));
  t.regex(p.message, /a filesystem needs a metadata server/);
  t.like(
    p.status.conditions?.find((c) => c.type === 'Blocked'),
    { status: 'True', reason: 'WaitingForMds' },
  );
});

test('fs plan: a ready filesystem reports its pools, its MDS, and a PG count it did not get', (t) => {
  const p = planFs(
    fs({
      ceph: cephView({
        pools: [
          { name: 'meta', pgNum: 16 },
          { name: 'data', pgNum: 8 },
          { name: 'other', pgNum: 1 },
        ],
        listed,
        activeMds: 'b',
      }),
    }),
  );
  t.deepEqual(p.status.pools, [
    { name: 'meta', pgNum: 16 },
    { name: 'data', pgNum: 8 },
  ]);
  t.like(p.status, { created: true, mdsActive: true, activeMds: 'b', observedGeneration: 1 });
  t.like(
    p.status.conditions?.find((c) => c.type === 'Degraded'),
    { status: 'True', reason: 'PgCountDiffers' },
  );
});

test('fs plan: a status that has not changed is the same status (no write, no wake-up)', (t) => {
  const first = planFs(fs({ ceph: cephView({ pools, listed, activeMds: 'a' }) }));
  const again = planFs(
    fs({
      fs: { ...fsDoc, status: first.status },
      nowIso: new Date(NOW + 5_000).toISOString(),
      ceph: cephView({ pools, listed, activeMds: 'a' }),
    }),
  );
  t.deepEqual(again.status, first.status);
});

test('fs loop: an MDS counts as up when active anywhere or standby, and active only for its own filesystem', (t) => {
  const d = (name: string, state: string) => ({ name, gid: 1, rank: 0, state });
  const stat = {
    epoch: 3,
    standbys: [d('s', 'up:standby')],
    filesystems: [{ id: 1, name: 'other', maxMds: 1, metadataPoolId: 1, dataPoolIds: [2], daemons: [d('o', 'up:active')] }],
  };
  t.deepEqual(mdsOf(stat, 'cephfs'), { mdsUp: 2, activeMds: null });
  t.deepEqual(mdsOf(stat, 'other'), { mdsUp: 2, activeMds: 'o' });
});

const userDoc: Doc<RgwUserSpec, RgwUserStatus> = {
  kind: 'RgwUser',
  id: 'u1',
  name: 'alice',
  metadata: meta,
  spec: { userId: 'alice', displayName: 'Alice' },
  status: {},
};
const user = (over: Partial<RgwUserObserved> = {}): RgwUserObserved => ({
  user: userDoc,
  quorum: true,
  gatewayRunning: true,
  issued: null,
  run: null,
  now: NOW,
  nowIso: ISO,
  retryBaseMs: 1_000,
  ...over,
});

const userTable: Array<[string, RgwUserObserved, NonNullable<RgwUserStatus['phase']>, string, boolean]> = [
  ['waits for monitor quorum', user({ quorum: false }), 'blocked', 'WaitingForQuorum', false],
  ['waits for a running gateway (the RGW pools)', user({ gatewayRunning: false }), 'blocked', 'WaitingForGateway', false],
  ['creates the user', user({}), 'creating', 'Creating', true],
  ['a run under way starts nothing more', user({ run: run('running') }), 'creating', 'Creating', false],
  ['a failed run is retried after its backoff', user({ run: run('failed', { completedAt: NOW - 10 }) }), 'creating', 'RetryBackoff', false],
  ['three failures show as failed', user({ run: run('failed', { attempt: 3 }) }), 'failed', 'Retrying', true],
  [
    'keys issued: ready, whatever the gates say now',
    user({ issued: 'AKIA', quorum: false, gatewayRunning: false }),
    'ready',
    'KeysIssued',
    false,
  ],
];

for (const [title, input, phase, reason, step] of userTable) {
  test(`rgw-user plan: ${title}`, (t) => {
    const p = planRgwUser(input);
    t.is(p.status.phase, phase);
    t.is(p.reason, reason);
    t.is(p.step !== null, step);
    t.is(p.gate !== null, phase === 'blocked');
  });
}

test('rgw-user plan: a ready user shows its access key and nothing else of the pair', (t) => {
  const p = planRgwUser(user({ issued: 'AKIA123' }));
  t.is(p.status.accessKey, 'AKIA123');
  t.deepEqual(Object.keys(p.status).sort(), ['accessKey', 'conditions', 'observedGeneration', 'phase']);
});

function gateway(over: Partial<DaemonObserved> & { wanted?: boolean; running?: boolean; phase?: 'active' | 'offline' }): DaemonObserved {
  const n = node(over.phase ?? 'active').build();
  if (over.wanted ?? false) n.spec.daemons = { rgw: {} };
  n.status.daemons = { rgw: over.running ?? true };
  return {
    type: 'rgw',
    node: n,
    quorum: true,
    keyExists: true,
    keyRun: null,
    startRun: null,
    now: NOW,
    retryBaseMs: 1_000,
    startGraceMs: 5_000,
    stopOrphan: true,
    stopRun: null,
    ...over,
  };
}

const stopTable: Array<[string, DaemonObserved, DaemonState['phase'] | undefined, string | null, string | undefined]> = [
  ['a gateway no longer desired is stopped', gateway({}), 'orphaned', 'stop', 'Stopping'],
  ['a stop under way starts nothing more', gateway({ stopRun: run('running') }), 'orphaned', null, 'Stopping'],
  [
    'right after a stop the agent gets time to report it',
    gateway({ stopRun: run('completed', { completedAt: NOW - 100 }) }),
    'orphaned',
    null,
    'WaitingForAgent',
  ],
  ['a stop that did not take is tried again', gateway({ stopRun: run('completed') }), 'orphaned', 'stop', 'Stopping'],
  [
    'a failed stop is retried after its backoff',
    gateway({ stopRun: run('failed', { completedAt: NOW - 10 }) }),
    'orphaned',
    null,
    'RetryBackoff',
  ],
  ['nothing is done to a node that is not active', gateway({ phase: 'offline' }), 'orphaned', null, 'NodeNotActive'],
  ['a stopped gateway leaves no state', gateway({ running: false }), undefined, null, undefined],
  ['a desired gateway is not stopped', gateway({ wanted: true }), 'running', null, 'Running'],
  ['daemons that hold data are only reported', gateway({ stopOrphan: false }), 'orphaned', null, 'NotDesired'],
];

for (const [title, input, phase, step, reason] of stopTable) {
  test(`daemon plan: ${title}`, (t) => {
    const p = planDaemon(input);
    t.is(p.status?.phase, phase);
    t.is(p.status?.reason, reason);
    t.is((p.step?.kind as string | undefined) ?? null, step);
  });
}
