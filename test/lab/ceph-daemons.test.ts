// The Ceph daemon loops against the lab, through the HTTP API only: monitors form a quorum,
// a manager, an MDS and a gateway run, and what the API says agrees with the simulated cluster.
import test from 'ava';
import { createHash } from 'node:crypto';
import { Client } from '../http/client.js';
import type { ClusterMetrics, InvokeResults, NodeCephState } from '../http/bodies.js';
import { ADMIN_PASSWORD, allActive, startLab, waitFor, type LabQuarry } from './harness.js';

interface Detail {
  id: string;
  hostname: string;
  ip: string;
  hasMon: boolean;
  monExists: boolean;
  mgrExists: boolean;
  mdsExists: boolean;
  rgwExists: boolean;
}

async function admin(q: LabQuarry): Promise<Client> {
  const c = new Client(q.url);
  const r = await c.post('/user/login', { username: 'admin', password: ADMIN_PASSWORD });
  if (r.status !== 200) throw new Error(`login ${r.status}`);
  return c;
}

/** Declares the monitors together, as one operator action: sent one after another, a loaded
 * machine took longer than the mon loop's gathering of the first monitors. */
async function declareMons(c: Client, nodeIds: string[]): Promise<void> {
  const disks = (await c.get('/disks')).json as Array<{ id: string; nodeId: string; eligible: boolean }>;
  await Promise.all(
    nodeIds.map(async (nodeId) => {
      const disk = disks.find((d) => d.nodeId === nodeId && d.eligible)!;
      const r = await c.post('/ceph/mon/create', { nodeId, diskId: disk.id });
      if (r.status !== 200) throw new Error(`mon on ${nodeId}: ${r.status} ${r.text}`);
    }),
  );
}

const details = async (c: Client): Promise<Detail[]> => (await c.get<Detail[]>('/nodes/details')).json;

test('ceph loops: three monitors reach quorum, then a manager, an MDS and a gateway run', async (t) => {
  const q = await startLab(t, 3);
  const nodes = await allActive(q, 3);
  const c = await admin(q);
  const ids = nodes.map((n) => n.id);
  await declareMons(c, ids);
  const three = await waitFor(
    'three monitors running',
    async () => {
      const d = await details(c);
      return d.filter((x) => x.monExists).length === 3 ? d : undefined;
    },
    30_000,
  );
  t.true(three.every((d) => d.hasMon));
  await waitFor('quorum of three', async () => (await c.get<ClusterMetrics | undefined>('/ceph/metrics')).json?.monCount === 3, 30_000);
  const quorum = q.lab!.ceph.hasQuorum();
  t.true(quorum);
  const [a, b, cc] = ids as [string, string, string];
  t.deepEqual((await c.post('/ceph/mgr', { nodeId: a })).json, { status: 'scheduled' });
  t.deepEqual((await c.post('/ceph/mds', { nodeId: b })).json, { status: 'scheduled' });
  t.deepEqual((await c.post<InvokeResults>('/invoke/node', { operation: 'ceph.create-rgw', nodeIds: [cc] })).json.results, [
    { id: cc, status: 'scheduled' },
  ]);
  const d = await waitFor(
    'manager, MDS and gateway running',
    async () => {
      const all = await details(c);
      const [x, y, z] = [a, b, cc].map((id) => all.find((n) => n.id === id)!) as [Detail, Detail, Detail];
      return x.mgrExists && y.mdsExists && z.rgwExists ? all : undefined;
    },
    30_000,
  );
  t.is(d.filter((n) => n.mgrExists).length, 1);
  // Node Ceph state, metrics and the config agree with each other and with the cluster.
  const state = (await c.get<NodeCephState>(`/ceph/nodes/${a}/state`)).json;
  t.like(state, { mon: true, mgr: true, mds: false, rgw: false });
  const metrics = await waitFor('metrics with a manager', async () => {
    const m = (await c.get<ClusterMetrics | undefined>('/ceph/metrics')).json;
    return m?.monCount === 3 ? m : undefined;
  });
  t.is(metrics.osdCount, 0);
  const conf = Buffer.from((await c.get<{ config: string }>('/ceph/cluster/config')).json.config, 'base64').toString();
  for (const n of d) t.true(conf.includes(`[v2:${n.ip}:3300,v1:${n.ip}:6789]`), n.hostname);
  t.is((await c.get<{ hash: string }>('/ceph/cluster/config/hash')).json.hash, createHash('sha256').update(conf).digest('hex'));
  const monmap = await c.get('/ceph/monmap');
  t.is(monmap.status, 200);
  t.is(monmap.headers.get('content-type'), 'application/octet-stream');
  // Keys: the manager's node holds its own key and, running a monitor, mon.; client.admin stays
  // on the master (issue #12: least privilege for keys).
  const keys = (await c.get<{ keyrings: Array<{ entity: string }> }>(`/ceph/nodes/${a}/keyrings`)).json.keyrings.map((k) => k.entity);
  t.deepEqual(keys, ['mgr.' + d.find((n) => n.id === a)!.hostname, 'mon.']);
});

test('ceph loops: monitors declared together make one first monmap, the opener starting first; a killed one is started again', async (t) => {
  const q = await startLab(t, 3);
  const nodes = await allActive(q, 3);
  const c = await admin(q);
  await declareMons(
    c,
    nodes.map((n) => n.id),
  );
  await waitFor(
    'quorum of three',
    async () =>
      (await c.get<ClusterMetrics | undefined>('/ceph/metrics')).json?.monCount === 3 && (await details(c)).every((x) => x.monExists),
    30_000,
  );
  const runs = await q.tasks.recent(1000);
  const bootstraps = runs
    .filter((r) => r.spec.taskName === 'ceph.mon.bootstrap')
    .sort((x, y) => x.metadata.createdAt.localeCompare(y.metadata.createdAt));
  t.is(bootstraps.length, 3, 'each declared monitor made its store from the first monmap');
  t.false(
    runs.some((r) => r.spec.taskName === 'ceph.mon.join'),
    'nobody joined',
  );
  const names = (r: (typeof runs)[number]) => (r.spec.args.initialMembers as Array<{ name: string }>).map((m) => m.name);
  const hostnames = nodes.map((n) => n.spec.hostname).sort();
  for (const r of bootstraps) t.deepEqual(names(r), hostnames);
  const [opener, ...followers] = bootstraps;
  t.is(opener!.spec.nodeHostname, hostnames[0] ?? null);
  for (const f of followers) t.true(f.metadata.createdAt >= opener!.status.completedAt!, 'the others start once the first runs');
  t.is(q.lab!.ceph.mons.epoch, 1);
  const victim = (await details(c))[1]!;
  q.lab!.ceph.killMon(victim.hostname);
  t.true(q.lab!.ceph.hasQuorum(), 'two of three keep quorum');
  await waitFor(
    'the killed monitor runs again',
    async () => {
      const restarts = (await q.tasks.recent(1000)).filter(
        (r) => r.spec.taskName === 'ceph.daemon.restart' && r.spec.nodeId === victim.id && r.status.state === 'completed',
      );
      return restarts.length >= 1 && (await details(c)).find((x) => x.id === victim.id)!.monExists;
    },
    30_000,
  );
  t.is(q.lab!.ceph.mons.mons.filter((m) => m.running).length, 3);
});

test('ceph loops: a monitor declared after the cluster formed joins it; the others wait for the first', async (t) => {
  const q = await startLab(t, 3);
  const nodes = await allActive(q, 3);
  const c = await admin(q);
  const [first, ...later] = nodes.sort((x, y) => x.spec.hostname.localeCompare(y.spec.hostname));
  await declareMons(c, [first!.id]);
  await waitFor('the first monitor runs', async () => (await details(c)).find((x) => x.id === first!.id)?.monExists, 30_000);
  await declareMons(
    c,
    later.map((n) => n.id),
  );
  await waitFor(
    'quorum of three',
    async () =>
      (await c.get<ClusterMetrics | undefined>('/ceph/metrics')).json?.monCount === 3 && (await details(c)).every((x) => x.monExists),
    30_000,
  );
  const runs = await q.tasks.recent(1000);
  t.deepEqual(
    runs.filter((r) => r.spec.taskName === 'ceph.mon.bootstrap').map((r) => r.spec.nodeId),
    [first!.id],
  );
  t.deepEqual(
    runs
      .filter((r) => r.spec.taskName === 'ceph.mon.join')
      .map((r) => r.spec.nodeId)
      .sort(),
    later.map((n) => n.id).sort(),
  );
  t.is(q.lab!.ceph.mons.epoch, 3, 'one monmap epoch per join');
});

test('ceph loops: a manager waits for monitor quorum and says so', async (t) => {
  const q = await startLab(t, 1);
  const [n] = await allActive(q, 1);
  const c = await admin(q);
  await c.post('/ceph/mgr', { nodeId: n!.id });
  const st = await waitFor('blocked on quorum', async () => (await q.nodeOf(1)).status.ceph?.mgr);
  t.like(st, { phase: 'blocked', reason: 'WaitingForQuorum' });
  t.false(
    (await q.tasks.recent(100)).some((r) => r.spec.taskName.startsWith('ceph.mgr')),
    'nothing was run',
  );
});
