import test from 'ava';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createMemoryStore } from '../../src/store/index.js';
import { ManualClock } from '../../src/model/clock.js';
import { ADMIN_PASSWORD, startHarness } from './harness.js';
import type { SetCookie } from './client.js';
import type { ProblemBody, UserView } from './bodies.js';

const cookie = (list: SetCookie[], name: string): SetCookie | undefined => list.find((c) => c.name === name);

test('login sets access_token and refresh_token HttpOnly, SameSite=Strict, Path=/, not Secure over plain HTTP', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const c = h.client();
  const r = await c.post<UserView>('/user/login', { username: 'admin', password: ADMIN_PASSWORD });
  t.is(r.status, 200);
  t.deepEqual(Object.keys(r.json).sort(), ['email', 'id', 'isAdmin', 'name', 'username']);
  t.is(r.json.username, 'admin');
  t.true(r.json.isAdmin);
  for (const name of ['access_token', 'refresh_token']) {
    const k = cookie(r.setCookies, name);
    t.truthy(k, name);
    t.true(k?.attrs.httponly, `${name} HttpOnly`);
    t.is(String(k?.attrs.samesite).toLowerCase(), 'strict');
    t.is(k?.attrs.path, '/');
    t.is(k?.attrs.secure, undefined);
  }
});

test('login sets Secure cookies when the request came over TLS (trusted proxy says https)', async (t) => {
  const h = await startHarness({ trustProxy: true });
  t.teardown(() => h.close());
  const r = await h
    .client()
    .post('/user/login', { username: 'admin', password: ADMIN_PASSWORD }, { headers: { 'x-forwarded-proto': 'https' } });
  t.is(r.status, 200);
  t.true(cookie(r.setCookies, 'access_token')?.attrs.secure);
  t.true(cookie(r.setCookies, 'refresh_token')?.attrs.secure);
});

test('login answers the same generic 401 for an unknown user and a wrong password', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const unknown = await h.client().post<ProblemBody>('/user/login', { username: 'nobody', password: 'whatever-1' });
  const wrong = await h.client().post('/user/login', { username: 'admin', password: 'wrong-password' });
  t.is(unknown.status, 401);
  // Each answer names its own request (requestId); nothing else may tell the two apart.
  const { requestId: one, ...unknownRest } = unknown.json as ProblemBody & { requestId?: string };
  const { requestId: other, ...wrongRest } = wrong.json as ProblemBody & { requestId?: string };
  t.true(typeof one === 'string' && typeof other === 'string');
  t.deepEqual(unknownRest, wrongRest);
  t.is(unknown.json.code, 'UNAUTHENTICATED');
  t.is(unknown.setCookies.length, 0);
});

test('session /user/me answers the logged-in user with the cookies', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const admin = await h.admin();
  const me = await admin.get<UserView>('/user/me');
  t.is(me.status, 200);
  t.is(me.json.username, 'admin');
  t.is(me.headers.get('cache-control'), 'no-store');
});

test('refresh answers expiresIn 900 and rotates both cookies', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const c = await h.admin();
  const before = new Map(c.jar);
  h.clock.advance(1000); // new iat, so even the access token differs
  const r = await c.post<{ accessToken: string; expiresIn: number }>('/user/refresh');
  t.is(r.status, 200);
  t.deepEqual(Object.keys(r.json).sort(), ['accessToken', 'expiresIn']);
  t.is(r.json.expiresIn, 900);
  t.is<string | undefined, string | undefined>(r.json.accessToken, c.jar.get('access_token'));
  t.not(c.jar.get('refresh_token'), before.get('refresh_token'));
  t.not(c.jar.get('access_token'), before.get('access_token'));
  t.is((await c.get('/user/me')).status, 200);
});

test('refresh reusing an old refresh token revokes the whole session, newer tokens included', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const c = await h.admin();
  const stale = c.clone();
  t.is((await c.post('/user/refresh')).status, 200);
  const replay = await stale.post('/user/refresh');
  t.is(replay.status, 401);
  t.is((await c.get('/user/me')).status, 401, 'the newest access token of the family is refused');
  t.is((await c.post('/user/refresh')).status, 401, 'the newest refresh token of the family is refused');
  t.is((await (await h.admin()).get('/user/me')).status, 200, 'other sessions are untouched');
});

test('logout answers logged-out, clears both cookies and revokes the session', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const c = await h.admin();
  const copy = c.clone();
  const r = await c.post('/user/logout');
  t.is(r.status, 200);
  t.deepEqual(r.json, { status: 'logged-out' });
  for (const name of ['access_token', 'refresh_token']) {
    const k = cookie(r.setCookies, name);
    t.is(k?.value, '', `${name} emptied`);
    t.true(Date.parse(String(k?.attrs.expires)) <= Date.now(), `${name} expired`);
  }
  t.is(c.jar.size, 0);
  t.is((await copy.get('/user/me')).status, 401, 'a copy of the old access token is refused');
  t.is((await copy.post('/user/refresh')).status, 401, 'a copy of the old refresh token is refused');
});

test('session access token expired after 15 minutes answers 401; refresh then works', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const c = await h.admin();
  h.clock.advance(14 * 60_000);
  t.is((await c.get('/user/me')).status, 200);
  h.clock.advance(60_000 + 1);
  const expired = await c.get<ProblemBody>('/user/me');
  t.is(expired.status, 401);
  t.is(expired.json.code, 'UNAUTHENTICATED');
  t.is((await c.post('/user/refresh')).status, 200);
  t.is((await c.get('/user/me')).status, 200);
});

test('session refresh token is refused after 7 days without use', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const c = await h.admin();
  h.clock.advance(7 * 24 * 3600_000 + 1000);
  t.is((await c.post('/user/refresh')).status, 401);
});

test("session survives a restart: the signing key and the session are both the store's", async (t) => {
  const store = await createMemoryStore();
  const clock = new ManualClock(Date.now());
  const first = await startHarness({ store, clock, keepStateDir: true });
  const c = await first.admin();
  await first.close();
  const second = await startHarness({ store, clock, stateDir: first.stateDir });
  t.teardown(() => second.close());
  await t.throwsAsync(stat(join(first.stateDir, 'jwt-hs256.key')), { code: 'ENOENT' }, 'no key in STATE_DIR any more');
  const moved = c.clone(second.base);
  t.is((await moved.get('/user/me')).status, 200);
  t.is((await moved.post('/user/refresh')).status, 200);
});

test('login is rate limited after 5 failures per username: 429 problem with Retry-After', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  for (let i = 0; i < 5; i++) t.is((await h.client().post('/user/login', { username: 'admin', password: `wrong-${i}` })).status, 401);
  const r = await h.client().post<ProblemBody>('/user/login', { username: 'ADMIN', password: ADMIN_PASSWORD });
  t.is(r.status, 429);
  t.is(r.json.code, 'RATE_LIMITED');
  t.is(r.headers.get('content-type')?.split(';')[0], 'application/problem+json');
  const retry = Number(r.headers.get('retry-after'));
  t.true(retry > 0 && retry <= 15 * 60, `Retry-After ${retry}`);
  h.clock.advance(15 * 60_000 + 1);
  t.is((await h.client().post('/user/login', { username: 'admin', password: ADMIN_PASSWORD })).status, 200);
});

test('login is rate limited per client address across usernames', async (t) => {
  const h = await startHarness({ auth: { loginLimits: { windowMs: 60_000, perUser: 100, perAddress: 3, maxKeys: 100 } } });
  t.teardown(() => h.close());
  for (let i = 0; i < 3; i++) t.is((await h.client().post('/user/login', { username: `user${i}`, password: 'nope-nope' })).status, 401);
  t.is((await h.client().post('/user/login', { username: 'admin', password: ADMIN_PASSWORD })).status, 429);
});

test('session password change ends the other sessions of the user and keeps the current one', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  await h.createUser('ana', 'ana-password');
  const here = await h.login('ana', 'ana-password');
  const elsewhere = await h.login('ana', 'ana-password');
  const r = await here.post('/user/password', { oldPassword: 'ana-password', newPassword: 'ana-password-2' });
  t.deepEqual(r.json, { status: 'updated' });
  t.is((await here.get('/user/me')).status, 200);
  t.is((await elsewhere.get('/user/me')).status, 401);
  t.is((await h.client().post('/user/login', { username: 'ana', password: 'ana-password' })).status, 401);
  t.is((await h.client().post('/user/login', { username: 'ana', password: 'ana-password-2' })).status, 200);
});
