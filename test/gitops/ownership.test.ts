// The folder owns what its files declare: the guarded store refuses other writers' changes to
// owned fields, lets them change the rest, and an apply that fails midway leaves nothing behind.
import test from 'ava';
import { ConflictError } from '../../src/errors.js';
import { applyChanges } from '../../src/gitops/apply.js';
import { guardOwnership } from '../../src/gitops/ownership.js';
import { TaskKind } from '../../src/gitops/tasks.js';
import type { Change } from '../../src/gitops/types.js';
import { Kind, type NodeSpec } from '../../src/model/kinds.js';
import { NetworkKind } from '../../src/model/network-kinds.js';
import { createMemoryStore } from '../../src/store/index.js';
import { MonTask } from '../../reconcilers/mon/plan.js';
import { MaintenanceTask } from '../../reconcilers/node/maintenance.js';
import { RolloutTask } from '../../reconcilers/node/rollout.js';
import { NodeTask } from '../../reconcilers/node/plan.js';
import { PowerTask } from '../../reconcilers/node/power.js';
import { OsdTask } from '../../reconcilers/osd/plan.js';
import { DHCP_START_TASK } from '../../reconcilers/network/plan.js';
import { FS_CREATE_TASK, FsDeleteTask } from '../../reconcilers/fs/plan.js';
import { CRUSH_PLACE_TASK, CRUSH_RULE_TASK } from '../../reconcilers/cluster/crush-plan.js';
import { RGW_USER_CREATE_TASK, RgwUserDeleteTask } from '../../reconcilers/rgw-user/plan.js';
import { DOWNLOAD_TASK, REMOVE_TASK } from '../../src/model/image-kinds.js';
import { nodeSpec } from '../store/helpers.js';

const owned = { type: 'file' as const, file: 'site/nodes.yaml', document: 2, fields: ['role', 'power', 'image', 'daemons'] };

async function setup() {
  const raw = await createMemoryStore();
  const guarded = guardOwnership(raw);
  const node = await raw.create({ kind: Kind.Node, id: 'n1', name: 'node-1', spec: nodeSpec(), source: owned });
  return { raw, guarded, node };
}

test('ownership: a change to an owned field is refused with SPEC_OWNED naming the file and document', async (t) => {
  const { guarded } = await setup();
  const err = await t.throwsAsync(
    guarded.mutateSpec<NodeSpec>(Kind.Node, 'n1', (d) => ({ ...d.spec, daemons: { mgr: {} } })),
    { instanceOf: ConflictError },
  );
  t.is(err.code, 'SPEC_OWNED');
  t.is(err.message, 'Node node-1: daemons is owned by the specs file site/nodes.yaml (document 2); change the file instead');
  const doc = await guarded.mustGet(Kind.Node, 'n1');
  await t.throwsAsync(
    guarded.updateSpec(Kind.Node, 'n1', { ...nodeSpec(), role: 'master' }, { resourceVersion: doc.metadata.resourceVersion }),
    { message: /role is owned/ },
  );
  await t.throwsAsync(guarded.delete(Kind.Node, 'n1'), { message: /owned by the specs file/ });
  t.deepEqual((await guarded.mustGet<NodeSpec>(Kind.Node, 'n1')).spec, nodeSpec());
});

test('ownership: fields the file does not own, orphans and the folder itself are not held back', async (t) => {
  const { raw, guarded } = await setup();
  const bumped = await guarded.mutateSpec<NodeSpec>(Kind.Node, 'n1', (d) => ({ ...d.spec, restartGeneration: 1 }));
  t.is(bumped.spec.restartGeneration, 1);
  const viaRaw = await raw.mutateSpec<NodeSpec>(Kind.Node, 'n1', (d) => ({ ...d.spec, daemons: { mgr: {} } }));
  t.deepEqual(viaRaw.spec.daemons, { mgr: {} });
  await raw.updateSpec(Kind.Node, 'n1', viaRaw.spec, {
    resourceVersion: viaRaw.metadata.resourceVersion,
    source: { ...owned, orphaned: true },
  });
  const freed = await guarded.mutateSpec<NodeSpec>(Kind.Node, 'n1', (d) => ({ ...d.spec, daemons: {} }));
  t.deepEqual(freed.spec.daemons, {});
});

test('apply: a write that fails midway undoes what the apply wrote before it', async (t) => {
  const { raw, node } = await setup();
  const netSpec = {
    cidr: '10.0.0.0/16',
    gateway: '10.0.0.1',
    dnsServers: ['10.0.0.1'],
    rangeStart: '10.0.128.0',
    rangeEnd: '10.0.255.253',
    nicId: '461dbbdf-3e8b-55e8-a6f8-506366d81369',
  };
  const source = { type: 'file', file: 'a.yaml', document: 0, fields: ['cidr'] };
  const changes: Change[] = [
    {
      action: 'create',
      kind: NetworkKind.Network,
      id: 'net',
      name: '10.0.0.0/16',
      document: 0,
      fields: ['cidr'],
      before: null,
      after: { spec: netSpec, source, labels: {}, status: { phase: 'pending' } },
    },
    {
      action: 'update',
      kind: Kind.Node,
      id: 'n1',
      name: 'node-1',
      document: 1,
      fields: ['role'],
      before: { spec: node.spec, resourceVersion: node.metadata.resourceVersion, source: owned, labels: {}, name: 'node-1', status: {} },
      after: { spec: { ...node.spec, role: 'master' }, source: owned, labels: {} },
    },
    // Planned against a version of n1 that is gone by the time it is written.
    {
      action: 'update',
      kind: Kind.Node,
      id: 'n1',
      name: 'node-1',
      document: 1,
      fields: ['power'],
      before: { spec: node.spec, resourceVersion: node.metadata.resourceVersion, source: owned, labels: {}, name: 'node-1', status: {} },
      after: { spec: { ...node.spec, power: 'off' }, source: owned, labels: {} },
    },
  ];
  await t.throwsAsync(applyChanges(raw, changes), { instanceOf: ConflictError });
  t.is(await raw.get(NetworkKind.Network, 'net'), undefined, 'the created network is gone again');
  t.is((await raw.mustGet<NodeSpec>(Kind.Node, 'n1')).spec.role, 'worker', 'the updated node is as it was');
});

test("tasks: the task kinds a plan names are the loops' own task names", (t) => {
  const loops = new Set<string>([
    ...Object.values(MonTask),
    ...Object.values(OsdTask),
    // The node loop's maintenance steps (#15 part 3).
    ...Object.values(MaintenanceTask),
    // The rolling restart for a config change (#15 part 2).
    ...Object.values(RolloutTask),
    // A file's power: the node loop's shutdown and its BMC steps (#15 part 4).
    NodeTask.shutdown,
    ...Object.values(PowerTask),
    // Data-bearing deletions: the question and the deletion (#16 part 3).
    ...Object.values(FsDeleteTask),
    ...Object.values(RgwUserDeleteTask),
    DHCP_START_TASK,
    FS_CREATE_TASK,
    RGW_USER_CREATE_TASK,
    CRUSH_PLACE_TASK,
    CRUSH_RULE_TASK,
    DOWNLOAD_TASK,
    REMOVE_TASK,
  ]);
  t.deepEqual(
    Object.values(TaskKind).filter((k) => !loops.has(k)),
    [],
  );
});
