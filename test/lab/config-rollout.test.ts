// A rolling restart for a config change (#15 part 2), in the lab: clusterNetwork changed on a
// converged cluster restarts every OSD once, one failure domain at a time under daemon-restart
// leases (monitors untouched); the same spec applied again restarts nothing, and a node that
// joins afterwards is not restarted either.
import test from 'ava';
import { Step } from '../../src/catalogue/index.js';
import { CLUSTER_ID, CephKind, type ClusterSpec } from '../../src/model/ceph-kinds.js';
import { Kind, type DiskSpec, type DiskStatusFields, type NodeSpec, type NodeStatusFields } from '../../src/model/kinds.js';
import type { Doc } from '../../src/model/document.js';
import type { AnyBusEvent } from '../../src/tasks/bus.js';
import { configHashes } from '../../src/model/daemon-config.js';
import type { InvokeResults } from '../http/bodies.js';
import { startLab, waitFor, type LabQuarry } from './harness.js';
import { diskDocs, eligible, login, monsAndManager } from './ceph-cluster.js';
import type { Client } from '../http/client.js';

type NodeDoc = Doc<NodeSpec, NodeStatusFields>;
const GiB = 1024 ** 3;

async function approve(c: Client, ids: string[]): Promise<void> {
  const r = await c.post<InvokeResults>('/invoke/node', { operation: 'node.approve', nodeIds: ids });
  if (r.json.results.some((x) => x.status !== 'scheduled')) throw new Error(`not approved: ${r.text}`);
}

async function osdsOn(q: LabQuarry, c: Client, n: NodeDoc, skip: Set<string>, count: number): Promise<void> {
  const disks = (await diskDocs(q)).filter((d) => d.spec.nodeId === n.id && eligible(d) && !skip.has(d.id)).slice(0, count);
  const r = await c.post<InvokeResults>('/invoke/disk', { operation: 'ceph.create-osd', diskIds: disks.map((d) => d.id) });
  if (r.json.results.some((x) => x.status !== 'scheduled')) throw new Error(`not scheduled: ${r.text}`);
  await waitFor(
    `OSDs running on ${n.spec.hostname}`,
    async () => {
      const all = await Promise.all(disks.map((d) => q.store.mustGet<DiskSpec, DiskStatusFields>(Kind.Disk, d.id)));
      return all.every((d) => d.status.osd?.phase === 'running');
    },
    60_000,
  );
}

const nodeOf = (q: LabQuarry, id: string) => q.store.mustGet<NodeSpec, NodeStatusFields>(Kind.Node, id);
const completedRestarts = (events: AnyBusEvent[]) =>
  events
    .filter((e) => e.type === 'task.state.changed')
    .map((e) => e.payload as { runId: string; taskName: string; state: string })
    .filter((p) => p.taskName === Step.configRestart && p.state === 'completed');

/** The most failure domains under daemon-restart leases at once, from the lease events in order. */
function mostDomainsAtOnce(events: AnyBusEvent[]): number {
  const held = new Map<string, string[]>();
  let most = 0;
  for (const e of events) {
    if (e.type !== 'disruption.lease.taken' && e.type !== 'disruption.lease.released') continue;
    const p = e.payload as { holderId: string; kind: string; domains: string[] };
    if (p.kind !== 'daemon-restart') continue;
    if (e.type === 'disruption.lease.taken') held.set(p.holderId, p.domains);
    else held.delete(p.holderId);
    most = Math.max(most, new Set([...held.values()].flat()).size);
  }
  return most;
}

async function setClusterNetwork(q: LabQuarry, cidr: string): Promise<ClusterSpec> {
  const doc = await q.store.mustGet<ClusterSpec>(CephKind.Cluster, CLUSTER_ID);
  const spec = { ...doc.spec, clusterNetwork: cidr };
  await q.store.updateSpec(CephKind.Cluster, CLUSTER_ID, spec, { resourceVersion: doc.metadata.resourceVersion });
  return spec;
}

test('config rollout a clusterNetwork change restarts every OSD once, one domain at a time; again or on a new node, nothing', async (t) => {
  const q = await startLab(t, 4, { approve: false });
  const c = await login(q);
  await waitFor('four machines waiting for approval', async () => (await q.nodes()).length === 4);
  const nodes: NodeDoc[] = [];
  for (let i = 1; i <= 3; i++) nodes.push(await q.nodeOf(i));
  const late = await q.nodeOf(4);
  await approve(
    c,
    nodes.map((n) => n.id),
  );
  await waitFor('three nodes active', async () =>
    (await Promise.all(nodes.map((n) => nodeOf(q, n.id)))).every((n) => n.status.phase === 'active'),
  );
  const monDisks = await monsAndManager(q, c, nodes);
  for (const n of nodes) await osdsOn(q, c, n, monDisks, 2);
  q.lab!.ceph.createPool('rbd', 32);
  q.lab!.ceph.enableApplication('rbd', 'rbd');
  q.lab!.ceph.writeData('rbd', 10 * GiB);
  await waitFor('every node reports its OSDs', async () =>
    (await Promise.all(nodes.map((n) => nodeOf(q, n.id)))).every((n) => (n.status.daemons?.osds ?? []).length === 2),
  );
  await waitFor('every PG active+clean', () => q.lab!.ceph.pgs().every((p) => p.state === 'active+clean'), 30_000);
  const before = (await Promise.all(nodes.map((n) => nodeOf(q, n.id)))).map((n) => n.status.daemonConfig);
  t.true(
    before.every((r) => r !== undefined),
    'every node recorded the config it runs with',
  );
  t.is(completedRestarts(q.events).length, 0, 'nothing restarted while the cluster was built');

  const spec = await setClusterNetwork(q, '10.99.0.0/24');
  const want = configHashes(spec);
  await waitFor(
    'every node running the new config',
    async () =>
      (await Promise.all(nodes.map((n) => nodeOf(q, n.id)))).every(
        (n) => n.status.daemonConfig?.hashes.osd === want.osd && n.status.disruption === undefined,
      ),
    60_000,
  );
  const done = completedRestarts(q.events);
  t.is(done.length, 3, 'one run per node');
  const restarted: string[] = [];
  for (const d of done) {
    const run = await q.tasks.get(d.runId);
    restarted.push(...((run.status.result?.restarted as string[] | undefined) ?? []));
    t.true(
      (run.spec.args.daemons as Array<{ daemon: string }>).every((x) => x.daemon === 'osd'),
      'OSDs alone',
    );
  }
  const osds = (await Promise.all(nodes.map((n) => nodeOf(q, n.id)))).flatMap((n) =>
    (n.status.daemons?.osds ?? []).map((id) => `osd.${id}`),
  );
  t.deepEqual([...restarted].sort(), [...osds].sort(), 'every OSD restarted exactly once');
  t.is(mostDomainsAtOnce(q.events), 1, 'never two failure domains at once');
  t.true(q.lab!.ceph.hasQuorum());

  // The same spec again: nothing to restart.
  await setClusterNetwork(q, '10.99.0.0/24');
  // A node joining afterwards: approved now, it records the config of now, and its new OSD starts with it.
  await approve(c, [late.id]);
  await waitFor('the late node active', async () => (await nodeOf(q, late.id)).status.phase === 'active');
  await osdsOn(q, c, await nodeOf(q, late.id), new Set(), 1);
  await waitFor('the late node records the config of now with its OSD', async () => {
    const n = await nodeOf(q, late.id);
    return (n.status.daemons?.osds ?? []).length === 1 && n.status.daemonConfig?.hashes.osd === want.osd;
  });
  t.is(completedRestarts(q.events).length, 3, 'no further restart');
  t.is(await q.tasks.latestFor(Kind.Node, late.id, Step.configRestart), undefined, 'the late node is not restarted');
});
