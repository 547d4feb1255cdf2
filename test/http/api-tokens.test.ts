// API tokens: created from a password session, shown once, kept hashed, used as
// `Authorization: Bearer`, scoped read or write, revocable, expiring.
import test, { type ExecutionContext } from 'ava';
import { createHash } from 'node:crypto';
import { route, type AnyRoute } from '../../src/http/route.js';
import { TokenKind } from '../../src/model/token-kinds.js';
import { kindSchemas } from '../../src/model/schemas.js';
import { createLogger } from '../../src/log.js';
import { eventRoutes } from '../../src/http/routes/events.js';
import { SseHub } from '../../src/http/sse/hub.js';
import { EventBus } from '../../src/tasks/bus.js';
import { ADMIN_PASSWORD, startHarness, type Harness } from './harness.js';
import { createToken } from './route-checks.js';
import type { ProblemBody, UserView } from './bodies.js';

interface TokenView {
  id: string;
  name: string;
  scope: string;
  createdAt: string;
  expiresAt: string;
  lastUsedAt: string | null;
  token?: string;
}

// A dry run and a write, as other areas declare them.
const probes: AnyRoute[] = [
  route({
    method: 'POST',
    path: '/probe/plan',
    summary: 'changes nothing',
    readOnly: true,
    response: { description: 'x' },
    handler: () => ({ planned: true }),
  }),
  route({ method: 'POST', path: '/probe/write', summary: 'a write', response: { description: 'x' }, handler: () => ({ wrote: true }) }),
];

/** The secret part of `qry_<uuid>_<secret>` (the secret may hold `_` itself). */
const secretOf = (token: string): string => token.slice('qry_'.length + 36 + 1);
const bearer = (token: string, extra: Record<string, string> = {}) => ({ headers: { authorization: `Bearer ${token}`, ...extra } });

async function withTokens(t: ExecutionContext): Promise<Harness> {
  const h = await startHarness({ areas: [probes] });
  t.teardown(() => h.close());
  return h;
}

test('api tokens are created with a password session, shown once, listed without the secret and revoked', async (t) => {
  const h = await withTokens(t);
  const admin = await h.admin();
  const created = await admin.post<TokenView>('/user/tokens', { name: 'ci.deploy@rack1', scope: 'write', expiresInDays: 30 });
  t.is(created.status, 201);
  t.deepEqual(Object.keys(created.json).sort(), ['createdAt', 'expiresAt', 'id', 'lastUsedAt', 'name', 'scope', 'token']);
  t.like(created.json, { name: 'ci.deploy@rack1', scope: 'write', lastUsedAt: null });
  t.regex(created.json.token!, new RegExp(`^qry_${created.json.id}_[A-Za-z0-9_-]{43}$`));
  t.is(Date.parse(created.json.expiresAt) - Date.parse(created.json.createdAt), 30 * 24 * 3600_000);
  const dflt = await createToken(admin, { name: 'default-expiry', scope: 'read' });
  const listed = await admin.get<{ tokens: TokenView[] }>('/user/tokens');
  t.is(listed.status, 200);
  t.deepEqual(
    listed.json.tokens.map((x) => x.name),
    ['default-expiry', 'ci.deploy@rack1'],
  );
  const view = listed.json.tokens.find((x) => x.id === dflt.id)!;
  t.is(Date.parse(view.expiresAt) - Date.parse(view.createdAt), 90 * 24 * 3600_000, 'default: 90 days');
  t.false(listed.text.includes(secretOf(created.json.token!)), 'the list never holds a secret');
  t.false('token' in view);
  // Each user sees their own only, and cannot revoke another's.
  await h.createUser('bob');
  const bob = await h.login('bob', 'bob-password');
  t.deepEqual((await bob.get<{ tokens: TokenView[] }>('/user/tokens')).json.tokens, []);
  t.is((await bob.request<ProblemBody>('DELETE', `/user/tokens/${created.json.id}`)).status, 404);
  const del = await admin.request('DELETE', `/user/tokens/${created.json.id}`);
  t.is(del.status, 204);
  t.is(del.text, '');
  t.deepEqual(
    (await admin.get<{ tokens: TokenView[] }>('/user/tokens')).json.tokens.map((x) => x.id),
    [dflt.id],
  );
  const again = await admin.request<ProblemBody>('DELETE', `/user/tokens/${created.json.id}`);
  t.is(again.status, 404);
});

test('api tokens are stored as a SHA-256 of the secret: the secret is nowhere in the store', async (t) => {
  const h = await withTokens(t);
  const { token, id } = await createToken(await h.admin(), { name: 'stored', scope: 'read' });
  const secret = secretOf(token);
  const docs = await Promise.all(Object.keys(kindSchemas).map((k) => h.store.list(k)));
  const everything = JSON.stringify(docs);
  t.false(everything.includes(secret));
  t.false(everything.includes(token));
  const doc = await h.store.get<{ secretHash: string; name: string }>(TokenKind.ApiToken, id);
  t.is(doc?.spec.secretHash, createHash('sha256').update(secret).digest('hex'));
});

test('api tokens authenticate as Bearer on reads and writes, as their user, and bypass the cross-site check', async (t) => {
  const h = await withTokens(t);
  const admin = await h.admin();
  const { token } = await createToken(admin, { name: 'writer', scope: 'write' });
  const anon = h.client();
  const me = await anon.get<UserView>('/user/me', bearer(token));
  t.is(me.status, 200);
  t.is(me.json.username, 'admin');
  t.is(me.headers.get('cache-control'), 'no-store');
  const bobId = await h.createUser('bob');
  const patched = await anon.request<UserView>('PATCH', `/users/${bobId}`, { json: { name: 'Robert' }, ...bearer(token) });
  t.is(patched.status, 200);
  t.is(patched.json.name, 'Robert');
  // No browser adds a Bearer header by itself: a request that has one is not a cross-site forgery.
  const crossSite = await anon.post('/probe/write', {}, bearer(token, { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' }));
  t.is(crossSite.status, 200);
  // The scheme is case-insensitive; a malformed header is 401.
  t.is((await anon.get('/user/me', { headers: { authorization: `bearer ${token}` } })).status, 200);
  t.is((await anon.get<ProblemBody>('/user/me', { headers: { authorization: 'Bearer' } })).json.code, 'UNAUTHENTICATED');
  t.is((await anon.get('/user/me', bearer('qry_garbage'))).status, 401);
  // Bearer is judged alone: a bad token with good cookies is still 401.
  t.is((await admin.get('/user/me', bearer(`${token}x`))).status, 401);
});

test('api tokens with read scope may call reads and routes that change nothing, and are refused every write with a clear 403', async (t) => {
  const h = await withTokens(t);
  const { token } = await createToken(await h.admin(), { name: 'reader', scope: 'read' });
  const c = h.client();
  t.is((await c.get('/users', bearer(token))).status, 200);
  const plan = await c.post('/probe/plan', {}, bearer(token));
  t.is(plan.status, 200);
  t.deepEqual(plan.json, { planned: true });
  const write = await c.post<ProblemBody>('/probe/write', {}, bearer(token));
  t.is(write.status, 403);
  t.is(write.json.code, 'FORBIDDEN');
  t.regex(write.json.detail, /"reader" is read-only/);
  t.is(write.headers.get('content-type'), 'application/problem+json');
  const bobId = await h.createUser('bob');
  const patch = await c.request<ProblemBody>('PATCH', `/users/${bobId}`, { json: { name: 'Robert' }, ...bearer(token) });
  t.is(patch.status, 403);
  t.is((await h.store.get<{ name: string }>('User', bobId))?.spec.name, 'bob person', 'nothing changed');
});

test('api tokens revoked or expired are 401; a password change keeps them; a deleted user takes them along', async (t) => {
  const h = await withTokens(t);
  const admin = await h.admin();
  const revoked = await createToken(admin, { name: 'revoked', scope: 'read' });
  const short = await createToken(admin, { name: 'short', scope: 'read', expiresInDays: 1 });
  const long = await createToken(admin, { name: 'long', scope: 'read', expiresInDays: 2 });
  const c = h.client();
  t.is((await c.get('/user/me', bearer(revoked.token))).status, 200);
  t.is((await admin.request('DELETE', `/user/tokens/${revoked.id}`)).status, 204);
  const gone = await c.get<ProblemBody>('/user/me', bearer(revoked.token));
  t.is(gone.status, 401);
  t.is(gone.json.code, 'UNAUTHENTICATED');

  const bobId = await h.createUser('bob');
  const pw = await admin.post('/user/password', { oldPassword: ADMIN_PASSWORD, newPassword: 'a-new-admin-password' });
  t.is(pw.status, 200);
  t.is((await c.get('/user/me', bearer(long.token))).status, 200, 'a password change does not end tokens');

  h.clock.advance(24 * 3600_000 + 1);
  const expired = await c.get<ProblemBody>('/user/me', bearer(short.token));
  t.is(expired.status, 401);
  t.regex(expired.json.detail, /expired/);
  t.is((await c.get('/user/me', bearer(long.token))).status, 200);

  const bobToken = await createToken(await h.login('bob', 'bob-password'), { name: 'bobs', scope: 'read' });
  t.is((await c.get('/user/me', bearer(bobToken.token))).status, 200);
  await h.store.delete('User', bobId);
  t.is((await c.get('/user/me', bearer(bobToken.token))).status, 401, "a deleted user's token stops working");
});

test('api tokens cannot create tokens; an access token as Bearer is a password session and can', async (t) => {
  const h = await withTokens(t);
  const admin = await h.admin();
  const { token } = await createToken(admin, { name: 'writer', scope: 'write' });
  const c = h.client();
  const refused = await c.post<ProblemBody>('/user/tokens', { name: 'child', scope: 'write' }, bearer(token));
  t.is(refused.status, 403);
  t.regex(refused.json.detail, /password session/);
  const refreshed = await admin.post<{ accessToken: string }>('/user/refresh');
  t.is(refreshed.status, 200);
  t.is((await c.get<UserView>('/user/me', bearer(refreshed.json.accessToken))).json.username, 'admin');
  t.is((await c.post('/user/tokens', { name: 'from-jwt', scope: 'read' }, bearer(refreshed.json.accessToken))).status, 201);
  const names = (await admin.get<{ tokens: TokenView[] }>('/user/tokens')).json.tokens.map((x) => x.name);
  t.deepEqual(names.sort(), ['from-jwt', 'writer']);
});

test('api tokens refuse bad names, scopes and expiries with 400 problem+json and create nothing', async (t) => {
  const h = await withTokens(t);
  const admin = await h.admin();
  const bad: unknown[] = [
    {},
    { name: '', scope: 'read' },
    { name: 'x'.repeat(65), scope: 'read' },
    { name: 'has space', scope: 'read' },
    { name: 'slash/name', scope: 'read' },
    { name: 'ok', scope: 'admin' },
    { name: 'ok' },
    { name: 'ok', scope: 'read', expiresInDays: 0 },
    { name: 'ok', scope: 'read', expiresInDays: 3651 },
    { name: 'ok', scope: 'read', expiresInDays: 1.5 },
    { name: 'ok', scope: 'read', expiresInDays: '30' },
    { name: 'ok', scope: 'read', extra: true },
  ];
  for (const body of bad) {
    const r = await admin.post<ProblemBody>('/user/tokens', body);
    t.is(r.status, 400, JSON.stringify(body));
    t.is(r.json.code, 'VALIDATION_FAILED', JSON.stringify(body));
    t.is(r.headers.get('content-type'), 'application/problem+json');
  }
  t.deepEqual(await h.store.list(TokenKind.ApiToken), []);
  t.deepEqual((await admin.get<{ tokens: unknown[] }>('/user/tokens')).json.tokens, []);
});

test('api tokens record lastUsedAt coarsely: at most one store write a minute per token', async (t) => {
  const h = await withTokens(t);
  const { token, id } = await createToken(await h.admin(), { name: 'busy', scope: 'read' });
  const c = h.client();
  const before = h.store.revision();
  for (let i = 0; i < 5; i++) t.is((await c.get('/user/me', bearer(token))).status, 200);
  t.is(h.store.revision(), before + 1, 'one write for five uses');
  const first = (await h.store.get<unknown, { lastUsedAt?: string }>(TokenKind.ApiToken, id))?.status.lastUsedAt;
  t.is(first, new Date(h.clock.now()).toISOString());
  h.clock.advance(61_000);
  await c.get('/user/me', bearer(token));
  t.is(h.store.revision(), before + 2);
  const listed = (await c.get<{ tokens: TokenView[] }>('/user/tokens', bearer(token))).json.tokens[0];
  t.is(listed?.lastUsedAt, new Date(h.clock.now()).toISOString());
});

test('api tokens never appear in a log line', async (t) => {
  const lines: string[] = [];
  const h = await startHarness({ areas: [probes], logger: createLogger('debug', (l) => lines.push(l)) });
  t.teardown(() => h.close());
  const admin = await h.admin();
  const { token, id } = await createToken(admin, { name: 'logged', scope: 'read' });
  const c = h.client();
  await c.get('/user/me', bearer(token));
  await c.post('/probe/write', {}, bearer(token));
  await c.get('/user/me', bearer(`${token}x`));
  await admin.request('DELETE', `/user/tokens/${id}`);
  await c.get('/user/me', bearer(token));
  const secret = secretOf(token);
  t.true(lines.length > 5);
  t.true(
    lines.some((l) => l.includes('"via":"logged"')),
    'the request line names the token',
  );
  for (const l of lines) t.false(l.includes(secret), l);
});

test('api tokens open /events, and the stream ends when the token is revoked', async (t) => {
  const hub = new SseHub(new EventBus(), { flushIntervalMs: 0 });
  const h = await startHarness({ areas: [eventRoutes(hub)] });
  t.teardown(async () => {
    hub.close();
    await h.close();
  });
  const admin = await h.admin();
  const { token, id } = await createToken(admin, { name: 'watcher', scope: 'read' });
  const res = await fetch(new URL('/events', h.base), { headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
  t.is(res.status, 200);
  const reader = res.body!.getReader();
  const ended = (async () => {
    for (;;) if ((await reader.read()).done) return true;
  })();
  t.is((await admin.request('DELETE', `/user/tokens/${id}`)).status, 204);
  t.true(await ended);
});
