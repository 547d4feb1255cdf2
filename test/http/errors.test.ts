import test, { type ExecutionContext } from 'ava';
import { request } from 'node:http';
import { route } from '../../src/http/route.js';
import { ADMIN_PASSWORD, startHarness } from './harness.js';
import type { Reply } from './client.js';
import type { ProblemBody } from './bodies.js';

/** Checks a problem+json answer; the caller goes on to read its body as one. */
function assertProblem(t: ExecutionContext, r: Reply, status: number, code: string): asserts r is Reply<ProblemBody> {
  const body = r.json as ProblemBody;
  t.is(r.status, status, r.text);
  t.is(r.headers.get('content-type')?.split(';')[0], 'application/problem+json');
  t.like(body, { status, code });
  for (const key of ['type', 'title', 'detail'] as const) t.is(typeof body[key], 'string', key);
  t.regex(body.type, /^urn:quarry:problem:[a-z0-9-]+$/);
}

const login = { username: 'admin', password: ADMIN_PASSWORD };

test('problem 400 lists every failing field; unknown fields in body and query are refused', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const r = await h.client().post('/user/login', { username: 'admin', extra: 1 });
  assertProblem(t, r, 400, 'VALIDATION_FAILED');
  t.deepEqual(r.json.errors, [
    { path: '/body/password', message: "must have required property 'password'" },
    { path: '/body/extra', message: 'unknown field' },
  ]);
  const admin = await h.admin();
  const q = await admin.get('/users?limit=3');
  assertProblem(t, q, 400, 'VALIDATION_FAILED');
  t.deepEqual(q.json.errors, [{ path: '/query/limit', message: 'unknown field' }]);
  const noBody = await admin.post('/user/logout', { all: true });
  assertProblem(t, noBody, 400, 'VALIDATION_FAILED');
});

test('problem 400 for malformed JSON, without echoing the body', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const r = await h
    .client()
    .request('POST', '/user/login', { body: '{"username": "admin", "password": "s3cr3t', headers: { 'content-type': 'application/json' } });
  assertProblem(t, r, 400, 'VALIDATION_FAILED');
  t.deepEqual(r.json.errors, [{ path: '/body', message: 'malformed JSON' }]);
  t.false(r.text.includes('s3cr3t'));
});

test('problem 401, 403, 404, 405 and 409 shapes', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  assertProblem(t, await h.client().get('/users'), 401, 'UNAUTHENTICATED');
  await h.createUser('kim');
  const kim = await h.login('kim', 'kim-password');
  assertProblem(
    t,
    await kim.post('/users', { username: 'x1', password: 'x1-password', name: 'X', email: 'x@example.com' }),
    403,
    'FORBIDDEN',
  );
  assertProblem(t, await kim.get('/no/such/thing'), 404, 'NOT_FOUND');
  assertProblem(t, await h.client().get('/no/such/thing'), 404, 'NOT_FOUND');
  const wrongMethod = await kim.request('DELETE', '/users');
  assertProblem(t, wrongMethod, 405, 'METHOD_NOT_ALLOWED');
  t.deepEqual(wrongMethod.headers.get('allow')?.split(', ').sort(), ['GET', 'HEAD', 'POST']);
  const admin = await h.admin();
  assertProblem(
    t,
    await admin.post('/users', { username: 'KIM', password: 'kim-password', name: 'K', email: 'k@example.com' }),
    409,
    'CONFLICT',
  );
});

test('problem 413 for a real JSON body over 1 MiB (with Content-Length)', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const admin = await h.admin();
  const big = JSON.stringify({ username: 'big', password: 'big-password', name: 'x'.repeat(1024 * 1024 + 10), email: 'b@example.com' });
  const r = await admin.request('POST', '/users', { body: big, headers: { 'content-type': 'application/json' } });
  assertProblem(t, r, 413, 'PAYLOAD_TOO_LARGE');
  t.is((await admin.get('/user/me')).status, 200, 'the server is still fine');
});

test('problem 413 for a chunked JSON body over 1 MiB (no Content-Length)', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const admin = await h.admin();
  const cookie = [...admin.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const reply = await new Promise<{ status: number; type: string; body: string }>((resolve, reject) => {
    const req = request(
      `${h.base}/users`,
      { method: 'POST', headers: { cookie, 'content-type': 'application/json', 'transfer-encoding': 'chunked' } },
      (res) => {
        let body = '';
        res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']), body }));
      },
    );
    req.on('error', reject);
    req.write('{"name":"');
    for (let i = 0; i < 20; i++) req.write('y'.repeat(64 * 1024));
    req.end('"}');
  });
  t.is(reply.status, 413);
  t.true(reply.type.startsWith('application/problem+json'));
  t.is((JSON.parse(reply.body) as ProblemBody).code, 'PAYLOAD_TOO_LARGE');
});

test('problem 415 for a body that is not JSON on a JSON route', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const c = h.client();
  const plain = await c.request('POST', '/user/login', { body: JSON.stringify(login), headers: { 'content-type': 'text/plain' } });
  assertProblem(t, plain, 415, 'UNSUPPORTED_MEDIA_TYPE');
  const form = await c.request('POST', '/user/login', {
    body: 'username=admin&password=x',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
  });
  assertProblem(t, form, 415, 'UNSUPPORTED_MEDIA_TYPE');
  t.is(
    (await c.request('POST', '/user/login', { json: login, headers: { 'content-type': 'application/json; charset=utf-8' } })).status,
    200,
  );
});

test('problem 500 hides the message of a plain Error and logs it with a reference', async (t) => {
  const boom = route({
    method: 'GET',
    path: '/test/boom',
    summary: 'fails',
    response: { description: 'never' },
    handler: () => {
      throw new Error("ENOENT: no such file or directory, open '/var/lib/quarry/state/secret.key' (ceph auth get-key)");
    },
  });
  const h = await startHarness({ areas: [[boom]] });
  t.teardown(() => h.close());
  const r = await (await h.admin()).get('/test/boom');
  assertProblem(t, r, 500, 'INTERNAL');
  for (const leak of ['ENOENT', '/var/lib', 'secret.key', 'ceph', 'at ', '.ts:', '.js:']) t.false(r.text.includes(leak), leak);
  const line = h.logged.find((l) => l.level === 'error');
  t.truthy(line);
  t.true(String(line?.fields?.error).includes('/var/lib/quarry'));
  t.true(r.json.detail.includes(String(line?.fields?.reference)));
});

test('csrf a cross-site Origin or Sec-Fetch-Site is refused 403; same origin and header-less requests pass', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const c = h.client();
  const post = (headers: Record<string, string>) => c.request('POST', '/user/login', { json: login, headers });
  assertProblem(t, await post({ origin: 'http://evil.example' }), 403, 'FORBIDDEN');
  assertProblem(t, await post({ origin: 'null' }), 403, 'FORBIDDEN');
  assertProblem(t, await post({ 'sec-fetch-site': 'cross-site' }), 403, 'FORBIDDEN');
  t.is((await post({ origin: h.base })).status, 200);
  t.is((await post({ origin: h.base, 'sec-fetch-site': 'same-origin' })).status, 200);
  t.is((await post({})).status, 200, 'curl-like: no Origin, no Sec-Fetch-Site');
  const admin = await h.admin();
  t.is((await admin.get('/user/me', { headers: { origin: 'http://evil.example' } })).status, 200, 'reads are not state-changing');
});
