// The task runs a plan lists (#16 part 1), pure: plannedTasks() over changes and a world, and
// the Cluster changes a live cluster cannot take, refused by evaluate(). test/lab/plan-apply.test.ts
// proves in the lab that the apply then starts exactly these runs.
import test from 'ava';
import { TaskKind, plannedTasks, withPoolUsage } from '../../src/gitops/tasks.js';
import type { Change } from '../../src/gitops/types.js';
import type { World } from '../../src/gitops/world.js';
import { CLUSTER_ID, CephKind } from '../../src/model/ceph-kinds.js';
import { StorageKind, filesystemId, type FilesystemSpec } from '../../src/model/storage-kinds.js';
import type { Doc } from '../../src/model/document.js';
import type { NodeSpec, NodeStatusFields } from '../../src/model/kinds.js';
import { REMOVING_FROM_MONMAP } from '../../reconcilers/mon/removal.js';
import { node } from '../builders.js';
import { doc } from './fixtures.js';
import { clusterDoc, emptyWorld, evaluateIn, meta } from './worlds.js';

type NodeDoc = Doc<NodeSpec, NodeStatusFields>;

/** Node n<i>, active at 10.0.0.<i>, with `daemons` declared and `status` as reported. */
function n(
  i: number,
  daemons: NodeSpec['daemons'] = {},
  status: Partial<NodeStatusFields> = {},
  phase: 'active' | 'booting' = 'active',
): NodeDoc {
  const d = node(phase)
    .withSpec({ hostname: `n${i}`, macs: [`52:54:00:00:00:0${i}`], daemons })
    .withStatus({ ip: `10.0.0.${i}`, ...status })
    .build();
  return { ...d, id: `node-${i}`, name: `node-${i}` };
}

function world(nodes: NodeDoc[], cluster = clusterDoc(), keys: string[] = []): World {
  return emptyWorld({ nodes, cluster, keys: new Set(keys) });
}

/** A node's daemons changed from `was` to `now` (null: created by the file). */
function daemons(x: NodeDoc, was: NodeSpec['daemons'] | null, now: NodeSpec['daemons']): Change {
  return {
    action: was === null ? 'create' : 'update',
    kind: 'Node',
    id: x.id,
    name: x.name,
    document: 0,
    fields: ['daemons'],
    before:
      was === null
        ? null
        : { spec: { ...x.spec, daemons: was }, resourceVersion: 1, source: null, labels: {}, name: x.name, status: x.status },
    after: { spec: { ...x.spec, daemons: now }, source: null, labels: {} },
  };
}

const MON = { mon: { diskId: 'd' } };
const brief = (ts: ReturnType<typeof plannedTasks>) => ts.map((x) => `${x.task} ${x.id}`);

test('plan tasks: monitors declared before any exists bootstrap together, and the first by hostname imports client.admin after them', (t) => {
  const [a, b, c] = [n(1), n(2), n(3)];
  const d = n(4, {}, {}, 'booting');
  const tasks = plannedTasks([daemons(c, {}, MON), daemons(a, {}, MON), daemons(b, {}, MON), daemons(d, {}, MON)], world([a, b, c, d]));
  t.deepEqual(brief(tasks), [
    `${TaskKind.monBootstrap} node-3`,
    `${TaskKind.monBootstrap} node-1`,
    `${TaskKind.monBootstrap} node-2`,
    // Not active: it is not in the first monmap, and joins the quorum the others form.
    `${TaskKind.monJoin} node-4`,
    `${TaskKind.monImportAdminKey} node-1`,
  ]);
});

test('plan tasks: a monitor declared on a live cluster joins it, and nothing is imported again', (t) => {
  const [a, b] = [n(1, MON, { daemons: { mon: true } }), n(2)];
  const tasks = plannedTasks([daemons(b, {}, MON)], world([a, b], clusterDoc({}, { bootstrapped: true, quorum: ['n1'] })));
  t.deepEqual(brief(tasks), [`${TaskKind.monJoin} node-2`]);
});

test("plan tasks: a monitor's removal lists monmap-remove and remove, destructive, with the quorum it leaves", (t) => {
  const mons = [1, 2, 3].map((i) => n(i, MON, { daemons: { mon: true } }));
  const w = world(mons, clusterDoc({}, { bootstrapped: true, quorum: ['n1', 'n2', 'n3'] }));
  const tasks = plannedTasks([daemons(mons[2]!, MON, {})], w);
  t.deepEqual(brief(tasks), [`${TaskKind.monmapRemove} node-3`, `${TaskKind.monRemove} node-3`]);
  for (const x of tasks) {
    t.true(x.destructive, `${x.task} is destructive`);
    t.deepEqual(x.quorumAfter, { monitor: 'n3', monitors: 2, up: 2, majority: 2 });
  }
  // One that was never made (no store, not in the monmap): only its node-level removal.
  const unmade = n(4, MON);
  const never = plannedTasks([daemons(unmade, MON, {})], world([...mons, unmade], w.cluster));
  t.deepEqual(brief(never), [`${TaskKind.monRemove} node-4`]);
  t.like(never[0]!.quorumAfter, { monitors: 3, up: 3, majority: 2 });
});

test('plan tasks: a daemon declared again reuses the key Quarry kept; a new one has its key made first', (t) => {
  const a = n(1, MON, { daemons: { mon: true } });
  const w = world([a], clusterDoc({}, { bootstrapped: true }), ['mgr.n1']);
  t.deepEqual(brief(plannedTasks([daemons(a, MON, { ...MON, mgr: {}, mds: {} })], w)), [
    'ceph.mgr.start node-1',
    'ceph.mds.key node-1',
    'ceph.mds.start node-1',
  ]);
});

test("plan tasks: a clusterNetwork change lists each OSD node's ceph.config.restart, one node at a time in the budget's order", (t) => {
  const osds = [3, 1, 2].map((i) => n(i, {}, { daemons: { osds: [i] } }));
  const idle = n(4);
  const before = clusterDoc({ clusterNetwork: '10.1.0.0/16' }, { bootstrapped: true });
  const change: Change = {
    action: 'update',
    kind: CephKind.Cluster,
    id: CLUSTER_ID,
    name: 'ceph',
    document: 0,
    fields: ['clusterNetwork'],
    before: { spec: before.spec, resourceVersion: 1, source: null, labels: {}, name: 'ceph', status: {} },
    after: { spec: { ...before.spec, clusterNetwork: '10.2.0.0/16' }, source: null, labels: {} },
  };
  const tasks = plannedTasks([change], world([...osds, idle], before));
  t.deepEqual(
    brief(tasks),
    [1, 2, 3].map((i) => `${TaskKind.configRestart} node-${i}`),
  );
  t.true(tasks.every((x) => x.kind === 'Node' && x.destructive));
  // poolDefaults is read by no running daemon: nothing restarts.
  const pools: Change = {
    ...change,
    fields: ['poolDefaults'],
    after: { ...change.after!, spec: { ...before.spec, poolDefaults: { size: 3, minSize: 1 } } },
  };
  t.deepEqual(plannedTasks([pools], world([...osds, idle], before)), []);
});

const clusterFile = (spec: string) => doc('Cluster', 'default', spec);

test('plan refusals: publicNetwork and monPort cannot change once the cluster runs; the error says why, at the field', async (t) => {
  const live = world([n(1, MON, { daemons: { mon: true } })], clusterDoc({ publicNetwork: '10.0.0.0/16' }, { bootstrapped: true }));
  for (const [field, value] of [
    ['publicNetwork', '10.9.0.0/16'],
    ['monPort', '6789'],
  ] as const) {
    const e = await evaluateIn(live, clusterFile(`${field}: ${value}`));
    t.is(e.errors.length, 1, field);
    t.like(e.errors[0], { field: `/spec/${field}`, line: 6 });
    t.regex(e.errors[0]!.message, new RegExp(`^LIVE_CLUSTER: ${field} cannot change .*: .*monmap`), field);
    t.deepEqual(e.changes, [], `${field}: nothing would be written`);
  }
  // The same values, or fields a live cluster takes, pass.
  t.deepEqual((await evaluateIn(live, clusterFile('publicNetwork: 10.0.0.0/16\nmonPort: 3300\nclusterNetwork: 10.5.0.0/16'))).errors, []);
  // Before the cluster lives, anything goes.
  const young = world([n(1, MON)], clusterDoc({ publicNetwork: '10.0.0.0/16' }));
  t.deepEqual((await evaluateIn(young, clusterFile('publicNetwork: 10.9.0.0/16\nmonPort: 6789'))).errors, []);
});

test('plan refusals: a public network first declared on a live cluster is taken only when it holds every monitor address', async (t) => {
  const live = world(
    [n(1, MON, { daemons: { mon: true } }), n(2, MON, { daemons: { mon: true } })],
    clusterDoc({}, { bootstrapped: true }),
  );
  t.deepEqual((await evaluateIn(live, clusterFile('publicNetwork: 10.0.0.0/24'))).errors, []);
  const e = await evaluateIn(live, clusterFile('publicNetwork: 10.0.0.0/31'));
  t.is(e.errors.length, 1, 'n2 (10.0.0.2) is outside 10.0.0.0/31');
  t.like(e.errors[0], { field: '/spec/publicNetwork' });
});

test("plan tasks: a filesystem's deletion names its pools, with the objects and bytes Ceph says are in them", (t) => {
  const spec = { name: 'cephfs', metadataPool: 'cephfs_metadata', metadataPG: 16, dataPool: 'cephfs_data', dataPG: 64 };
  const change: Change = {
    action: 'update',
    kind: 'Filesystem',
    id: 'fs-1',
    name: 'cephfs',
    document: 0,
    fields: ['absent'],
    before: {
      spec,
      resourceVersion: 1,
      source: null,
      labels: {},
      name: 'cephfs',
      status: {
        pools: [
          { name: 'cephfs_metadata', pgNum: 16 },
          { name: 'cephfs_data', pgNum: 64 },
        ],
      },
    },
    after: { spec: { ...spec, absent: true }, source: null, labels: {} },
  };
  const tasks = plannedTasks([change], world([]));
  t.deepEqual(brief(tasks), [`${TaskKind.fsDeleteConfirm} fs-1`, `${TaskKind.fsDelete} fs-1`]);
  t.deepEqual(tasks[1]!.pools, [{ name: 'cephfs_metadata' }, { name: 'cephfs_data' }], 'without Ceph: the names alone');
  const usage = new Map([
    ['cephfs_metadata', { objects: 22, bytes: 1536 }],
    ['cephfs_data', { objects: 0, bytes: 0 }],
  ]);
  const known = withPoolUsage(tasks, usage);
  t.deepEqual(known[1]!.pools, [
    { name: 'cephfs_metadata', objects: 22, bytes: 1536 },
    { name: 'cephfs_data', objects: 0, bytes: 0 },
  ]);
  t.regex(known[1]!.question!, /pool cephfs_metadata \(22 objects, 1\.5 KiB\) and pool cephfs_data \(0 objects, 0 B\)/);
  t.is(known[0]!.question, known[1]!.question, 'the question and the deletion say the same');
});

test('plan refusals: an fsid is no field of a file: refused at the field, whatever the cluster', async (t) => {
  const e = await evaluateIn(world([]), clusterFile('fsid: 0b5e1b2c-7b43-4d4e-9a52-2d1a8c9e1f00'));
  t.is(e.errors.length, 1);
  t.deepEqual(e.changes, []);
});

test('plan refusals: the pools of a filesystem Ceph has keep their names and PG counts; one not made yet may change', async (t) => {
  const spec: FilesystemSpec = { name: 'cephfs', metadataPool: 'cephfs_metadata', metadataPG: 16, dataPool: 'cephfs_data', dataPG: 32 };
  const fs = (created: boolean): Doc<FilesystemSpec> => ({
    kind: StorageKind.Filesystem,
    id: filesystemId('cephfs'),
    name: 'cephfs',
    metadata: meta,
    spec,
    status: { created },
  });
  const file = (pg: number) =>
    doc('Filesystem', 'cephfs', `name: cephfs\nmetadataPool: cephfs_metadata\ndataPool: cephfs_data\ndataPG: ${pg}`);
  const made = { ...world([]), filesystems: [fs(true)] };
  const e = await evaluateIn(made, file(64));
  t.is(e.errors.length, 1);
  t.like(e.errors[0], { field: '/spec/dataPG' });
  t.regex(e.errors[0]!.message, /^LIVE_FILESYSTEM: dataPG of filesystem cephfs is 32 and cannot become 64/);
  t.deepEqual(e.changes, []);
  t.deepEqual((await evaluateIn(made, file(32))).errors, [], 'as made: accepted');
  t.deepEqual((await evaluateIn({ ...world([]), filesystems: [fs(false)] }, file(64))).errors, [], 'not made yet: accepted');
});

test('plan tasks: a monitor declared again while it is taken out of the monmap has its old store removed, then joins', (t) => {
  const removing = n(3, {}, { ceph: { mon: { phase: 'orphaned', reason: REMOVING_FROM_MONMAP, message: '' } } });
  const w = world([n(1, MON, { daemons: { mon: true } }), removing], clusterDoc({}, { bootstrapped: true, quorum: ['n1'] }));
  t.deepEqual(brief(plannedTasks([daemons(removing, {}, MON)], w)), [`${TaskKind.monRemove} node-3`, `${TaskKind.monJoin} node-3`]);
});

test('plan tasks: a file powering a node off lists the soft power-off, noout around it when it runs OSDs, and its BMC check; on, the BMC power-on', async (t) => {
  const bmc = { address: '10.0.9.1', port: 623, username: 'admin', password: 'pw' };
  const active = (osds: number[], withBmc: boolean) => {
    const n = node('active')
      .withSpec({ hostname: 'h1', ...(withBmc ? { bmc } : {}) })
      .withStatus({ daemons: { osds } })
      .build();
    return emptyWorld({ nodes: [n] });
  };
  const file = (power: 'on' | 'off') => doc('Node', 'h1', `match: { hostname: h1 }\npower: ${power}`);
  const tasks = async (w: ReturnType<typeof emptyWorld>, power: 'on' | 'off') =>
    (await evaluateIn(w, file(power))).tasks.map((x) => x.task);
  t.deepEqual(await tasks(active([3], true), 'off'), [TaskKind.osdNoout, TaskKind.shutdown, TaskKind.bmcPowerOff, TaskKind.osdNoout]);
  t.deepEqual(await tasks(active([], false), 'off'), [TaskKind.shutdown]);
  t.deepEqual(await tasks(active([], true), 'on'), [], 'on already: nothing');
  const off = (withBmc: boolean) =>
    emptyWorld({
      nodes: [
        node('offline')
          .withSpec({ hostname: 'h1', power: 'off', ...(withBmc ? { bmc } : {}) })
          .build(),
      ],
    });
  t.deepEqual(await tasks(off(true), 'on'), [TaskKind.bmcPowerOn]);
  t.deepEqual(await tasks(off(false), 'on'), [], 'no BMC: Blocked NoPowerControl, no run');
});
