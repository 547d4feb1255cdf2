// The S3 checks of issue 7 item 4, against any Quarry and any gateway: the lab test runs them
// against the simulated RADOS gateway, the real-Ceph system test against a real radosgw. Quarry's
// /s3 endpoints are called with the RGW user's keys in headers and in query parameters; the same
// data is written and read with the AWS SDK speaking to the gateway directly.
import type { ExecutionContext } from 'ava';
import { createHash, randomBytes } from 'node:crypto';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { s3ClientConfig } from '../../src/clients/s3.js';
import type { S3Credentials } from '../../src/model/s3.js';
import { Client, type Reply } from '../http/client.js';
import type { ProblemBody } from '../http/bodies.js';

export interface S3Target {
  /** Quarry's base URL. */
  base: string;
  /** An RGW user's key pair, as POST /gateways/rgw/users handed it out. */
  keys: S3Credentials;
  /** The gateway's own S3 endpoint, for the SDK's direct client. */
  gatewayUrl: string;
  /** Another RGW user's keys, to check that a bucket name it holds is refused (409). */
  otherKeys?: S3Credentials;
}

/** The SDK client Quarry itself would build, speaking to the gateway with these keys. */
export const directClient = (endpoint: string, keys: S3Credentials): S3Client => new S3Client(s3ClientConfig(endpoint, keys));

const inHeaders = (k: S3Credentials) => ({ headers: { 'X-S3-Access-Key': k.accessKey, 'X-S3-Secret-Key': k.secretKey } });
const inQuery = (path: string, k: S3Credentials) =>
  `${path}${path.includes('?') ? '&' : '?'}accessKey=${encodeURIComponent(k.accessKey)}&secretKey=${encodeURIComponent(k.secretKey)}`;

const OBJECTS: Record<string, string> = {
  'data/x.bin': 'x'.repeat(300),
  'data/y.bin': 'yy',
  'logs/2026-01.txt': 'january\n',
  'logs/2026-02.txt': 'february\n',
  'logs/2026-03.txt': 'march\n',
  'top level.txt': 'a key with a space',
};
const md5 = (s: string) => createHash('md5').update(s).digest('hex');

interface Page {
  objects: Array<{ key: string; size: number; lastModified: string; etag: string }>;
  isTruncated: boolean;
  continuationToken: string | null;
}

function problemIs(t: ExecutionContext, r: Reply, status: number, code: string, what: string): void {
  t.is(r.status, status, `${what}: ${r.text}`);
  t.is((r.json as Partial<ProblemBody> | undefined)?.code, code, what);
}

/** Runs every step; returns the bucket it made (left in place, holding what is left of the objects). */
export async function runS3Steps(t: ExecutionContext, target: S3Target): Promise<string> {
  const c = new Client(target.base);
  const { keys } = target;
  const direct = directClient(target.gatewayUrl, keys);
  t.teardown(() => direct.destroy());
  const bucket = `qs3-${randomBytes(4).toString('hex')}`;

  // Refusals: no keys, a wrong secret, an unknown access key. The secret never comes back.
  problemIs(t, await c.get('/s3/buckets'), 401, 'UNAUTHENTICATED', 'no keys');
  problemIs(t, await c.get('/s3/buckets', { headers: { 'X-S3-Access-Key': keys.accessKey } }), 401, 'UNAUTHENTICATED', 'no secret key');
  const wrongSecret = { ...keys, secretKey: `${keys.secretKey.slice(0, -4)}WRNG` };
  const wrong = await c.get('/s3/buckets', inHeaders(wrongSecret));
  problemIs(t, wrong, 401, 'UNAUTHENTICATED', 'wrong secret key');
  t.false(wrong.text.includes(wrongSecret.secretKey));
  problemIs(
    t,
    await c.get(inQuery('/s3/buckets', { accessKey: 'QS3NOSUCHACCESSKEY00', secretKey: keys.secretKey })),
    401,
    'UNAUTHENTICATED',
    'unknown access key',
  );
  problemIs(t, await c.post('/s3/buckets', { name: bucket }, inHeaders(wrongSecret)), 401, 'UNAUTHENTICATED', 'wrong keys create nothing');

  // A bucket, created with the keys in headers, listed with them in the query.
  problemIs(t, await c.post('/s3/buckets', { name: 'Not_A_Bucket' }, inHeaders(keys)), 400, 'VALIDATION_FAILED', 'invalid bucket name');
  const created = await c.post('/s3/buckets', { name: bucket }, inHeaders(keys));
  t.is(created.status, 200, created.text);
  t.deepEqual(created.json, { status: 'created' });
  t.deepEqual(
    (await c.post('/s3/buckets', { name: bucket }, inHeaders(keys))).json,
    { status: 'created' },
    'a bucket one owns is created again without harm',
  );
  const listed = await c.get(inQuery('/s3/buckets', keys));
  t.is(listed.status, 200, listed.text);
  const mine = (listed.json as Array<{ name: string; creationDate: string }>).find((b) => b.name === bucket);
  t.truthy(mine, 'the new bucket is listed');
  t.false(Number.isNaN(Date.parse(mine?.creationDate ?? '')), 'with its creation date');
  t.true(
    ((await direct.send(new ListBucketsCommand({}))).Buckets ?? []).some((b) => b.Name === bucket),
    'the SDK sees it at the gateway',
  );
  if (target.otherKeys)
    problemIs(
      t,
      await c.post('/s3/buckets', { name: bucket }, inHeaders(target.otherKeys)),
      409,
      'BUCKET_EXISTS',
      "another user's bucket name",
    );

  // Objects written directly at the gateway, listed through Quarry page by page.
  for (const [Key, Body] of Object.entries(OBJECTS)) await direct.send(new PutObjectCommand({ Bucket: bucket, Key, Body }));
  const pages: Page[] = [];
  let token: string | null = null;
  do {
    const path: string = `/s3/buckets/${bucket}/objects?maxKeys=2${token ? `&continuationToken=${encodeURIComponent(token)}` : ''}`;
    // Alternate where the keys go, so that paging works with both.
    const r = pages.length % 2 ? await c.get(inQuery(path, keys)) : await c.get(path, inHeaders(keys));
    t.is(r.status, 200, r.text);
    pages.push(r.json as Page);
    token = (r.json as Page).continuationToken;
  } while (token !== null && pages.length < 10);
  const all = Object.keys(OBJECTS).sort();
  t.deepEqual(
    pages.map((p) => p.objects.map((o) => o.key)),
    [all.slice(0, 2), all.slice(2, 4), all.slice(4, 6)],
  );
  t.deepEqual(
    pages.map((p) => p.isTruncated),
    [true, true, false],
  );
  for (const o of pages.flatMap((p) => p.objects)) {
    t.like(o, { size: Buffer.byteLength(OBJECTS[o.key] ?? ''), etag: md5(OBJECTS[o.key] ?? '') }, o.key);
    t.false(Number.isNaN(Date.parse(o.lastModified)), o.key);
  }
  const logs = await c.get(`/s3/buckets/${bucket}/objects?prefix=logs/`, inHeaders(keys));
  t.deepEqual(
    (logs.json as Page).objects.map((o) => o.key),
    ['logs/2026-01.txt', 'logs/2026-02.txt', 'logs/2026-03.txt'],
  );
  t.like(logs.json, { isTruncated: false, continuationToken: null });
  problemIs(t, await c.get(`/s3/buckets/${bucket}/objects?maxKeys=0`, inHeaders(keys)), 400, 'VALIDATION_FAILED', 'maxKeys below 1');
  problemIs(t, await c.get(`/s3/buckets/${bucket}/objects?maxKeys=1001`, inHeaders(keys)), 400, 'VALIDATION_FAILED', 'maxKeys above 1000');

  // Deleted through Quarry, gone at the gateway; the other objects are intact.
  const deleted = await c.post(inQuery(`/s3/buckets/${bucket}/objects/delete`, keys), { key: 'logs/2026-02.txt' });
  t.is(deleted.status, 200, deleted.text);
  t.deepEqual(deleted.json, { status: 'deleted' });
  t.deepEqual((await c.post(`/s3/buckets/${bucket}/objects/delete`, { key: 'top level.txt' }, inHeaders(keys))).json, {
    status: 'deleted',
  });
  const left = await direct.send(new ListObjectsV2Command({ Bucket: bucket }));
  t.deepEqual(
    (left.Contents ?? []).map((o) => o.Key),
    ['data/x.bin', 'data/y.bin', 'logs/2026-01.txt', 'logs/2026-03.txt'],
  );
  const gone = await direct.send(new GetObjectCommand({ Bucket: bucket, Key: 'logs/2026-02.txt' })).catch((e: unknown) => e);
  t.is((gone as Error).name, 'NoSuchKey');
  const kept = await direct.send(new GetObjectCommand({ Bucket: bucket, Key: 'logs/2026-03.txt' }));
  t.is(await kept.Body?.transformToString(), OBJECTS['logs/2026-03.txt']);

  // An unknown bucket is 404, for a listing and a deletion.
  const nope = `${bucket}-nope`;
  problemIs(t, await c.get(`/s3/buckets/${nope}/objects`, inHeaders(keys)), 404, 'NOT_FOUND', 'listing an unknown bucket');
  problemIs(
    t,
    await c.post(`/s3/buckets/${nope}/objects/delete`, { key: 'x' }, inHeaders(keys)),
    404,
    'NOT_FOUND',
    'deleting from an unknown bucket',
  );
  await direct.send(new DeleteObjectCommand({ Bucket: bucket, Key: 'data/y.bin' }));
  return bucket;
}
