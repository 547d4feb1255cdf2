// The /ceph read endpoints: config and hash agree byte for byte, the config follows the
// monitors, keyrings are secrets (admins and the node's own agent only), and nothing is served
// before the cluster loop has observed it.
import test from 'ava';
import { createHash } from 'node:crypto';
import { CLUSTER_ID, CephKind, type ClusterSpec } from '../../src/model/ceph-kinds.js';
import { nameUuid } from '../../src/model/ids.js';
import { allActive, startLab, waitFor } from '../lab/harness.js';
import { admin, hardware, login, readyAgent } from './agent-helpers.js';
import type { Client } from './client.js';
import type { NodeKeyrings, ProblemBody } from './bodies.js';

const config = async (c: Client): Promise<string> =>
  Buffer.from((await c.get<{ config: string }>('/ceph/cluster/config')).json.config, 'base64').toString('utf8');

test('ceph routes: the config hash is the SHA-256 of exactly the config bytes, and both follow the monitors', async (t) => {
  const q = await startLab(t, 2);
  await allActive(q, 2);
  const c = await admin(q);
  const fsid = (await q.store.mustGet<ClusterSpec>(CephKind.Cluster, CLUSTER_ID)).spec.fsid;
  const before = await config(c);
  t.regex(before, new RegExp(`^fsid = ${fsid}$`, 'm'));
  t.regex(before, /^mon_host = $/m, 'no monitor declared yet');
  t.is((await c.get<{ hash: string }>('/ceph/cluster/config/hash')).json.hash, createHash('sha256').update(before).digest('hex'));
  const m = q.lab!.machine(2);
  const disks = (await c.get('/disks')).json as Array<{ id: string; nodeId: string; eligible: boolean }>;
  const disk = disks.find((d) => d.nodeId === m.nodeId && d.eligible)!;
  t.is((await c.post('/ceph/mon/create', { nodeId: m.nodeId, diskId: disk.id })).status, 200);
  const after = await config(c);
  t.regex(
    after,
    new RegExp(`^mon_host = \\[v2:${m.spec.ip.replace(/\./g, '\\.')}:3300,v1:${m.spec.ip.replace(/\./g, '\\.')}:6789\\]$`, 'm'),
  );
  const hash = (await c.get<{ hash: string }>('/ceph/cluster/config/hash')).json.hash;
  t.is(hash, createHash('sha256').update(after).digest('hex'));
  t.not(hash, createHash('sha256').update(before).digest('hex'));
});

test('ceph routes: metrics and the monmap answer 503 until the cluster loop has observed a cluster', async (t) => {
  const q = await startLab(t, 0);
  const c = await admin(q);
  for (const path of ['/ceph/metrics', '/ceph/monmap']) {
    const r = await c.get<ProblemBody>(path);
    t.is(r.status, 503, path);
    t.is(r.json.code, 'CLUSTER_UNAVAILABLE', path);
  }
});

test('ceph routes: node Ceph state counts a daemon only when it is both desired and running', async (t) => {
  const q = await startLab(t, 0);
  const a = await readyAgent(q, 1);
  const report = hardware(1);
  report.daemons = { mon: true, mgr: true, mds: false, rgw: false, osds: [] };
  await a.client.post('/node/hardware', report);
  const c = await admin(q);
  await waitFor(
    'node active',
    async () => ((await q.store.get('Node', a.nodeId)) as { status: { phase?: string } } | undefined)?.status.phase === 'active',
  );
  await c.post('/invoke/node', { operation: 'ceph.create-mgr', nodeIds: [a.nodeId] });
  const state = (await c.get(`/ceph/nodes/${a.nodeId}/state`)).json;
  t.deepEqual(state, { nodeId: a.nodeId, mon: false, mgr: true, mds: false, rgw: false, nfs: false, osdIds: [] });
  t.is((await c.get('/ceph/nodes/00000000-0000-4000-8000-000000000000/state')).status, 404);
});

test('ceph routes: keyrings go to admins and to the node own agent, never to others', async (t) => {
  const q = await startLab(t, 0);
  const one = await readyAgent(q, 1);
  const two = await readyAgent(q, 2);
  const key = 'AQBnbmRmAAAAABAAu2e5ZIbTj4b0dJq2m7xT9w==';
  await q.store.create({
    kind: CephKind.Keyring,
    id: nameUuid('keyring', 'mgr.one'),
    name: 'mgr.one',
    spec: { entity: 'mgr.one', nodeId: one.nodeId, caps: { mon: 'allow profile mgr' } },
    status: { key },
  });
  const c = await admin(q);
  const mine = await one.client.get<NodeKeyrings>(`/ceph/nodes/${one.nodeId}/keyrings`);
  t.is(mine.status, 200);
  t.deepEqual(mine.json.keyrings, [{ entity: 'mgr.one', keyring: `[mgr.one]\n\tkey = ${key}\n\tcaps mon = "allow profile mgr"\n` }]);
  t.deepEqual((await c.get(`/ceph/nodes/${one.nodeId}/keyrings`)).json, mine.json);
  const theirs = await two.client.get(`/ceph/nodes/${one.nodeId}/keyrings`);
  t.is(theirs.status, 403);
  t.false(theirs.text.includes(key));
  await c.post('/users', { username: 'viewer', password: 'viewer-password', name: 'V', email: 'v@example.com' });
  const viewer = await login(q, 'viewer', 'viewer-password');
  const refused = await viewer.get(`/ceph/nodes/${one.nodeId}/keyrings`);
  t.is(refused.status, 403);
  t.false(refused.text.includes(key));
});
