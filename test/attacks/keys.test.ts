// Least privilege for keys, attacked over HTTP against a running lab Quarry: a node's agent gets
// the keys of the daemons scheduled on its node and nothing else. Two hand-driven agents have a
// monitor declared each; the first (by hostname) opens the cluster and its bootstrap run waits
// for it (these agents never claim runs), so the second's monitor stays merely wanted.
import test, { type ExecutionContext } from 'ava';
import { CephKind, type KeyringStatus } from '../../src/model/ceph-kinds.js';
import type { NodeSpec, NodeStatusFields } from '../../src/model/kinds.js';
import { admin, hardware, login, readyAgent, type Agent } from '../http/agent-helpers.js';
import type { Client } from '../http/client.js';
import { startLab, waitFor, type LabQuarry } from '../lab/harness.js';
import type { NodeKeyrings, ProblemBody } from '../http/bodies.js';

interface Setup {
  q: LabQuarry;
  c: Client;
  /** Its monitor is scheduled: the loop started its bootstrap run. */
  one: Agent;
  /** Its monitor is wanted (declared, in the first monmap) but not scheduled. */
  two: Agent;
  /** What the first agent's heartbeats say of its monitor. */
  reports: { monRunning: boolean };
}

async function twoMonitorNodes(t: ExecutionContext): Promise<Setup> {
  const q = await startLab(t, 0);
  const agents = [await readyAgent(q, 1), await readyAgent(q, 2)] as [Agent, Agent];
  const reports = { monRunning: false };
  const report = () =>
    Promise.all(
      agents.map((a, i) => {
        const r = hardware(i + 1);
        if (i === 0) r.daemons = { ...r.daemons, mon: reports.monRunning };
        return a.client.post('/node/hardware', r);
      }),
    );
  await report();
  // Heartbeats, so neither node goes offline while the test looks.
  const beat = setInterval(() => void report().catch(() => {}), 200);
  t.teardown(() => clearInterval(beat));
  const c = await admin(q);
  await waitFor('both nodes active', async () =>
    (await Promise.all(agents.map((a) => q.store.get<NodeSpec, NodeStatusFields>('Node', a.nodeId)))).every(
      (n) => n?.status.phase === 'active',
    ),
  );
  const disks = (await c.get('/disks')).json as Array<{ id: string; nodeId: string; eligible: boolean }>;
  for (const a of agents) {
    const disk = disks.find((d) => d.nodeId === a.nodeId && d.eligible)!;
    const r = await c.post('/ceph/mon/create', { nodeId: a.nodeId, diskId: disk.id });
    if (r.status !== 200) throw new Error(`mon on ${a.nodeId}: ${r.status}`);
  }
  await waitFor('the keys made and the first monitor scheduled', async () => {
    const keys = (await q.store.list<unknown, KeyringStatus>(CephKind.Keyring)).filter((k) => k.status.key);
    return keys.length >= 2 && (await q.tasks.latestFor('Node', agents[0].nodeId, 'ceph.mon.bootstrap')) !== undefined;
  });
  return { q, c, one: agents[0], two: agents[1], reports };
}

const entities = async (a: Agent, nodeId = a.nodeId): Promise<string[]> => {
  const r = await a.client.get<NodeKeyrings>(`/ceph/nodes/${nodeId}/keyrings`);
  if (r.status !== 200) throw new Error(`keyrings: ${r.status}`);
  return r.json.keyrings.map((k) => k.entity);
};

test('attack an agent whose node merely has a monitor wanted (not scheduled) reads the monitor key is refused', async (t) => {
  const { q, one, two } = await twoMonitorNodes(t);
  const node = await q.store.get<NodeSpec, NodeStatusFields>('Node', two.nodeId);
  t.truthy(node?.spec.daemons.mon, 'a monitor is wanted on the node');
  t.is(await q.tasks.latestFor('Node', two.nodeId, 'ceph.mon.bootstrap'), undefined, 'but not scheduled');
  t.deepEqual(await entities(two), []);
  // The scheduled one gets mon., as its bootstrap needs.
  t.deepEqual(await entities(one), ['mon.']);
});

test('attack a monitor node agent reads client.admin is refused, while its monitor is created and once it runs', async (t) => {
  const { q, one, reports } = await twoMonitorNodes(t);
  t.false((await entities(one)).includes('client.admin'));
  // The agent says its monitor runs: still only mon.
  reports.monRunning = true;
  await waitFor(
    'the monitor reported running',
    async () => (await q.store.get<NodeSpec, NodeStatusFields>('Node', one.nodeId))?.status.daemons?.mon === true,
  );
  const answer = await one.client.get<NodeKeyrings>(`/ceph/nodes/${one.nodeId}/keyrings`);
  t.deepEqual(
    answer.json.keyrings.map((k) => k.entity),
    ['mon.'],
  );
  const admin = (await q.store.list<{ entity: string }, KeyringStatus>(CephKind.Keyring)).find((k) => k.spec.entity === 'client.admin')!;
  t.false(answer.text.includes(admin.status.key!), 'the admin key is nowhere in the answer');
});

test('attack an agent reads another node keyrings is refused', async (t) => {
  const { q, one, two } = await twoMonitorNodes(t);
  const theirs = await two.client.get<ProblemBody>(`/ceph/nodes/${one.nodeId}/keyrings`);
  t.is(theirs.status, 403);
  t.is(theirs.json.code, 'FORBIDDEN');
  for (const k of (await q.store.list<unknown, KeyringStatus>(CephKind.Keyring)).filter((x) => x.status.key))
    t.false(theirs.text.includes(k.status.key!));
});

test('attack a user who is not an admin, or an agent, makes a node an admin node is refused', async (t) => {
  const { q, c, two } = await twoMonitorNodes(t);
  await c.post('/users', { username: 'viewer', password: 'viewer-password', name: 'V', email: 'v@example.com' });
  const viewer = await login(q, 'viewer', 'viewer-password');
  t.is((await viewer.post(`/ceph/nodes/${two.nodeId}/admin-keyring`, { adminKeyring: true })).status, 403);
  t.is((await two.client.post(`/ceph/nodes/${two.nodeId}/admin-keyring`, { adminKeyring: true })).status, 403);
  t.is((await q.store.get<NodeSpec, NodeStatusFields>('Node', two.nodeId))?.spec.adminKeyring, undefined);
  t.false((await entities(two)).includes('client.admin'));
});

test('keys: an admin node (flag set by an admin) is handed client.admin, and no longer once the flag is cleared', async (t) => {
  const { c, two } = await twoMonitorNodes(t);
  t.deepEqual((await c.post(`/ceph/nodes/${two.nodeId}/admin-keyring`, { adminKeyring: true })).json, { status: 'updated' });
  t.deepEqual(await entities(two), ['client.admin']);
  t.deepEqual(
    (await c.get<NodeKeyrings>(`/ceph/nodes/${two.nodeId}/keyrings`)).json.keyrings.map((k) => k.entity),
    ['client.admin'],
  );
  t.deepEqual((await c.post(`/ceph/nodes/${two.nodeId}/admin-keyring`, { adminKeyring: false })).json, { status: 'updated' });
  t.deepEqual(await entities(two), []);
  t.is((await c.post('/ceph/nodes/00000000-0000-4000-8000-000000000000/admin-keyring', { adminKeyring: true })).status, 404);
  t.is((await c.post(`/ceph/nodes/${two.nodeId}/admin-keyring`, { adminKeyring: 'yes' })).status, 400);
});
