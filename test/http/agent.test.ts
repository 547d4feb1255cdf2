// The agent protocol over real HTTP, driven by hand: enrolment and rotation, who may call what,
// runs of one's own node only, the claim long-poll, logs and results, and the login throttle.
import test from 'ava';
import { Kind, type AgentCredentialSpec } from '../../src/model/kinds.js';
import { mayReadNodeSecrets, type AgentPrincipal, type Principal } from '../../src/http/auth/index.js';
import { startLab, waitFor, type LabQuarry } from '../lab/harness.js';
import { assertPrivateRoutesRefuse, fill } from './route-checks.js';
import { admin, enroll, hardware, login, nodeRun, readyAgent } from './agent-helpers.js';
import { Client } from './client.js';
import type { ProblemBody } from './bodies.js';

const OTHER_ID = '00000000-0000-4000-8000-000000000000';

/** The abort signals of the claims that reach the master's gateway, newest last. */
function spyClaims(q: LabQuarry): AbortSignal[] {
  const seen: AbortSignal[] = [];
  const claim = q.gateway.claim.bind(q.gateway);
  q.gateway.claim = (nodeId, waitMs, signal) => {
    seen.push(signal);
    return claim(nodeId, waitMs, signal);
  };
  return seen;
}

test('agent an agent logs in with its installed credential, must rotate first, and its report makes the node active', async (t) => {
  const q = await startLab(t, 0);
  const e = await enroll(q, 1);
  t.is(e.username, `agent:${e.nodeId}`);
  const c = new Client(q.url);
  const r = await c.post('/user/login', { username: e.username, password: e.initial });
  t.is(r.status, 200);
  t.deepEqual(r.json, { id: e.nodeId, username: e.username, name: `agent of node ${e.nodeId}`, email: '', isAdmin: false });
  t.deepEqual([...c.jar.keys()].sort(), ['access_token', 'refresh_token']);
  const early = await c.post('/node/hardware', hardware(1));
  t.is(early.status, 403, 'nothing but rotation before the installed secret is replaced');
  const rotated = await c.post<{ username: string; secret: string }>('/node/credential');
  t.is(rotated.status, 200);
  t.is(rotated.json.username, e.username);
  t.regex(rotated.json.secret, /^[A-Za-z0-9_-]{43}$/, '256 bits, base64url');
  t.deepEqual((await c.post('/node/hardware', hardware(1))).json, { status: 'updated' });
  const node = await waitFor('node active', async () => {
    const n = (await q.nodes()).find((x) => x.id === e.nodeId);
    return n?.status.phase === 'active' ? n : undefined;
  });
  t.is(node.status.bootId, 'boot-1');
});

test('agent the installed secret stops working after rotation, the rotated one works, and the boot answer no longer carries it', async (t) => {
  const q = await startLab(t, 0);
  const e = await enroll(q, 1);
  const first = await login(q, e.username, e.initial);
  const second = await login(q, e.username, e.initial); // a retry before rotating still works
  const stored = await q.store.mustGet<AgentCredentialSpec>(Kind.AgentCredential, e.nodeId);
  t.is(stored.spec.initialSecret, null, 'the first login deleted the plaintext');
  t.not(stored.spec.secretHash, e.initial);
  const secret = (await first.post<{ secret: string }>('/node/credential')).json.secret;
  t.is((await first.post('/node/hardware', hardware(1))).status, 200, 'the rotating session stays');
  t.is((await second.post('/node/hardware', hardware(1))).status, 401, 'sessions of the old secret end');
  const old = await new Client(q.url).post<ProblemBody>('/user/login', { username: e.username, password: e.initial });
  t.is(old.status, 401);
  t.is(old.json.code, 'UNAUTHENTICATED');
  t.is((await new Client(q.url).post('/user/login', { username: e.username, password: secret })).status, 200);
  const reboot = await q.gateway.pxeBoot('02:00:00:00:00:01');
  t.is(reboot.credential, undefined);
  const after = await q.store.mustGet<AgentCredentialSpec>(Kind.AgentCredential, e.nodeId);
  t.truthy(after.spec.rotatedAt);
  t.is(after.spec.initialSecret, null);
});

test('agent an agent gets 403 on every user route and a user gets 403 on every agent route', async (t) => {
  const q = await startLab(t, 0);
  const a = await readyAgent(q, 1);
  const c = await admin(q);
  const agentRoutes = q.http.routes.filter((r) => r.agent === true);
  t.deepEqual(agentRoutes.map((r) => `${r.method} ${r.path}`).sort(), [
    'GET /node/runs/{runId}',
    'POST /node/credential',
    'POST /node/hardware',
    'POST /node/runs/claim',
    'POST /node/runs/{runId}/finish',
    'POST /node/runs/{runId}/logs',
  ]);
  // Routes that take no session (signed links, S3 key pairs) judge their callers by other means.
  for (const r of q.http.routes.filter((x) => !x.public && !x.agent && !x.signed && !x.s3)) {
    const reply = await a.client.request<ProblemBody | undefined>(r.method, fill(r.path), r.method === 'GET' ? {} : { json: {} });
    t.is(reply.status, 403, `agent: ${r.method} ${r.path}`);
    t.is(reply.json?.code, 'FORBIDDEN', `agent: ${r.method} ${r.path}`);
  }
  for (const r of agentRoutes) {
    const reply = await c.request(r.method, fill(r.path), r.method === 'GET' ? {} : { json: {} });
    t.is(reply.status, 403, `admin: ${r.method} ${r.path}`);
  }
});

test('agent every route of the table, the agent ones included, refuses a request without a session', async (t) => {
  const q = await startLab(t, 0);
  t.true(q.http.routes.some((r) => r.agent === true));
  t.false(q.http.routes.some((r) => r.agent && r.public));
  await assertPrivateRoutesRefuse(t, q.http.routes, q.url);
});

test("agent an agent cannot see, claim, log to or finish another node's run", async (t) => {
  const q = await startLab(t, 0);
  const a = await readyAgent(q, 1);
  const b = await readyAgent(q, 2);
  const run = await nodeRun(q, b.nodeId);
  t.is((await a.client.post('/node/runs/claim', { waitMs: 0 })).status, 204);
  const line = { timestamp: new Date().toISOString(), level: 'info', message: 'x' };
  const tries = [
    await a.client.get<ProblemBody>(`/node/runs/${run.id}`),
    await a.client.post<ProblemBody>(`/node/runs/${run.id}/logs`, { lines: [line] }),
    await a.client.post<ProblemBody>(`/node/runs/${run.id}/finish`, { ok: true }),
  ];
  const missing = await a.client.get<ProblemBody>(`/node/runs/${OTHER_ID}`);
  for (const r of tries) {
    t.is(r.status, 404);
    t.is(r.json.detail, missing.json.detail.replace(OTHER_ID, run.id), 'the same answer as a run that does not exist');
  }
  t.is((await q.tasks.get(run.id)).status.state, 'pending');
  t.is((await b.client.post<{ id: string }>('/node/runs/claim', { waitMs: 0 })).json.id, run.id);
});

test('agent claim long-polls: a run started after the claim began is answered, and 204 when none comes within waitMs', async (t) => {
  const q = await startLab(t, 0);
  const a = await readyAgent(q, 1);
  const empty = await a.client.post('/node/runs/claim', { waitMs: 50 });
  t.is(empty.status, 204);
  t.is(empty.text, '');
  const waiting = spyClaims(q);
  const claim = a.client.post('/node/runs/claim', { waitMs: 30_000 });
  await waitFor('the claim reached the master', () => waiting.length === 1);
  const run = await nodeRun(q, a.nodeId);
  const got = await claim;
  t.is(got.status, 200);
  t.deepEqual(got.json, { id: run.id, taskName: 'demo.step', args: { answer: 42 } });
  t.is((await q.tasks.get(run.id)).status.state, 'running');
  t.is((await a.client.post('/node/runs/claim', { waitMs: 30_001 })).status, 400, 'waitMs is bounded');
});

test('agent a client that hangs up ends its claim, and a claim whose caller has gone takes no run', async (t) => {
  const q = await startLab(t, 0);
  const a = await readyAgent(q, 1);
  const waiting = spyClaims(q);
  const hangup = new AbortController();
  const claim = a.client.request('POST', '/node/runs/claim', { json: { waitMs: 30_000 }, signal: hangup.signal });
  await waitFor('the claim reached the master', () => waiting.length === 1);
  hangup.abort();
  t.is(
    await claim.then(
      () => 'answered',
      (err: unknown) => (err as { name?: string }).name,
    ),
    'AbortError',
  );
  await waitFor('the server saw the hang-up', () => waiting[0]!.aborted);
  const run = await nodeRun(q, a.nodeId);
  t.is(await q.tasks.agents.claim(a.nodeId, 1_000, AbortSignal.abort()), null);
  t.is((await q.tasks.get(run.id)).status.state, 'pending');
  t.is((await a.client.post<{ id: string }>('/node/runs/claim', { waitMs: 0 })).json.id, run.id);
});

test('agent logs and the result sent over HTTP land on the run; a canceled run says so', async (t) => {
  const q = await startLab(t, 0);
  const a = await readyAgent(q, 1);
  const run = await nodeRun(q, a.nodeId);
  t.is((await a.client.post<{ id: string }>('/node/runs/claim', { waitMs: 1000 })).json.id, run.id);
  t.deepEqual((await a.client.get(`/node/runs/${run.id}`)).json, { state: 'running', canceled: false });
  const lines = [
    { timestamp: '2026-01-01T00:00:00.000Z', level: 'info', message: 'step one' },
    { timestamp: '2026-01-01T00:00:01.000Z', level: 'warn', message: 'step two' },
  ];
  t.deepEqual((await a.client.post(`/node/runs/${run.id}/logs`, { lines })).json, { status: 'updated' });
  const tooMany = Array.from({ length: 1001 }, () => lines[0]);
  t.is((await a.client.post(`/node/runs/${run.id}/logs`, { lines: tooMany })).status, 400);
  t.deepEqual((await a.client.post(`/node/runs/${run.id}/finish`, { ok: true, result: { osdId: 3 } })).json, { status: 'updated' });
  const done = await q.tasks.get(run.id);
  t.is(done.status.state, 'completed');
  t.deepEqual(done.status.result, { osdId: 3 });
  t.deepEqual(
    (await q.tasks.logs(run.id)).filter((l) => l.message.startsWith('step')).map((l) => [l.level, l.message]),
    [
      ['info', 'step one'],
      ['warn', 'step two'],
    ],
  );
  t.deepEqual((await a.client.get(`/node/runs/${run.id}`)).json, { state: 'completed', canceled: false });
  t.is((await a.client.post(`/node/runs/${run.id}/finish`, { ok: true })).status, 409);

  const second = await nodeRun(q, a.nodeId);
  t.is((await a.client.post<{ id: string }>('/node/runs/claim', { waitMs: 1000 })).json.id, second.id);
  await q.tasks.cancel(second.id);
  t.deepEqual((await a.client.get(`/node/runs/${second.id}`)).json, { state: 'canceled', canceled: true });
  t.is((await a.client.post(`/node/runs/${second.id}/finish`, { ok: false, error: 'stopped' })).status, 409);
});

test('agent a wrong secret is the generic 401 and counts toward the login throttle', async (t) => {
  const q = await startLab(t, 0);
  const e = await enroll(q, 1);
  const c = new Client(q.url);
  const userFailure = await c.post<ProblemBody>('/user/login', { username: 'nobody', password: 'wrong-password' });
  const unknownNode = await c.post<ProblemBody>('/user/login', { username: `agent:${OTHER_ID}`, password: 'x'.repeat(43) });
  t.is(unknownNode.status, 401);
  t.is(unknownNode.json.detail, userFailure.json.detail);
  for (let i = 0; i < 5; i++) {
    const r = await c.post<ProblemBody>('/user/login', { username: e.username, password: `wrong-${i}-${'x'.repeat(40)}` });
    t.is(r.status, 401);
    t.is(r.json.detail, userFailure.json.detail);
  }
  const throttled = await c.post<ProblemBody>('/user/login', { username: e.username, password: e.initial });
  t.is(throttled.status, 429);
  t.is(throttled.json.code, 'RATE_LIMITED');
  t.truthy(throttled.headers.get('retry-after'));
  t.is(
    (await q.store.mustGet<AgentCredentialSpec>(Kind.AgentCredential, e.nodeId)).spec.firstUsedAt,
    null,
    'the credential is still unused',
  );
});

test('agent mayReadNodeSecrets: an admin any node, an agent its own node once rotated, other users none', (t) => {
  const user = (isAdmin: boolean) =>
    ({ user: { id: 'u', username: 'u', name: 'u', email: '', isAdmin }, doc: {}, sessionId: 's' }) as unknown as Principal;
  const agent = (nodeId: string, rotated = true): AgentPrincipal => ({
    kind: 'agent',
    nodeId,
    username: `agent:${nodeId}`,
    sessionId: 's',
    rotated,
  });
  t.true(mayReadNodeSecrets(user(true), 'n1'));
  t.false(mayReadNodeSecrets(user(false), 'n1'));
  t.true(mayReadNodeSecrets(agent('n1'), 'n1'));
  t.false(mayReadNodeSecrets(agent('n1'), 'n2'));
  t.false(mayReadNodeSecrets(agent('n1', false), 'n1'));
  t.false(mayReadNodeSecrets(null, 'n1'));
});
