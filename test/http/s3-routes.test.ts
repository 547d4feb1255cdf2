// The /s3 routes without a gateway behind them: where the key pair may come from, that session
// cookies do not count, which gateways qualify, and that a gateway that does not answer hands
// the request to the next. Sessions are recorded stand-ins; the lab test speaks real S3.
import test from 'ava';
import { AuthError, ServiceUnavailableError } from '../../src/errors.js';
import { Kind, type NodeSpec, type NodeStatusFields } from '../../src/model/kinds.js';
import type { S3Credentials, S3Session } from '../../src/model/s3.js';
import type { AreaContext } from '../../src/http/app.js';
import { route } from '../../src/http/route.js';
import { S3Service } from '../../src/services/s3.js';
import { s3Routes } from '../../src/http/routes/s3.js';
import type { Store } from '../../src/store/types.js';
import { startHarness, type Harness } from './harness.js';
import type { OpenApiDoc, ProblemBody } from './bodies.js';

const KEYS: S3Credentials = { accessKey: 'QS3ACCESSKEY', secretKey: 'qs3-secret-key-value' };
const headers = { 'X-S3-Access-Key': KEYS.accessKey, 'X-S3-Secret-Key': KEYS.secretKey };
const query = `accessKey=${KEYS.accessKey}&secretKey=${KEYS.secretKey}`;

interface Call {
  endpoint: string;
  keys: S3Credentials;
  op: string;
  args: unknown[];
}

/** Sessions that record what they were asked; `down` endpoints do not answer. */
function fakeGateways(down: Set<string> = new Set()) {
  const calls: Call[] = [];
  const connect = (endpoint: string, keys: S3Credentials): S3Session => {
    const op =
      <T>(name: string, result: T) =>
      async (...args: unknown[]): Promise<T> => {
        calls.push({ endpoint, keys, op: name, args });
        if (down.has(endpoint))
          throw new ServiceUnavailableError(`the RADOS gateway at ${endpoint} could not ${name}: no answer`, 'CLUSTER_UNAVAILABLE');
        if (keys.secretKey === 'wrong') throw new AuthError('the RADOS gateway refused the S3 key pair (SignatureDoesNotMatch)');
        return result;
      };
    return {
      listBuckets: op('listBuckets', [{ name: 'b1', creationDate: '2026-01-01T00:00:00.000Z' }]),
      createBucket: op('createBucket', undefined),
      listObjects: op('listObjects', { objects: [], isTruncated: false, continuationToken: null }),
      deleteObject: op('deleteObject', undefined),
    };
  };
  return { calls, connect };
}

let n = 0;
async function gatewayNode(
  store: Store,
  hostname: string,
  ip: string,
  status: Partial<NodeStatusFields> = {},
  wanted = true,
): Promise<void> {
  n += 1;
  const spec: NodeSpec = {
    hostname,
    macs: [`52:54:00:00:10:${String(n).padStart(2, '0')}`],
    role: 'worker',
    image: null,
    power: 'on',
    restartGeneration: 0,
    shutdownGeneration: 0,
    daemons: wanted ? { rgw: {} } : {},
  };
  await store.create({
    kind: Kind.Node,
    id: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
    name: hostname,
    spec,
    status: { phase: 'active', ip, daemons: { rgw: true }, ...status },
  });
}

async function harness(down?: Set<string>): Promise<Harness & ReturnType<typeof fakeGateways>> {
  const fake = fakeGateways(down);
  const area = (ctx: AreaContext) => s3Routes(new S3Service({ store: ctx.store, connect: fake.connect }));
  const h = await startHarness({ areas: [area] });
  return Object.assign(h, fake);
}

test('s3 routes take the key pair from headers or the query, and nothing else', async (t) => {
  const h = await harness();
  t.teardown(() => h.close());
  await gatewayNode(h.store, 'gw-a', '192.0.2.11');
  const c = h.client();
  t.deepEqual((await c.get('/s3/buckets', { headers })).json, [{ name: 'b1', creationDate: '2026-01-01T00:00:00.000Z' }]);
  const listed = await c.get(`/s3/buckets/b1/objects?prefix=logs/&maxKeys=5&${query}`);
  t.is(listed.status, 200, 'the key pair is not an unknown query parameter');
  t.deepEqual(
    h.calls.map((x) => [x.endpoint, x.keys, x.op, x.args]),
    [
      ['http://192.0.2.11:7480', KEYS, 'listBuckets', []],
      ['http://192.0.2.11:7480', KEYS, 'listObjects', ['b1', { maxKeys: 5, prefix: 'logs/' }]],
    ],
  );
  t.is((await c.get('/s3/buckets/b1/objects', { headers })).status, 200);
  t.deepEqual(h.calls.at(-1)?.args, ['b1', { maxKeys: 200 }], 'maxKeys defaults to 200');
  t.is((await c.get(`/s3/buckets/b1/objects?other=1&${query}`)).status, 400, 'other parameters are still refused');

  const admin = await h.admin();
  const before = h.calls.length;
  for (const [what, r] of [
    ['no keys', await c.post<ProblemBody>('/s3/buckets', {})],
    ['an access key only', await c.get<ProblemBody>('/s3/buckets', { headers: { 'X-S3-Access-Key': KEYS.accessKey } })],
    ['a secret key only', await c.get<ProblemBody>(`/s3/buckets?secretKey=${KEYS.secretKey}`)],
    ['session cookies', await admin.get<ProblemBody>('/s3/buckets')],
  ] as const) {
    t.is(r.status, 401, what);
    t.is(r.json.code, 'UNAUTHENTICATED', what);
    t.regex(r.json.detail, /X-S3-Access-Key/, what);
  }
  t.is(h.calls.length, before, 'no gateway was asked');
  const refused = await c.get('/s3/buckets', { headers: { ...headers, 'X-S3-Secret-Key': 'wrong' } });
  t.is(refused.status, 401);
  t.true(
    h.logged.every((l) => !JSON.stringify(l).includes(KEYS.secretKey)),
    'no log line holds the secret',
  );
});

test('s3 routes use running gateways only, and the next one when one does not answer', async (t) => {
  const h = await harness(new Set(['http://192.0.2.21:7480']));
  t.teardown(() => h.close());
  const c = h.client();
  const none = await c.get<ProblemBody>('/s3/buckets', { headers });
  t.is(none.status, 503);
  t.is(none.json.code, 'CLUSTER_UNAVAILABLE');
  await gatewayNode(h.store, 'gw-stopped', '192.0.2.20', { daemons: { rgw: false } });
  await gatewayNode(h.store, 'gw-offline', '192.0.2.22', { phase: 'offline' });
  await gatewayNode(h.store, 'gw-removed', '192.0.2.23', {}, false);
  t.is((await c.get('/s3/buckets', { headers })).status, 503, 'stopped, offline and removed gateways do not count');

  await gatewayNode(h.store, 'gw-down', '192.0.2.21');
  await gatewayNode(h.store, 'gw-up', '192.0.2.24');
  for (let i = 0; i < 4; i++) t.is((await c.post('/s3/buckets', { name: `bucket-${i}` }, { headers })).status, 200);
  const served = h.calls.filter((x) => x.endpoint.includes('.24')).map((x) => x.args[0]);
  t.deepEqual(served, ['bucket-0', 'bucket-1', 'bucket-2', 'bucket-3'], 'every request was served, by the gateway that answers');
  t.true(
    h.calls.some((x) => x.endpoint.includes('.21')),
    'the other was tried too',
  );
  t.false(h.calls.some((x) => /\.2[023]:/.test(x.endpoint)));

  h.calls.length = 0;
  const refused = await c.get('/s3/buckets', { headers: { ...headers, 'X-S3-Secret-Key': 'wrong' } });
  t.is(refused.status, 401);
  t.true(h.calls.length <= 2 && h.calls.filter((x) => x.endpoint.includes('.24')).length === 1, 'a refusal is not asked again elsewhere');
});

test('s3 routes are documented with the key pair as their security, and refuse a second way in', async (t) => {
  const h = await harness();
  t.teardown(() => h.close());
  const doc = (await (await h.admin()).get<OpenApiDoc>('/openapi.json')).json;
  const op = doc.paths['/s3/buckets/{bucket}/objects']!.get!;
  t.deepEqual(op.security, [
    { s3AccessKey: [], s3SecretKey: [] },
    { s3AccessKeyQuery: [], s3SecretKeyQuery: [] },
  ]);
  t.truthy(op.responses['503']);
  t.like(doc.components.securitySchemes.s3AccessKey, { type: 'apiKey', in: 'header', name: 'X-S3-Access-Key' });
  t.like(doc.components.securitySchemes.s3SecretKeyQuery, { type: 'apiKey', in: 'query', name: 'secretKey' });
  t.deepEqual(
    op.parameters?.map((p) => p.name),
    ['bucket', 'prefix', 'continuationToken', 'maxKeys'],
  );
  const both = route({
    method: 'GET',
    path: '/s3/x',
    summary: 'x',
    s3: true,
    admin: true,
    response: { description: 'x' },
    handler: () => [],
  });
  await t.throwsAsync(() => startHarness({ areas: [[both]] }), { message: /exclude each other/ });
});
