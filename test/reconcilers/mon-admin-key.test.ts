// client.admin reaches a new cluster through the master, never through a node: the monitor
// loop plans the import for the node that created the cluster, the import runs as mon. against
// the (strict) simulated cephx, and no key reaches the run's log.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { importAdminKeyScript } from '../../reconcilers/mon/admin-key.js';
import { BOOTSTRAP_KEYS, monLoop } from '../../reconcilers/mon/loop.js';
import { planMon, type MonObserved } from '../../reconcilers/mon/plan.js';
import { getKey, saveKey } from '../../reconcilers/shared/keys.js';
import { NOW, run } from './plan-fixtures.js';
import { CLUSTER_ID, CephKind, type ClusterSpec, type ClusterStatus } from '../../src/model/ceph-kinds.js';
import { ManualClock } from '../../src/model/clock.js';
import type { Doc } from '../../src/model/document.js';
import { newCephxKey } from '../../src/model/keyring.js';
import { Kind } from '../../src/model/kinds.js';
import type { DiskDoc, NodeDoc } from '../../src/model/operations.js';
import { newNodeSpec } from '../../src/fleet/discovery.js';
import { SimCephApi } from '../../src/sim/ceph/api.js';
import { createMemoryStore } from '../../src/store/index.js';
import type { LogLine, RunContext, StartRequest, TaskRun } from '../../src/tasks/types.js';
import { node } from '../builders.js';
import { FSID, instant, newCluster } from '../sim/ceph-helpers.js';

const DISK_ID = '9c1a0f3e-2b4d-5c6e-8f70-1a2b3c4d5e6f';
const NODE_A = '5d3c1e2f-0a1b-4c2d-8e3f-4a5b6c7d8e9f';

function cluster(): Doc<ClusterSpec, ClusterStatus> {
  return {
    kind: 'Cluster',
    id: 'default',
    name: 'ceph',
    metadata: { generation: 1, resourceVersion: 1, createdAt: '', updatedAt: '', labels: {}, source: null },
    spec: { fsid: FSID, publicNetwork: null, clusterNetwork: null, monPort: 3300, poolDefaults: { size: 3, minSize: 2 } },
    status: {},
  };
}

function monNode(hostname: string, running = false): NodeDoc {
  const n = node('active').build();
  n.id = `00000000-0000-4000-8000-00000000000${hostname === 'a' ? 'a' : 'b'}`;
  n.spec.hostname = hostname;
  n.spec.daemons = { mon: { diskId: DISK_ID } };
  n.status.ip = '192.0.2.1';
  n.status.daemons = { mon: running };
  return n;
}

function undesired(n: NodeDoc): NodeDoc {
  n.spec.daemons = {};
  return n;
}

const monDisk = { id: DISK_ID, status: { present: true, devicePath: '/dev/sdb' } } as unknown as DiskDoc;

/** `self` opened the bootstrap (its run completed) unless `owner` says another node did. */
function observed(self: NodeDoc, over: Partial<MonObserved> & { owner?: NodeDoc } = {}): MonObserved {
  const owner = over.owner ?? self;
  const members = [
    { nodeId: owner.id, name: owner.spec.hostname, addr: '192.0.2.1' },
    { nodeId: self.id, name: self.spec.hostname, addr: '192.0.2.2' },
  ];
  return {
    node: self,
    cluster: cluster(),
    monNodes: [self],
    monDisk,
    quorum: false,
    bootstrapKeys: true,
    gatherEndsAt: null,
    bootstrap: { owner, run: run('completed', { args: { initialMembers: members } }), members },
    createRun: run('completed'),
    restartRun: null,
    now: NOW,
    retryBaseMs: 1_000,
    startGraceMs: 5_000,
    adminKeyImported: false,
    importRun: null,
    openedCluster: owner.id === self.id,
    removal: { monmap: null, othersRemoving: [], monmapRun: null, nodeRun: null },
    ...over,
  };
}

/** The step a plan starts, as the table names it. */
type StepKind = NonNullable<ReturnType<typeof planMon>['step']>['kind'];

const table: Array<[string, MonObserved, string, StepKind | null, string]> = [
  [
    'the node that created the cluster imports client.admin once its monitor runs',
    observed(monNode('a', true)),
    'running',
    'import-admin-key',
    'ImportingAdminKey',
  ],
  [
    'it imports right after its bootstrap, before its agent reports the monitor',
    observed(monNode('a'), { createRun: run('completed', { completedAt: NOW - 100 }) }),
    'starting',
    'import-admin-key',
    'ImportingAdminKey',
  ],
  [
    'an import in progress starts nothing more',
    observed(monNode('a', true), { importRun: run('running') }),
    'running',
    null,
    'ImportingAdminKey',
  ],
  [
    'a failed import waits out its backoff',
    observed(monNode('a', true), { importRun: run('failed', { completedAt: NOW - 10 }) }),
    'running',
    null,
    'RetryBackoff',
  ],
  ['a failed import is retried', observed(monNode('a', true), { importRun: run('failed') }), 'running', 'import-admin-key', 'Retrying'],
  [
    'three failed imports show as failed',
    observed(monNode('a', true), { importRun: run('failed', { attempt: 3 }) }),
    'failed',
    'import-admin-key',
    'Retrying',
  ],
  ['once imported the monitor is simply running', observed(monNode('a', true), { adminKeyImported: true }), 'running', null, 'Running'],
  [
    'a first monitor that did not open the bootstrap imports nothing',
    observed(monNode('b', true), { owner: monNode('a', true) }),
    'running',
    null,
    'Running',
  ],
  [
    'a created monitor that stopped is started again before the import (which needs a quorum)',
    observed(monNode('a')),
    'starting',
    'restart',
    'Starting',
  ],
  [
    'a monitor no longer desired that opened the cluster still imports first (its removal needs Ceph to answer)',
    observed(undesired(monNode('a', true))),
    'orphaned',
    'import-admin-key',
    'ImportingAdminKey',
  ],
  [
    'once imported, a monitor no longer desired goes to its removal',
    observed(undesired(monNode('a', true)), { adminKeyImported: true }),
    'blocked',
    null,
    'MonmapUnknown',
  ],
];

for (const [title, input, phase, step, reason] of table) {
  test(`mon plan: ${title}`, (t) => {
    const p = planMon(input);
    t.is(String(p.status?.phase), phase);
    t.is(String(p.status?.reason), reason);
    t.is(p.step ? p.step.kind : null, step);
  });
}

test('mon loop imports client.admin as mon. for the node that created the cluster, and the simulated cephx takes it from then on', async (t) => {
  const store = await createMemoryStore();
  const clock = new ManualClock();
  await store.create({
    kind: CephKind.Cluster,
    id: CLUSTER_ID,
    name: 'ceph',
    spec: { fsid: FSID, publicNetwork: null, clusterNetwork: null, monPort: 3300, poolDefaults: { size: 3, minSize: 2 } },
  });
  await store.create({
    kind: Kind.Disk,
    id: DISK_ID,
    name: 'sdb',
    spec: { nodeId: NODE_A, serial: 'S1', osd: false, wipeGeneration: 0 },
    status: { present: true, devicePath: '/dev/sdb' },
  });
  const spec = { ...newNodeSpec('52:54:00:00:00:01', 'a'), daemons: { mon: { diskId: DISK_ID } } };
  await store.create({
    kind: Kind.Node,
    id: NODE_A,
    name: 'a',
    spec,
    status: { phase: 'active', ip: '10.0.0.1', daemons: { mon: true, mgr: false, mds: false, rgw: false } },
  });
  for (const k of BOOTSTRAP_KEYS)
    await saveKey(store, { entity: k.entity, nodeId: null, caps: { ...k.caps } }, newCephxKey(clock.now(), randomBytes));
  const monKey = (await getKey(store, 'mon.'))!.status.key!;
  const adminKey = (await getKey(store, 'client.admin'))!.status.key!;
  // The monitor's mkfs had only mon., as the agent makes it.
  const { cluster: sim } = newCluster();
  sim.bootstrap(FSID, { name: 'a', addr: '10.0.0.1', host: 'a' }, undefined, [{ entity: 'mon.', key: monKey, caps: { mon: 'allow *' } }]);
  sim.startMon('a');
  const ceph = new SimCephApi(sim, { sleep: instant, keyOf: async (e) => (await getKey(store, e))?.status.key });
  await t.throwsAsync(ceph.status(), { message: /exit code 13|RADOS permission denied/ });
  const bootstrap = {
    id: 'boot',
    spec: { taskName: 'ceph.mon.bootstrap', targetId: NODE_A, attempt: 1, args: { monName: 'a', addr: '10.0.0.1' } },
    status: { state: 'completed', completedAt: new Date(clock.now()).toISOString(), error: null, result: null },
    metadata: { createdAt: new Date(clock.now() - 1000).toISOString() },
  } as unknown as TaskRun;
  const starts: StartRequest[] = [];
  const loop = monLoop({
    store,
    ceph,
    clock,
    retryBaseMs: 1_000,
    startGraceMs: 1_000,
    blockedRecheckMs: 500,
    runTimeoutMs: 60_000,
    monGatherMs: 0,
    tasks: {
      start: async (req) => (starts.push(req), { id: `run-${starts.length}` } as TaskRun),
      latestFor: async (_k, _id, name) => (name === 'ceph.mon.bootstrap' ? bootstrap : undefined),
    },
  });
  const ctx = { signal: new AbortController().signal };
  const o = await loop.observe(NODE_A, ctx);
  const p = loop.plan(o!);
  t.is(p.step?.kind, 'import-admin-key');
  await loop.apply(o!, p, ctx);
  t.is(starts.length, 1);
  t.is(starts[0]!.taskName, 'ceph.mon.import-admin-key');
  t.falsy(starts[0]!.node, 'a master-level run');
  t.is(((await store.get('Node', NODE_A)) as NodeDoc).status.ceph?.mon?.reason, 'ImportingAdminKey');
  const lines: LogLine[] = [];
  await starts[0]!.script!({
    runId: 'run-1',
    args: {},
    signal: ctx.signal,
    log: (level, message) => lines.push({ timestamp: '', level, message }),
    ask: async () => 'no',
    runner: undefined as unknown as RunContext['runner'],
  });
  t.is((await ceph.status()).monCount, 1, 'the master client.admin key works now');
  t.true((await getKey(store, 'client.admin'))!.status.imported);
  t.is((await getKey(store, 'client.admin'))!.status.key, adminKey);
  const logged = JSON.stringify(lines);
  t.false(logged.includes(adminKey) || logged.includes(monKey), 'no key in the run log');
  t.true(ceph.runner.calls.some((c) => c.includes('-n mon. -k') && c.includes('auth import -i -')));
  // Imported: the node's monitor is simply running.
  const again = loop.plan((await loop.observe(NODE_A, ctx))!);
  t.is(again.step, null);
  t.is(again.status?.reason, 'Running');
  await store.close();
});

test('mon import script fails without the keys and leaves client.admin unmarked', async (t) => {
  const store = await createMemoryStore();
  const { cluster: sim } = newCluster();
  const script = importAdminKeyScript({ store, ceph: new SimCephApi(sim, { sleep: instant }) });
  await t.throwsAsync(
    script({
      runId: 'r',
      args: {},
      signal: new AbortController().signal,
      log: () => {},
      ask: async () => 'no',
      runner: undefined as unknown as RunContext['runner'],
    }),
    { message: /no mon\. or client\.admin key/ },
  );
  t.is(await getKey(store, 'client.admin'), undefined);
  await store.close();
});
