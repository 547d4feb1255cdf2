// A lab cluster for storage tests: three active nodes with a monitor each, in quorum.
import type { ExecutionContext } from 'ava';
import { Client } from '../http/client.js';
import type { ClusterMetrics } from '../http/bodies.js';
import { ADMIN_PASSWORD, allActive, startLab, waitFor, type LabQuarry } from './harness.js';
import { Kind, type DiskSpec, type DiskStatusFields, type NodeSpec, type NodeStatusFields } from '../../src/model/kinds.js';
import type { Doc } from '../../src/model/document.js';

type DiskDoc = Doc<DiskSpec, DiskStatusFields>;
const GiB = 1024 ** 3;

export const diskDocs = (q: LabQuarry) => q.store.list<DiskSpec, DiskStatusFields>(Kind.Disk);
/** A disk an OSD or a monitor may take (what /disks calls eligible), read from the store. */
export const eligible = (d: DiskDoc) =>
  d.status.present !== false && !d.status.isSystem && !d.status.hasFilesystem && !d.spec.osd && (d.status.capacityBytes ?? 0) > 5 * GiB;

/** A monitor on an eligible disk of each node and a manager on the first, through the API;
 * waits for all of them in quorum and the manager available. Returns the monitors' disk ids. */
export async function monsAndManager(q: LabQuarry, c: Client, nodes: Array<Doc<NodeSpec, NodeStatusFields>>): Promise<Set<string>> {
  const monDisks = new Set<string>();
  for (const n of nodes) {
    const d = (await diskDocs(q)).find((x) => x.spec.nodeId === n.id && eligible(x))!;
    monDisks.add(d.id);
    await waitFor(
      `mon on ${n.spec.hostname}`,
      async () => (await c.post('/ceph/mon/create', { nodeId: n.id, diskId: d.id })).status === 200,
    );
  }
  await c.post('/ceph/mgr', { nodeId: nodes[0]!.id });
  await waitFor(
    'quorum and a manager',
    () => q.lab!.ceph.mons.mons.filter((m) => m.running).length === nodes.length && q.lab!.ceph.mgrs.available,
    30_000,
  );
  return monDisks;
}

export async function login(q: LabQuarry, username = 'admin', password = ADMIN_PASSWORD): Promise<Client> {
  const c = new Client(q.url);
  const r = await c.post('/user/login', { username, password });
  if (r.status !== 200) throw new Error(`login ${r.status}`);
  return c;
}

/** Three active nodes with a monitor each, in quorum; returns an admin client and the node ids. */
export async function cluster(t: ExecutionContext): Promise<{ q: LabQuarry; c: Client; ids: [string, string, string] }> {
  const q = await startLab(t, 3);
  const nodes = await allActive(q, 3);
  const c = await login(q);
  const disks = (await c.get('/disks')).json as Array<{ id: string; nodeId: string; eligible: boolean }>;
  for (const n of nodes) {
    const diskId = disks.find((d) => d.nodeId === n.id && d.eligible)!.id;
    // A loaded machine can miss a heartbeat and see a node offline for a moment: ask again.
    await waitFor(
      `monitor declared on ${n.spec.hostname}`,
      async () => (await c.post('/ceph/mon/create', { nodeId: n.id, diskId })).status === 200,
    );
  }
  await waitFor('quorum of three', async () => (await c.get<ClusterMetrics | undefined>('/ceph/metrics')).json?.monCount === 3, 30_000);
  return { q, c, ids: nodes.map((n) => n.id) as [string, string, string] };
}

/** `count` active nodes, monitors on the first three, a manager, two OSDs per node and a size-3
 * pool with data: a cluster whose ok-to-stop answers come from real PGs (the shape of the example
 * spec's: three monitors, OSDs on four hosts; disruption-budget and maintenance tests). */
export async function osdCluster(t: ExecutionContext, count: number, over: Parameters<typeof startLab>[2] = {}) {
  const q = await startLab(t, count, over);
  await allActive(q, count);
  const nodes: Array<Doc<NodeSpec, NodeStatusFields>> = [];
  for (let i = 1; i <= count; i++) nodes.push(await q.nodeOf(i));
  const c = await login(q);
  const monDisks = await monsAndManager(q, c, nodes.slice(0, 3));
  const osdDisks: DiskDoc[] = [];
  for (const n of nodes)
    osdDisks.push(...(await diskDocs(q)).filter((d) => d.spec.nodeId === n.id && eligible(d) && !monDisks.has(d.id)).slice(0, 2));
  const r = await c.post<{ results: Array<{ status: string }> }>('/invoke/disk', {
    operation: 'ceph.create-osd',
    diskIds: osdDisks.map((d) => d.id),
  });
  if (r.json.results.some((x) => x.status !== 'scheduled')) throw new Error(`not scheduled: ${r.text}`);
  await waitFor(
    'every OSD running',
    async () => {
      const all = await Promise.all(osdDisks.map((d) => q.store.mustGet<DiskSpec, DiskStatusFields>(Kind.Disk, d.id)));
      return all.every((d) => d.status.osd?.phase === 'running' && typeof d.status.osdId === 'number');
    },
    60_000,
  );
  await waitFor(
    'every node reports its two OSDs',
    async () => (await q.nodes()).every((n) => (n.status.daemons?.osds ?? []).length === 2),
    60_000,
  );
  q.lab!.ceph.createPool('rbd', 32);
  q.lab!.ceph.enableApplication('rbd', 'rbd');
  q.lab!.ceph.writeData('rbd', 10 * GiB);
  await waitFor('every PG active+clean', () => q.lab!.ceph.pgs().every((p) => p.state === 'active+clean'), 30_000);
  return { q, c, nodes };
}
