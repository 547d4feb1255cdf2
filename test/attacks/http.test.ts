// Attacks on the HTTP layer (issue #12, findings 10, 11 and the S3 part of 9), replayed over
// real HTTP: request validation that overflowed its stack or answered 29 times the request's
// size, limits the schema refused under another code, a contract that did not say what it
// answers, and S3 bucket names that reached the gateway (or became another request there).
import test, { type ExecutionContext } from 'ava';
import { request } from 'node:http';
import { createServer, type Server } from 'node:net';
import { connectS3 } from '../../src/clients/s3.js';
import { Kind, type NodeSpec } from '../../src/model/kinds.js';
import type { AreaContext } from '../../src/http/app.js';
import { S3Service } from '../../src/services/s3.js';
import { s3Routes } from '../../src/http/routes/s3.js';
import { NodeOperation } from '../../src/model/operations.js';
import type { Client, Reply } from '../http/client.js';
import type { OpenApiDoc, ProblemBody } from '../http/bodies.js';
import { startHarness } from '../http/harness.js';
import { login } from '../lab/ceph-cluster.js';
import { allActive, startLab, type LabQuarry } from '../lab/harness.js';

const S3_KEYS = { 'X-S3-Access-Key': 'AKFUZZ', 'X-S3-Secret-Key': 'secret-of-the-attacker' };
const ID = '00000000-0000-4000-8000-000000000001';
/** A problem answer stays this small whatever the request. */
const SMALL = 8 * 1024;

interface Lab {
  q: LabQuarry;
  admin: Client;
  user: Client;
}

// One small lab for the file, stopped after the last test: the attacks need its routes, not
// its machines. Its teardowns are the file's, not the first test's.
let shared: Promise<Lab> | undefined;
const cleanups: Array<() => unknown> = [];
function lab(_t: ExecutionContext): Promise<Lab> {
  shared ??= (async () => {
    const q = await startLab({ teardown: (fn: () => unknown) => cleanups.push(fn) } as unknown as ExecutionContext, 1);
    await allActive(q, 1);
    const admin = await login(q);
    const r = await admin.post('/users', { username: 'mallory', password: 'mallory-password', name: 'Mallory', email: 'm@example.com' });
    if (r.status !== 201) throw new Error(`user: ${r.status}`);
    return { q, admin, user: await login(q, 'mallory', 'mallory-password') };
  })();
  return shared;
}
test.after.always(async () => {
  for (const fn of cleanups.reverse()) await fn();
});

/** A request sent exactly as written: no normalization of dot segments or encodings. Every
 * caller expects a refusal, so a JSON body is read as problem+json. */
function raw(
  base: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; type: string; json: ProblemBody; text: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${base}${path.startsWith('/') ? '' : '/'}`,
      { method, path, headers: { ...headers, ...(body ? { 'content-type': 'application/json' } : {}) } },
      (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        res.on('end', () => {
          const type = (res.headers['content-type'] ?? '').split(';')[0] ?? '';
          resolve({
            status: res.statusCode ?? 0,
            type,
            text,
            json: (/json/.test(type) && text ? JSON.parse(text) : undefined) as ProblemBody,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function smallProblem(t: ExecutionContext, r: Reply<ProblemBody>, status: number, code: string): void {
  t.is(r.status, status, r.text.slice(0, 300));
  t.is(r.headers.get('content-type')?.split(';')[0], 'application/problem+json');
  t.is(r.json.code, code);
  t.true(r.text.length < SMALL, `${r.text.length} bytes`);
}

test('attack 150,000 invalid node ids to overflow request validation is refused with a small 400 TOO_MANY_TARGETS', async (t) => {
  const { admin } = await lab(t);
  const r = await admin.post<ProblemBody>('/invoke/node', { operation: NodeOperation.restart, nodeIds: new Array(150_000).fill(0) });
  smallProblem(t, r, 400, 'TOO_MANY_TARGETS');
  t.deepEqual(r.json.errors, [{ path: '/body/nodeIds', message: 'must NOT have more than 100 items (got 150000)' }]);
  const disks = await admin.post<ProblemBody>('/invoke/disk', { operation: 'disk.wipe', diskIds: new Array(150_000).fill('') });
  smallProblem(t, disks, 400, 'TOO_MANY_TARGETS');
  t.is((await admin.get('/user/me')).status, 200, 'the server is fine');
});

test("attack a non-admin's 120,000 invalid template context kinds is refused with a small 400", async (t) => {
  const { user } = await lab(t);
  const r = await user.post<ProblemBody>('/templates/context', { nodeId: ID, kinds: new Array(120_000).fill(0) });
  smallProblem(t, r, 400, 'VALIDATION_FAILED');
  t.is(r.json.errors.length, 1);
  t.is(r.json.errors[0]?.path, '/body/kinds');
});

test('attack a 500 KB invalid body to get a 15 MB list of errors gets a 400 listing 20 of them and a count', async (t) => {
  const { q } = await lab(t);
  // No session needed: the login body is validated before anything else.
  const fields = Object.fromEntries(Array.from({ length: 45_000 }, (_, i) => [`f${i}`, 1]));
  const body = JSON.stringify({ username: 7, password: [1], ...fields, ['x'.repeat(50_000)]: 1 });
  t.true(body.length > 500_000);
  const r = await raw(q.url, 'POST', '/user/login', {}, body);
  t.is(r.status, 400);
  t.is(r.type, 'application/problem+json');
  t.is(r.json.code, 'VALIDATION_FAILED');
  t.is(r.json.errors.length, 20);
  t.is(r.json.errorCount, 45_003);
  t.true(r.text.length < SMALL, `${r.text.length} bytes for ${body.length}`);
  t.true(
    r.json.errors.every((e) => e.path.length <= 201),
    'an unknown field name is cut',
  );
});

test('attack 10,001 well-formed node ids gets TOO_MANY_TARGETS, not a schema error, and so do 101', async (t) => {
  const { admin } = await lab(t);
  for (const n of [101, 10_001]) {
    const nodeIds = Array.from({ length: n }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    const r = await admin.post<ProblemBody>('/invoke/node', { operation: NodeOperation.restart, nodeIds });
    smallProblem(t, r, 400, 'TOO_MANY_TARGETS');
  }
});

test('attack an unknown query parameter is refused with 400 naming it, on private and public routes', async (t) => {
  const { q, admin } = await lab(t);
  const r = await admin.get<ProblemBody>('/nodes?debug=1');
  t.is(r.status, 400);
  t.deepEqual(r.json.errors, [{ path: '/query/debug', message: 'unknown field' }]);
  const pub = await raw(q.url, 'GET', '/boot/default?shell=1');
  t.is(pub.status, 400);
  t.is(pub.json.errors[0]?.path, '/query/shell');
});

test('attack an encoded slash, dot segments or NUL as an S3 bucket or key never reaches the gateway: 400', async (t) => {
  const { q } = await lab(t);
  // No gateway runs in this lab: a request that got past validation would be 503 CLUSTER_UNAVAILABLE.
  for (const path of [
    '/s3/buckets/a%2Fb/objects',
    '/s3/buckets/../objects',
    '/s3/buckets/%2e%2e/objects',
    '/s3/buckets/%00/objects',
    '/s3/buckets/a%5Cb/objects',
    '/s3/buckets/10.0.0.1/objects',
    '/s3/buckets/a..b/objects',
  ]) {
    const r = await raw(q.url, 'GET', path, S3_KEYS);
    t.true(r.status === 400 || r.status === 404, `${path}: ${r.status} ${r.text.slice(0, 200)}`);
    t.is(r.type, 'application/problem+json', path);
    t.not(r.json.code, 'CLUSTER_UNAVAILABLE', path);
  }
  const del = await raw(q.url, 'POST', '/s3/buckets/%2e%2e/objects/delete', S3_KEYS, JSON.stringify({ key: 'k' }));
  t.is(del.status, 400);
  for (const name of ['a/b', '..', 'a..b', '192.168.1.10', 'x\u0000y', 'Upper', 'ab']) {
    const r = await raw(q.url, 'POST', '/s3/buckets', S3_KEYS, JSON.stringify({ name }));
    t.is(r.status, 400, JSON.stringify(name));
    t.is(r.json.code, 'VALIDATION_FAILED');
  }
  const nul = await raw(q.url, 'POST', '/s3/buckets/good-bucket/objects/delete', S3_KEYS, JSON.stringify({ key: 'a\u0000b' }));
  t.is(nul.status, 400);
  t.is(nul.json.errors[0]?.path, '/body/key');
  const ok = await raw(q.url, 'GET', '/s3/buckets/good-bucket/objects', S3_KEYS);
  t.is(ok.status, 503, 'a good name gets as far as the (missing) gateway');
});

test("attack an S3 request whose gateway does not answer does not reveal the gateway's address", async (t) => {
  // A gateway that takes the connection and hangs up; the real S3 client in front of it.
  const silent: Server = createServer((s) => s.destroy());
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => silent.close(() => resolve())));
  const port = (silent.address() as { port: number }).port;
  const area = (ctx: AreaContext) =>
    s3Routes(new S3Service({ store: ctx.store, connect: connectS3({ timeoutMs: 3_000 }), endpointOf: () => `http://127.0.0.1:${port}` }));
  const h = await startHarness({ areas: [area] });
  t.teardown(() => h.close());
  const spec: NodeSpec = {
    hostname: 'gw-1',
    macs: ['52:54:00:00:20:01'],
    role: 'worker',
    image: null,
    power: 'on',
    restartGeneration: 0,
    shutdownGeneration: 0,
    daemons: { rgw: {} },
  };
  await h.store.create({
    kind: Kind.Node,
    id: ID,
    name: 'gw-1',
    spec,
    status: { phase: 'active', ip: '198.51.100.77', daemons: { rgw: true } },
  });
  for (const path of ['/s3/buckets', '/s3/buckets/good-bucket/objects']) {
    const r = await h.client().get<ProblemBody>(path, { headers: S3_KEYS });
    t.is(r.status, 503, r.text);
    t.is(r.json.code, 'CLUSTER_UNAVAILABLE');
    for (const internal of ['127.0.0.1', String(port), '198.51.100.77', 'gw-1'])
      t.false(r.text.includes(internal), `${path} shows ${internal}`);
  }
});

test('attack relying on an incomplete contract: the OpenAPI document states limits, 401s and media types', async (t) => {
  const { admin } = await lab(t);
  const doc = (await admin.get<OpenApiDoc>('/openapi.json')).json;
  // An operation the document lacks fails the test where it is read.
  const op = (path: string, method: string) => doc.paths[path]![method]!;
  for (const [path, field] of [
    ['/invoke/node', 'nodeIds'],
    ['/invoke/disk', 'diskIds'],
  ] as const) {
    const schema = op(path, 'post').requestBody?.content['application/json']?.schema.properties?.[field];
    t.is(schema?.maxItems, 100, path);
    t.regex(schema?.description ?? '', /TOO_MANY_TARGETS/);
  }
  t.truthy(op('/user/login', 'post').responses['401']);
  t.truthy(op('/user/refresh', 'post').responses['401']);
  t.truthy(op('/boot/config', 'get').responses['200']?.content?.['text/plain']);
  t.truthy(op('/templates/rendered/{name}', 'get').responses['200']?.content?.['text/plain']);
  for (const path of ['/templates/rendered/{name}', '/boot/config', '/boot/default', '/ceph/cluster/config', '/ceph/cluster/config/hash'])
    t.truthy(op(path, 'get').responses['422'], `${path} renders a template`);
  t.truthy(op('/ceph/monmap', 'get').responses['200']?.content?.['application/octet-stream']);
  t.truthy(op('/images/{imageId}/files/{file}', 'get').responses['200']?.content?.['application/octet-stream']);
  t.truthy(op('/events', 'get').responses['200']?.content?.['text/event-stream']);
  const bad = doc.components.responses[op('/nodes', 'get').responses['400']?.$ref?.split('/').pop() ?? ''];
  t.regex(bad?.description ?? '', /query parameter/);
  t.truthy(bad?.content?.['application/problem+json']);
  t.truthy(doc.components.schemas.Problem?.properties?.errorCount);
  // Every operation documents 400 (an unknown query parameter) and every problem is problem+json.
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, o] of Object.entries(item)) t.truthy(o.responses['400'], `${method} ${path}`);
  }
});

test('attack 20 KB of headers gets a problem+json 431, not a bare socket answer', async (t) => {
  const { q } = await lab(t);
  const r = await raw(q.url, 'GET', '/nodes', { 'x-padding': 'p'.repeat(20_000) });
  t.is(r.status, 431);
  t.is(r.type, 'application/problem+json');
  t.is(r.json.code, 'HEADERS_TOO_LARGE');
});
