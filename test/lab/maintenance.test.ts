// Maintenance mode and the noout window against the lab's Ceph (issue #15, part 3): a node in
// maintenance holds a lease of the disruption budget, its host carries noout (its OSDs are not
// marked out however long they are down), its daemons are stopped and no loop starts them
// again; leaving starts them, clears noout and gives the lease back. Restarts and shutdowns set
// noout under their lease and clear it when the node is back or off.
import test from 'ava';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InvokeResults } from '../http/bodies.js';
import type { Client } from '../http/client.js';
import { Kind, type NodeSpec, type NodeStatusFields, type TaskRunSpec } from '../../src/model/kinds.js';
import type { Doc } from '../../src/model/document.js';
import { DISRUPTION_BUDGET_ID, DisruptionKind, type DisruptionBudgetStatus } from '../../src/model/disruption-kinds.js';
import { nooutOsds } from '../../src/sim/ceph/stop-gates.js';
import { startLab, waitFor, type LabQuarry } from './harness.js';
import { login, osdCluster } from './ceph-cluster.js';
import { specsLab } from '../gitops/helpers.js';

type NodeDoc = Doc<NodeSpec, NodeStatusFields>;

const leases = async (q: LabQuarry) =>
  (await q.store.get<unknown, DisruptionBudgetStatus>(DisruptionKind.DisruptionBudget, DISRUPTION_BUDGET_ID))?.status.leases ?? [];

const node = (q: LabQuarry, id: string) => q.store.mustGet<NodeSpec, NodeStatusFields>(Kind.Node, id);
const readyReason = (n: NodeDoc) => n.status.conditions?.find((c) => c.type === 'Ready')?.reason;

const invoke = async (c: Client, operation: string, nodeIds: string[]) => {
  const r = await c.post<InvokeResults>('/invoke/node', { operation, nodeIds });
  if (r.json.results.some((x) => x.status !== 'scheduled')) throw new Error(`${operation} not scheduled: ${r.text}`);
};

const inMaintenance = (q: LabQuarry, id: string, bound = 60_000) =>
  waitFor(
    'the node in maintenance, its daemons stopped',
    async () => {
      const n = await node(q, id);
      const none = (n.status.daemons?.osds ?? []).length === 0 && n.status.daemons?.mon === false;
      return n.status.phase === 'maintenance' && readyReason(n) === 'InMaintenance' && none ? n : undefined;
    },
    bound,
  );

const outOfMaintenance = (q: LabQuarry, id: string, bound = 60_000) =>
  waitFor(
    'the node active again, its daemons running and its lease given back',
    async () => {
      const n = await node(q, id);
      const back = (n.status.daemons?.osds ?? []).length === 2 && n.status.daemons?.mon === true;
      const held = (await leases(q)).some((l) => l.holderId === id);
      return n.status.phase === 'active' && back && !held && n.status.disruption === undefined ? n : undefined;
    },
    bound,
  );

/** The node's runs of the maintenance steps, oldest first. */
async function runsOf(q: LabQuarry, id: string, names: string[]): Promise<Array<Doc<TaskRunSpec, { state: string }>>> {
  const all = await q.store.list<TaskRunSpec, { state: string }>(Kind.TaskRun);
  return all
    .filter((r) => r.spec.targetId === id && names.includes(r.spec.taskName))
    .sort((a, b) => a.metadata.createdAt.localeCompare(b.metadata.createdAt) || a.metadata.resourceVersion - b.metadata.resourceVersion);
}

const STEPS = ['ceph.osd.noout', 'node.daemons-stop', 'node.daemons-start', 'node.restart', 'node.shutdown'];
const stepsOf = (runs: Array<Doc<TaskRunSpec, unknown>>) =>
  runs.map((r) => (r.spec.taskName === 'ceph.osd.noout' ? `noout ${r.spec.args.set ? 'set' : 'clear'}` : r.spec.taskName));

test.serial(
  'maintenance: in and out — noout, daemons stopped and kept stopped, OSDs not marked out; exit starts them and gives the lease back',
  async (t) => {
    const { q, c, nodes } = await osdCluster(t, 3);
    const ceph = q.lab!.ceph;
    // Down OSDs are marked out after this long unless noout holds them.
    ceph.options.downOutIntervalMs = 200;
    const n = await node(q, nodes[2]!.id);
    const osds = [...(n.status.daemons?.osds ?? [])];
    t.is(osds.length, 2);
    t.true((await c.get<string[]>(`/nodes/${n.id}/operations`)).json.includes('node.maintenance'));
    await invoke(c, 'node.maintenance', [n.id]);
    const inside = await inMaintenance(q, n.id);
    t.like(inside.status.disruption, { state: 'held', kind: 'maintenance' });
    t.deepEqual(
      (await leases(q)).map((l) => [l.holderId, l.kind]),
      [[n.id, 'maintenance']],
    );
    t.deepEqual(
      nooutOsds(ceph)
        .filter((id) => osds.includes(id))
        .sort(),
      osds.sort(),
      'the host carries noout',
    );
    t.true(ceph.hasQuorum(), 'two monitors of three keep quorum');
    // /nodes/details and the offered operations say so.
    type Detail = { id: string; status: string; disruption: { state: string; kind: string } | null };
    const detail = (await c.get<Detail[]>('/nodes/details')).json.find((d) => d.id === n.id);
    t.like(detail, { status: 'maintenance', disruption: { state: 'held', kind: 'maintenance' } });
    t.deepEqual((await c.get<string[]>(`/nodes/${n.id}/operations`)).json, ['node.restart', 'node.shutdown', 'node.maintenance-exit']);

    // Long past the down-out interval, the loops have looked again: nothing started, nothing out.
    const since = Date.now();
    await waitFor('the daemon loops say NodeInMaintenance', async () => {
      const s = (await node(q, n.id)).status;
      return s.ceph?.mon?.reason === 'NodeInMaintenance';
    });
    await waitFor('the down-out interval passed several times', () => Date.now() - since > 5 * ceph.options.downOutIntervalMs);
    ceph.tick();
    for (const id of osds) t.true(ceph.osdmap.osds.get(id)?.in, `osd.${id} still in`);
    t.deepEqual(ceph.hosts.report(n.spec.hostname).osds, [], 'no OSD started again');
    const restarts = (await q.store.list<TaskRunSpec>(Kind.TaskRun)).filter(
      (r) => r.spec.taskName === 'ceph.daemon.restart' && r.spec.nodeId === n.id,
    );
    t.deepEqual(restarts, [], 'no daemon restarted by the loops');

    // A reboot in maintenance goes on its lease, and the node comes back still in maintenance.
    await invoke(c, 'node.restart', [n.id]);
    const rebooted = await waitFor('rebooted, still in maintenance', async () => {
      const x = await node(q, n.id);
      const back = x.status.observedRestartGeneration === 1 && x.status.bootId !== inside.status.bootId;
      return back && readyReason(x) === 'InMaintenance' ? x : undefined;
    });
    t.deepEqual(rebooted.status.daemons?.osds, [], 'nothing started by the boot');
    t.is((await leases(q)).length, 1);

    await invoke(c, 'node.maintenance-exit', [n.id]);
    await outOfMaintenance(q, n.id);
    t.deepEqual(
      nooutOsds(ceph).filter((id) => osds.includes(id)),
      [],
      'noout cleared',
    );
    t.deepEqual(stepsOf(await runsOf(q, n.id, STEPS)), [
      'noout set',
      'node.daemons-stop',
      'node.restart',
      'node.daemons-start',
      'noout clear',
    ]);
    await waitFor('every PG active+clean again', () => ceph.pgs().every((p) => p.state === 'active+clean'), 30_000);
    const events = q.events
      .filter((e) => e.type.startsWith('disruption.lease.'))
      .map((e) => [e.type, (e.payload as { kind: string }).kind]);
    t.deepEqual(events, [
      ['disruption.lease.taken', 'maintenance'],
      ['disruption.lease.released', 'maintenance'],
    ]);
  },
);

test.serial(
  'maintenance: asked again while leaving — leaving ends, the lease goes back, and it enters anew with noout set again',
  async (t) => {
    const { q, c, nodes } = await osdCluster(t, 3);
    const ceph = q.lab!.ceph;
    const n = await node(q, nodes[1]!.id);
    const osds = [...(n.status.daemons?.osds ?? [])];
    await invoke(c, 'node.maintenance', [n.id]);
    await inMaintenance(q, n.id);
    await invoke(c, 'node.maintenance-exit', [n.id]);
    await waitFor('leaving has begun (its daemons are being started)', async () =>
      (await runsOf(q, n.id, ['node.daemons-start'])).length > 0 ? true : undefined,
    );
    // As a spec file's `maintenance: true` put back does (the API offers node.maintenance only
    // to an active node): the spec says maintenance again while the node is still leaving.
    await q.store.mutateSpec<NodeSpec>(Kind.Node, n.id, (d) => ({ ...d.spec, maintenance: true }));
    await waitFor('in maintenance again under a new lease', async () => {
      const x = await node(q, n.id);
      const none = (x.status.daemons?.osds ?? []).length === 0 && x.status.daemons?.mon === false;
      const taken = q.events.filter((e) => e.type === 'disruption.lease.taken').length;
      return readyReason(x) === 'InMaintenance' && none && taken === 2 ? x : undefined;
    });
    t.deepEqual(stepsOf(await runsOf(q, n.id, STEPS)), [
      'noout set',
      'node.daemons-stop',
      'node.daemons-start',
      'noout clear',
      'noout set',
      'node.daemons-stop',
    ]);
    t.deepEqual(
      nooutOsds(ceph)
        .filter((id) => osds.includes(id))
        .sort(),
      osds.sort(),
      'the host carries noout again',
    );
    t.deepEqual(
      q.events.filter((e) => e.type.startsWith('disruption.lease.')).map((e) => e.type),
      ['disruption.lease.taken', 'disruption.lease.released', 'disruption.lease.taken'],
    );
    // Each names the node by hostname beside its id, holder and nodes alike.
    for (const e of q.events.filter((x) => x.type.startsWith('disruption.lease.')))
      t.like(e.payload, { nodes: [n.id], hostnames: [n.spec.hostname], holder: { hostname: n.spec.hostname } });
  },
);

test.serial(
  'maintenance: two nodes in different domains at once — one waits naming the holder, and goes after the first exits',
  async (t) => {
    const { q, c, nodes } = await osdCluster(t, 3);
    const [a, b] = [nodes[0]!, nodes[1]!];
    await invoke(c, 'node.maintenance', [a.id, b.id]);
    const first = await waitFor('one in maintenance', async () => {
      for (const x of [a, b]) if ((await node(q, x.id)).status.phase === 'maintenance') return x;
      return undefined;
    });
    const second = first.id === a.id ? b : a;
    const waiting = await waitFor('the other waits for the budget', async () => {
      const s = await node(q, second.id);
      return s.status.disruption?.state === 'waiting' ? s : undefined;
    });
    t.is(waiting.status.phase, 'active');
    const blocked = waiting.status.conditions?.find((x) => x.type === 'Blocked');
    t.like(blocked, { status: 'True', reason: 'DisruptionBudget' });
    t.regex(waiting.status.disruption?.heldBy?.[0] ?? '', new RegExp(`^maintenance of ${first.spec.hostname} since `));
    await inMaintenance(q, first.id);
    t.deepEqual(
      (await leases(q)).map((l) => l.holderId),
      [first.id],
    );
    await invoke(c, 'node.maintenance-exit', [first.id]);
    await outOfMaintenance(q, first.id);
    await inMaintenance(q, second.id);
    t.true(q.lab!.ceph.hasQuorum());
    await invoke(c, 'node.maintenance-exit', [second.id]);
    await outOfMaintenance(q, second.id);
    t.deepEqual(await leases(q), []);
  },
);

test.serial(
  'maintenance noout window: a restart sets noout before and clears it after; a shutdown clears it once the node is off',
  async (t) => {
    const { q, c, nodes } = await osdCluster(t, 3);
    const ceph = q.lab!.ceph;
    const [a, b] = [nodes[0]!, nodes[1]!];
    await invoke(c, 'node.restart', [a.id]);
    await waitFor(
      'restarted, its lease given back',
      async () => {
        const n = await node(q, a.id);
        const back = n.status.observedRestartGeneration === 1 && n.status.phase === 'active' && n.status.disruption === undefined;
        return back && (await leases(q)).length === 0;
      },
      120_000,
    );
    const runs = await runsOf(q, a.id, STEPS);
    t.deepEqual(stepsOf(runs), ['noout set', 'node.restart', 'noout clear']);
    const log = async (id: string) =>
      ((await c.get(`/task/run/${id}/logs`)).json as Array<{ message: string }>).map((l) => l.message).join('\n');
    t.regex(await log(runs[0]!.id), /set-group noout/);
    t.regex(await log(runs[0]!.id), /admitted by the disruption budget: lease "restart of/);
    t.regex(await log(runs[2]!.id), /unset-group noout/);
    t.deepEqual(nooutOsds(ceph), []);

    await invoke(c, 'node.shutdown', [b.id]);
    const off = await waitFor(
      'shut down, noout cleared and its lease given back',
      async () => {
        const n = await node(q, b.id);
        return n.status.phase === 'offline' && (await leases(q)).length === 0 ? n : undefined;
      },
      120_000,
    );
    t.is(off.status.observedShutdownGeneration, 1);
    t.deepEqual(stepsOf(await runsOf(q, b.id, STEPS)), ['noout set', 'node.shutdown', 'noout clear']);
    t.deepEqual(nooutOsds(ceph), [], 'a node that stays off has its data recovered');
  },
);

test.serial(
  'maintenance: Quarry killed while a node is in maintenance — the lease is kept, not doubled, and exit still works',
  async (t) => {
    const stateDir = await mkdtemp(join(tmpdir(), 'quarry-maintenance-'));
    t.teardown(() => rm(stateDir, { recursive: true, force: true }));
    const { q, c, nodes } = await osdCluster(t, 3, { stateDir });
    const ceph = q.lab!.ceph;
    const n = await node(q, nodes[2]!.id);
    const osds = [...(n.status.daemons?.osds ?? [])];
    await invoke(c, 'node.maintenance', [n.id]);
    await inMaintenance(q, n.id);
    await q.stop();
    const q2 = await startLab(t, 3, { stateDir, store: undefined, lab: { ceph } });
    // What the store holds as the new Quarry starts, then every change of the budget after it.
    let perHolder = (await leases(q2)).filter((l) => l.holderId === n.id).length;
    const unwatch = q2.store.watch(q2.store.revision(), (e) => {
      if (e.type === 'relist' || e.doc.kind !== DisruptionKind.DisruptionBudget) return;
      const ls = (e.doc.status as DisruptionBudgetStatus).leases ?? [];
      perHolder = Math.max(perHolder, ls.filter((l) => l.holderId === n.id).length);
    });
    t.teardown(unwatch);
    // The new lab boots its machines again: this one stays in maintenance, its daemons stopped.
    await inMaintenance(q2, n.id);
    t.deepEqual(
      (await leases(q2)).map((l) => [l.holderId, l.kind]),
      [[n.id, 'maintenance']],
    );
    t.deepEqual(
      nooutOsds(ceph)
        .filter((id) => osds.includes(id))
        .sort(),
      osds.sort(),
    );
    t.deepEqual(
      q2.events.filter((e) => e.type === 'disruption.lease.taken'),
      [],
      'the lease was found, not taken again',
    );
    const c2 = await login(q2);
    await invoke(c2, 'node.maintenance-exit', [n.id]);
    await outOfMaintenance(q2, n.id);
    t.is(perHolder, 1, 'never two leases for the node');
    t.deepEqual(nooutOsds(ceph), []);
  },
);

test.serial('maintenance: a spec file says maintenance: true, then the line is removed — the node enters, then leaves', async (t) => {
  const q = await specsLab(t, 3);
  const example = await readFile(join(process.cwd(), 'examples', 'specs', 'lab-cluster.yaml'), 'utf8');
  await q.put('lab-cluster.yaml', example);
  await q.until('lab-cluster.yaml', (x) => x.state === 'applied', 'applied');
  const n = await q.nodeOf(3);
  await waitFor(
    'the cluster up, storage-3 running its OSDs and monitor',
    async () => {
      const s = (await node(q, n.id)).status;
      return (s.daemons?.osds ?? []).length > 0 && s.daemons?.mon === true && s.daemons.rgw === true && q.lab!.ceph.hasQuorum();
    },
    120_000,
  );
  const osdCount = (await node(q, n.id)).status.daemons?.osds?.length ?? 0;
  const withMaintenance = example.replace(/(name: storage-3\n(?:.*\n)*?spec:\n)/, '$1  maintenance: true\n');
  t.not(withMaintenance, example);
  await q.put('lab-cluster.yaml', withMaintenance);
  await inMaintenance(q, n.id, 120_000);
  const c = await q.admin();
  // What the file says is what there is: its daemons and OSDs are down on purpose.
  type FileView = { file: string; converged: boolean; blocking: Array<{ kind: string; reason: string }> };
  await waitFor('the file converged with storage-3 in maintenance', async () => {
    const f = (await c.get<FileView[]>('/specs/status')).json.find((x) => x.file === 'lab-cluster.yaml');
    return f?.converged ? f : undefined;
  });
  // The file owns it: the API may not end it.
  const r = await c.post<InvokeResults>('/invoke/node', { operation: 'node.maintenance-exit', nodeIds: [n.id] });
  t.like(r.json.results[0], { status: 'rejected', code: 'SPEC_OWNED' });
  await q.put('lab-cluster.yaml', example);
  await waitFor(
    'storage-3 active again with its daemons, the lease given back',
    async () => {
      const s = (await node(q, n.id)).status;
      const back = (s.daemons?.osds ?? []).length >= osdCount && s.daemons?.mon === true && s.daemons.rgw === true;
      return s.phase === 'active' && back && (await leases(q)).length === 0;
    },
    120_000,
  );
  t.deepEqual(nooutOsds(q.lab!.ceph), []);
});
