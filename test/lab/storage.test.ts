// Filesystems, gateways and RGW users against the lab, through the HTTP API: what the API
// says agrees with the simulated cluster, gates say why they hold, and an S3 secret key is
// shown once and nowhere else.
import test from 'ava';
import { StorageKind } from '../../src/model/storage-kinds.js';
import type { Client } from '../http/client.js';
import type { ProblemBody } from '../http/bodies.js';
import { cluster, login } from './ceph-cluster.js';
import { startLab, waitFor } from './harness.js';

interface Fs {
  name: string;
  status: {
    phase: string;
    created: boolean;
    mdsActive: boolean;
    pools: Array<{ name: string; pgNum: number }>;
    conditions: Array<{ type: string; status: string; reason: string; message: string }>;
  };
}
interface Gateway {
  id: string;
  hostname: string;
  running: boolean;
  desired: boolean;
  state: string;
  port: number;
}

const fsNamed = async (c: Client, name: string): Promise<Fs | undefined> =>
  ((await c.get('/ceph/fs')).json as Fs[]).find((f) => f.name === name);

test('storage: a filesystem waits for an MDS and says so, then is created with its pools and served', async (t) => {
  const { q, c, ids } = await cluster(t);
  const body = { name: 'cephfs', metadataPool: 'cephfs_metadata', dataPool: 'cephfs_data', dataPG: 64 };
  t.deepEqual((await c.post('/ceph/fs', body)).json, { status: 'scheduled' });
  const waiting = await waitFor('blocked on an MDS', async () => {
    const f = await fsNamed(c, 'cephfs');
    return f?.status.phase === 'blocked' && f.status.conditions.some((x) => x.reason === 'WaitingForMds') ? f : undefined;
  });
  t.regex(waiting.status.conditions.find((x) => x.type === 'Blocked')!.message, /a filesystem needs a metadata server/);
  t.false(
    (await q.tasks.recent(1000)).some((r) => r.spec.taskName === 'ceph.fs.create'),
    'nothing was run',
  );
  t.is(q.lab!.ceph.osdmap.poolByName('cephfs_metadata'), undefined);

  t.deepEqual((await c.post('/ceph/mds', { nodeId: ids[1] })).json, { status: 'scheduled' });
  const ready = await waitFor(
    'filesystem ready',
    async () => {
      const f = await fsNamed(c, 'cephfs');
      return f?.status.phase === 'ready' ? f : undefined;
    },
    30_000,
  );
  t.like(ready, { name: 'cephfs', metadataPool: 'cephfs_metadata', metadataPG: 16, dataPool: 'cephfs_data', dataPG: 64 });
  t.like(ready.status, { created: true, mdsActive: true });
  t.deepEqual(ready.status.pools, [
    { name: 'cephfs_metadata', pgNum: 16 },
    { name: 'cephfs_data', pgNum: 64 },
  ]);
  t.like(
    ready.status.conditions.find((x) => x.type === 'Ready'),
    { status: 'True', reason: 'Active' },
  );
  // The simulated cluster agrees: the pools with the requested PG counts, the filesystem over them.
  const ceph = q.lab!.ceph;
  t.is(ceph.osdmap.poolByName('cephfs_metadata')?.pgNum, 16);
  t.is(ceph.osdmap.poolByName('cephfs_data')?.pgNum, 64);
  const simFs = ceph.fsmap.get('cephfs')!;
  t.is(simFs.metadataPool, ceph.osdmap.poolByName('cephfs_metadata')!.id);
  t.truthy(ceph.fsmap.activeFor(simFs));
  // The run logged each step.
  const run = (await q.tasks.recent(1000)).find((r) => r.spec.taskName === 'ceph.fs.create' && r.status.state === 'completed')!;
  const lines = ((await c.get(`/task/run/${run.id}/logs`)).json as Array<{ message: string }>).map((l) => l.message).join('\n');
  t.regex(lines, /pool cephfs_metadata created with 16 PGs/);
  t.regex(lines, /pool cephfs_data created with 64 PGs/);
  t.regex(lines, /filesystem cephfs created/);
});

test('storage: POST /ceph/fs is idempotent for the same declaration and refuses another', async (t) => {
  const q = await startLab(t, 0);
  const c = await login(q);
  const body = { name: 'fs1', metadataPool: 'fs1_meta', dataPool: 'fs1_data' };
  t.is((await c.post('/ceph/fs', body)).status, 200);
  t.deepEqual(
    (await c.post('/ceph/fs', { ...body, metadataPG: 16, dataPG: 32 })).json,
    { status: 'scheduled' },
    'the defaults make it the same',
  );
  const other = await c.post<ProblemBody>('/ceph/fs', { ...body, dataPG: 128 });
  t.is(other.status, 409);
  t.is(other.json.code, 'FILESYSTEM_EXISTS');
  t.is((await c.post<ProblemBody>('/ceph/fs', { name: 'fs2', metadataPool: 'fs1_data', dataPool: 'fs2_data' })).json.code, 'POOL_IN_USE');
  const bad = await c.post<ProblemBody>('/ceph/fs', { name: 'fs3', metadataPool: 'm3', dataPool: 'd3', metadataPG: 12 });
  t.is(bad.status, 400);
  t.regex(bad.json.detail, /metadataPG must be a power of two from 1 to 4096/);
  t.is((await c.post('/ceph/fs', { name: 'fs3', metadataPool: 'same', dataPool: 'same' })).status, 400);
  t.is((await c.post('/ceph/fs', { name: '.hidden', metadataPool: 'm', dataPool: 'd' })).status, 400);
  const fs = (await c.get('/ceph/fs')).json as Fs[];
  t.deepEqual(
    fs.map((f) => f.name),
    ['fs1'],
  );
  t.is(fs[0]!.status.phase, 'blocked', 'no monitor, no quorum');
});

test('storage: a gateway is deployed and removed through the API, and stops running', async (t) => {
  const { q, c, ids } = await cluster(t);
  const node = ids[2];
  t.deepEqual((await c.post('/gateways/rgw/deploy', { nodeId: node })).json, { status: 'scheduled' });
  t.is((await c.post('/gateways/rgw/deploy', { nodeId: node })).status, 409, 'already desired');
  t.is((await c.post('/gateways/rgw/deploy', { nodeId: '00000000-0000-4000-8000-000000000000' })).status, 404);
  // The API shows what the agent last reported; the cluster may be a heartbeat ahead or behind.
  const [gw] = await waitFor(
    'gateway running in the API and in the cluster',
    async () => {
      const list = (await c.get('/gateways/rgw')).json as Gateway[];
      const one = list.length === 1 && list[0]!.running && list[0]!.state === 'running' ? list : undefined;
      return one && q.lab!.ceph.rgws.get(one[0]!.hostname)?.running ? one : undefined;
    },
    30_000,
  );
  t.like(gw, { id: node, port: 7480, desired: true });
  t.true(q.lab!.ceph.rgws.get(gw!.hostname)?.running);
  t.deepEqual((await c.post(`/gateways/rgw/${node}/remove`, {})).json, { status: 'scheduled' });
  await waitFor('gateway gone', async () => ((await c.get('/gateways/rgw')).json as Gateway[]).length === 0, 30_000);
  t.false(q.lab!.ceph.rgws.get(gw!.hostname)?.running);
  // The agent may report the gateway gone a moment before its stop run is recorded completed.
  await waitFor('the stop run completed', async () =>
    (await q.tasks.recent(1000)).some((r) => r.spec.taskName === 'ceph.rgw.stop' && r.status.state === 'completed'),
  );
  t.is((await c.post(`/gateways/rgw/${node}/remove`, {})).status, 404, 'nothing left to remove');
  // Deployed again, it starts again.
  t.is((await c.post('/gateways/rgw/deploy', { nodeId: node })).status, 200);
  await waitFor('gateway running again', () => q.lab!.ceph.rgws.get(gw!.hostname)?.running === true, 30_000);
});

test('storage: an RGW user waits for a gateway, is created with keys, and its secret is shown once', async (t) => {
  const { q, c, ids } = await cluster(t);
  t.is(
    (await c.post('/users', { username: 'viewer', password: 'viewer-password-1', name: 'Viewer', email: 'viewer@example.com' })).status,
    201,
  );
  const viewer = await login(q, 'viewer', 'viewer-password-1');
  const refused = await viewer.post('/gateways/rgw/users', { userId: 'alice', displayName: 'Alice' });
  t.is(refused.status, 403);
  t.is((await c.post('/gateways/rgw/users', { userId: 'Alice!', displayName: 'Alice' })).status, 400);

  // The creation waits for the loop; the loop waits for a gateway and says so.
  const creating = c.post<{ keys: Array<{ accessKey: string; secretKey: string }> }>('/gateways/rgw/users', {
    userId: 'alice',
    displayName: 'Alice',
    email: 'alice@example.com',
  });
  await waitFor('blocked on a gateway', async () => {
    const [u] = (await c.get('/gateways/rgw/users')).json as Array<{ state: string; message: string }>;
    return u?.state === 'blocked' && /deploy a gateway first/.test(u.message);
  });
  await c.post('/gateways/rgw/deploy', { nodeId: ids[0] });
  const created = await creating;
  t.is(created.status, 201, created.text);
  const [pair] = created.json.keys;
  t.like(created.json, { userId: 'alice', displayName: 'Alice', email: 'alice@example.com' });
  t.truthy(pair?.accessKey);
  t.truthy(pair?.secretKey);
  const inRgw = q.lab!.ceph.accounts.user('alice');
  t.deepEqual(inRgw.keys, [{ accessKey: pair!.accessKey, secretKey: pair!.secretKey }]);

  // Shown once: the same request again is refused, and every read lacks the secret.
  const again = await c.post<ProblemBody>('/gateways/rgw/users', { userId: 'alice', displayName: 'Alice', email: 'alice@example.com' });
  t.is(again.status, 409);
  t.is(again.json.code, 'RGW_USER_EXISTS');
  const secret = pair!.secretKey;
  for (const who of [c, viewer]) {
    const list = await who.get<unknown[]>('/gateways/rgw/users');
    t.like(list.json[0], { userId: 'alice', state: 'ready', keys: [{ accessKey: pair!.accessKey }] });
    t.false(list.text.includes(secret));
  }
  const runs = await c.get('/task/runs/recent?limit=1000');
  t.false(runs.text.includes(secret));
  for (const r of runs.json as Array<{ id: string; taskName: string }>) {
    const [one, logs] = [await c.get(`/task/run/${r.id}`), await c.get(`/task/run/${r.id}/logs`)];
    t.false(one.text.includes(secret) || logs.text.includes(secret), r.taskName);
  }
  t.true((runs.json as Array<{ taskName: string }>).some((r) => r.taskName === 'ceph.rgw.user.create'));
  t.false(JSON.stringify(await q.store.list(StorageKind.RgwUser)).includes(secret), 'the RgwUser document holds no secret');
  t.false(JSON.stringify(await q.store.list('TaskRun')).includes(secret), 'no run args or result hold it');
  t.false(JSON.stringify(q.events).includes(secret), 'no event carried it');
});
