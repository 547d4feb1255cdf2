// A lab cluster for storage tests: three active nodes with a monitor each, in quorum.
import type { ExecutionContext } from 'ava';
import { Client } from '../http/client.js';
import type { ClusterMetrics } from '../http/bodies.js';
import { ADMIN_PASSWORD, allActive, startLab, waitFor, type LabQuarry } from './harness.js';

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
