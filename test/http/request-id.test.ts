import test from 'ava';
import { route } from '../../src/http/route.js';
import { requestLogLevel } from '../../src/http/request-id.js';
import { currentRequestId } from '../../src/log.js';
import { createMemoryStore } from '../../src/store/index.js';
import { node } from '../builders.js';
import { startHarness } from './harness.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

test('request id of a refused request: the problem body, the response header and the log line say the same id', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const admin = await h.admin();
  const r = await admin.post<{ requestId?: string; code: string }>('/users', { username: 'x' });
  t.is(r.status, 400);
  const header = r.headers.get('x-request-id');
  t.regex(header ?? '', UUID);
  t.is(r.json.requestId, header ?? undefined);
  const line = h.logged.find((l) => l.message === 'request' && l.fields?.requestId === header);
  t.truthy(line, JSON.stringify(h.logged));
  t.like(line, { level: 'warn', fields: { method: 'POST', route: '/users', status: 400, code: 'VALIDATION_FAILED', user: 'admin' } });
});

test('request id sent by a client is kept when sane, replaced when not', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const client = h.client();
  const kept = await client.get('/user/me', { headers: { 'X-Request-Id': 'ops-7f3a:retry.2' } });
  t.is(kept.status, 401);
  t.is(kept.headers.get('x-request-id'), 'ops-7f3a:retry.2');
  t.is((kept.json as { requestId?: string }).requestId, 'ops-7f3a:retry.2');
  for (const bad of ['a b', 'x'.repeat(129), '<script>', 'id"quoted']) {
    const r = await client.get('/user/me', { headers: { 'X-Request-Id': bad } });
    const id = r.headers.get('x-request-id');
    t.regex(id ?? '', UUID, bad);
    t.false(r.text.includes(bad), bad);
  }
});

test('request id reaches every log line the handling writes and the spec the request writes', async (t) => {
  const store = await createMemoryStore();
  t.teardown(() => store.close());
  let log: ((m: string) => void) | null = null;
  const write = route({
    method: 'POST',
    path: '/test/write',
    summary: 'writes a spec, logs, then fails',
    response: { description: 'never' },
    handler: async () => {
      const n = node().build();
      await store.create({ kind: n.kind, id: 'n1', name: n.name, spec: n.spec });
      await new Promise((resolve) => setImmediate(resolve)); // after an await too
      log?.('inside the handler');
      throw new Error('boom');
    },
  });
  const h = await startHarness({
    store,
    areas: [
      (ctx) => {
        log = (m) => ctx.logger('info', m);
        return [write];
      },
    ],
  });
  t.teardown(() => h.close());
  // A loop's watch is woken by the request's write, but never runs as part of the request.
  const woken: Array<string | null> = [];
  const stop = store.watch(store.revision(), (e) => {
    if (e.type === 'added' && e.doc.kind === 'Node') woken.push(currentRequestId());
  });
  t.teardown(stop);
  const r = await (await h.admin()).post('/test/write', {});
  t.is(r.status, 500);
  t.deepEqual(woken, [null]);
  const id = r.headers.get('x-request-id');
  t.truthy(id);
  t.is(h.logged.find((l) => l.message === 'inside the handler')?.fields?.requestId, id);
  t.like(
    h.logged.find((l) => l.message === 'request failed'),
    { level: 'error', fields: { requestId: id } },
  );
  t.like(
    h.logged.find((l) => l.message === 'request' && l.fields?.requestId === id),
    { level: 'error', fields: { status: 500 } },
  );
  t.is((await store.mustGet('Node', 'n1')).metadata.requestId, id ?? undefined);
});

test("request log line names the path only: a query's keys or a signed link's signature never reach the log", async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const r = await h.client().get('/user/me?accessKey=AK-77&secretKey=SK-secret-77&signature=sig-77');
  t.true(r.status >= 400);
  const line = h.logged.find((l) => l.message === 'request' && l.fields?.requestId === r.headers.get('x-request-id'));
  t.like(line, { fields: { route: '/user/me' } });
  for (const leak of ['AK-77', 'SK-secret-77', 'sig-77']) t.false(JSON.stringify(h.logged).includes(leak), leak);
});

test('request log level: failures warn or err, user changes inform, reads and agents stay detail', (t) => {
  t.is(requestLogLevel('POST', 500, false), 'error');
  t.is(requestLogLevel('POST', 409, false), 'warn');
  t.is(requestLogLevel('POST', 400, true), 'warn', "an agent's refused report");
  t.is(requestLogLevel('GET', 401, false), 'info', 'an expired session reading');
  t.is(requestLogLevel('POST', 401, true), 'info', "an agent's expired access token, refreshed at once");
  t.is(requestLogLevel('POST', 404, false), 'warn', 'a change to something that is not there');
  t.is(requestLogLevel('GET', 400, false), 'warn');
  t.is(requestLogLevel('POST', 200, false), 'info');
  t.is(requestLogLevel('POST', 200, true), 'debug');
  t.is(requestLogLevel('GET', 503, false, '/leaderz'), 'debug', "a follower's answer to a load balancer's probe");
  t.is(requestLogLevel('GET', 503, false, '/readyz'), 'debug');
  t.is(requestLogLevel('GET', 503, false, '/nodes'), 'error');
  t.is(requestLogLevel('GET', 200, false), 'debug');
});
