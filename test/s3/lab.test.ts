// The /s3 endpoints against the lab: a cluster brought up through the API, a gateway deployed,
// RGW users created, then the shared S3 steps with their keys, through Quarry and directly at
// the simulated gateway with the AWS SDK.
import test from 'ava';
import type { S3Credentials } from '../../src/model/s3.js';
import { cluster } from '../lab/ceph-cluster.js';
import { waitFor } from '../lab/harness.js';
import type { Client } from '../http/client.js';
import { runS3Steps } from './steps.js';
import type { ProblemBody } from '../http/bodies.js';

interface Gateway {
  hostname: string;
  running: boolean;
}

async function rgwUser(c: Client, userId: string): Promise<S3Credentials> {
  const r = await c.post<{ keys: S3Credentials[] }>('/gateways/rgw/users', { userId, displayName: userId });
  if (r.status !== 201) throw new Error(`creating RGW user ${userId}: ${r.status} ${r.text}`);
  const [pair] = r.json.keys;
  return pair!;
}

const running = async (c: Client): Promise<Gateway | undefined> =>
  ((await c.get('/gateways/rgw')).json as Gateway[]).find((g) => g.running);

test('s3: buckets and objects through Quarry and directly at the gateway, with keys in headers and in the query', async (t) => {
  const { q, c, ids } = await cluster(t);
  const before = await c.get<ProblemBody>('/s3/buckets', { headers: { 'X-S3-Access-Key': 'AK', 'X-S3-Secret-Key': 'SK' } });
  t.is(before.status, 503, 'no gateway runs yet');
  t.is(before.json.code, 'CLUSTER_UNAVAILABLE');
  t.regex(before.json.detail, /no RADOS gateway is running/);

  t.is((await c.post('/gateways/rgw/deploy', { nodeId: ids[0] })).status, 200);
  const gw = await waitFor('gateway running', () => running(c), 30_000);
  const keys = await rgwUser(c, 'alice');
  const otherKeys = await rgwUser(c, 'bob');
  const bucket = await runS3Steps(t, { base: q.url, keys, otherKeys, gatewayUrl: await q.s3.lab!.url(gw.hostname) });

  // What the simulated gateway holds is what the steps left.
  const held = q.s3.lab!.buckets.bucket('alice', bucket);
  t.deepEqual([...held.objects.keys()].sort(), ['data/x.bin', 'logs/2026-01.txt', 'logs/2026-03.txt']);
  const bobs = await c.get('/s3/buckets', { headers: { 'X-S3-Access-Key': otherKeys.accessKey, 'X-S3-Secret-Key': otherKeys.secretKey } });
  t.deepEqual(bobs.json, [], "another user sees none of alice's buckets");

  // A gateway taken away serves no more: 503, and the data is still there when one is back.
  await c.post(`/gateways/rgw/${ids[0]}/remove`, {});
  await waitFor('gateway gone', async () => ((await c.get('/gateways/rgw')).json as Gateway[]).length === 0, 30_000);
  const inHeaders = { headers: { 'X-S3-Access-Key': keys.accessKey, 'X-S3-Secret-Key': keys.secretKey } };
  t.is((await c.get('/s3/buckets', inHeaders)).status, 503);
  t.is((await c.post('/gateways/rgw/deploy', { nodeId: ids[1] })).status, 200);
  await waitFor('another gateway running', () => running(c), 30_000);
  const page = await c.get<{ objects: Array<{ key: string }> }>(`/s3/buckets/${bucket}/objects`, inHeaders);
  t.deepEqual(
    page.json.objects.map((o) => o.key),
    ['data/x.bin', 'logs/2026-01.txt', 'logs/2026-03.txt'],
  );
});
