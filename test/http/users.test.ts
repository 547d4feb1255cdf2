import test from 'ava';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Kind, type UserSpec } from '../../src/model/kinds.js';
import { createMemoryStore } from '../../src/store/index.js';
import { ADMIN_PASSWORD, startHarness } from './harness.js';
import type { Reply } from './client.js';
import type { Created, ProblemBody, UserView } from './bodies.js';

test('users admin creates a user (201 created + id); the same username in any case is 409', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const admin = await h.admin();
  const r = await admin.post<Created>('/users', { username: 'Bea', password: 'bea-password', name: 'Bea B', email: 'bea@example.com' });
  t.is(r.status, 201);
  t.is(r.json.status, 'created');
  t.regex(r.json.id, /^[0-9a-f-]{36}$/);
  const got = await admin.get(`/users/${r.json.id}`);
  t.deepEqual(got.json, { id: r.json.id, username: 'Bea', name: 'Bea B', email: 'bea@example.com', isAdmin: false });
  const dup = await admin.post<ProblemBody>('/users', { username: 'bea', password: 'bea-password', name: 'Other', email: 'o@example.com' });
  t.is(dup.status, 409);
  t.is(dup.json.code, 'CONFLICT');
});

test('users non-admin may read: GET /users and GET /users/{id}', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const id = await h.createUser('carl');
  const carl = await h.login('carl', 'carl-password');
  const list = await carl.get<UserView[]>('/users');
  t.is(list.status, 200);
  t.deepEqual(list.json.map((u) => u.username).sort(), ['admin', 'carl']);
  const admin = list.json.find((u) => u.username === 'admin')!;
  t.is((await carl.get(`/users/${admin.id}`)).status, 200);
  t.is((await carl.get<UserView>(`/users/${id}`)).json.username, 'carl');
});

test('users non-admin writes: POST /users 403, PATCH another user 403, PATCH own name and email ok', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const danId = await h.createUser('dan');
  const eveId = await h.createUser('eve');
  const dan = await h.login('dan', 'dan-password');
  const create = await dan.post<ProblemBody>('/users', { username: 'fay', password: 'fay-password', name: 'Fay', email: 'f@example.com' });
  t.is(create.status, 403);
  t.is(create.json.code, 'FORBIDDEN');
  t.is((await dan.request('PATCH', `/users/${eveId}`, { json: { name: 'Evil' } })).status, 403);
  const own = await dan.request('PATCH', `/users/${danId}`, { json: { name: 'Dan D', email: 'dan.d@example.com' } });
  t.is(own.status, 200);
  t.deepEqual(own.json, { id: danId, username: 'dan', name: 'Dan D', email: 'dan.d@example.com', isAdmin: false });
});

test('users non-admin may not change own isAdmin, username or password through PATCH (403)', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const id = await h.createUser('gus');
  const gus = await h.login('gus', 'gus-password');
  for (const json of [{ isAdmin: true }, { username: 'gustav' }, { newPassword: 'gus-password-2' }, { name: 'Gus', isAdmin: true }]) {
    const r = await gus.request('PATCH', `/users/${id}`, { json });
    t.is(r.status, 403, JSON.stringify(json));
  }
  const after = await gus.get<UserView>('/user/me');
  t.false(after.json.isAdmin);
  t.is(after.json.username, 'gus');
});

test('users admin PATCH and PUT change only the given fields, including isAdmin and password', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const id = await h.createUser('hal');
  const admin = await h.admin();
  const put = await admin.request('PUT', `/users/${id}`, { json: { email: 'hal@corp.example' } });
  t.deepEqual(put.json, { id, username: 'hal', name: 'hal person', email: 'hal@corp.example', isAdmin: false });
  const patch = await admin.request<UserView>('PATCH', `/users/${id}`, {
    json: { username: 'hal9000', isAdmin: true, newPassword: 'hal-password-2' },
  });
  t.is(patch.status, 200);
  t.is(patch.json.username, 'hal9000');
  t.true(patch.json.isAdmin);
  t.is((await h.client().post('/user/login', { username: 'hal9000', password: 'hal-password-2' })).status, 200);
});

test('users the last admin cannot lose isAdmin (409)', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const admin = await h.admin();
  const me = await admin.get<UserView>('/user/me');
  const r = await admin.request('PATCH', `/users/${me.json.id}`, { json: { isAdmin: false } });
  t.is(r.status, 409);
});

test('users a password shorter than 8 is refused, and the error says so', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const admin = await h.admin();
  const r = await admin.post<ProblemBody>('/users', { username: 'ivy', password: 'short', name: 'Ivy', email: 'ivy@example.com' });
  t.is(r.status, 400);
  t.deepEqual(r.json.errors, [{ path: '/body/password', message: 'must NOT have fewer than 8 characters' }]);
  const pw = await admin.post<ProblemBody>('/user/password', { oldPassword: ADMIN_PASSWORD, newPassword: '1234567' });
  t.is(pw.status, 400);
  t.is(pw.json.errors[0]?.path, '/body/newPassword');
});

test('users change password with a wrong old password is 400 and changes nothing', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const admin = await h.admin();
  const r = await admin.post<ProblemBody>('/user/password', { oldPassword: 'not-the-password', newPassword: 'new-password-1' });
  t.is(r.status, 400);
  t.is(r.json.errors[0]?.path, '/body/oldPassword');
  t.is((await h.client().post('/user/login', { username: 'admin', password: ADMIN_PASSWORD })).status, 200);
});

test('users unknown id is 404, a malformed id is 400', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const admin = await h.admin();
  const missing = await admin.get<ProblemBody>('/users/00000000-0000-4000-8000-000000000000');
  t.is(missing.status, 404);
  t.is(missing.json.code, 'NOT_FOUND');
  const bad = await admin.get<ProblemBody>('/users/not-a-uuid');
  t.is(bad.status, 400);
  t.is(bad.json.errors[0]?.path, '/params/userId');
});

test('users the password hash never appears in any response', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const id = await h.createUser('jo');
  const admin = await h.admin();
  const jo = await h.login('jo', 'jo-password');
  const replies: Reply[] = [
    await h.client().post('/user/login', { username: 'jo', password: 'jo-password' }),
    await admin.get('/users'),
    await admin.get(`/users/${id}`),
    await admin.request('PATCH', `/users/${id}`, { json: { name: 'Jo J', newPassword: 'jo-password-2' } }),
    await jo.get('/user/me'),
    await admin.get('/openapi.json'),
  ];
  const hashes = (await h.store.list<UserSpec>(Kind.User)).map((u) => u.spec.passwordHash);
  for (const r of replies) {
    t.false(/passwordHash|scrypt\$/.test(r.text), r.text.slice(0, 80));
    for (const hash of hashes) t.false(r.text.includes(hash.split('$')[5] ?? hash));
  }
});

test('bootstrap without ADMIN_PASSWORD generates one, prints it once and stores it owner-only', async (t) => {
  const h = await startHarness({ adminPassword: null });
  t.teardown(() => h.close());
  const file = join(h.stateDir, 'admin-password');
  const password = (await readFile(file, 'utf8')).trim();
  t.is((await stat(file)).mode & 0o777, 0o600);
  t.true(password.length >= 16);
  t.is(h.printed.length, 1);
  t.true(h.printed[0]?.includes(password));
  t.false(
    h.logged.some((l) => JSON.stringify(l).includes(password)),
    'never in the log',
  );
  t.is((await h.client().post('/user/login', { username: 'admin', password })).status, 200);
});

test('bootstrap creates no admin when users exist, and ADMIN_PASSWORD is then ignored', async (t) => {
  const store = await createMemoryStore();
  const first = await startHarness({ store, keepStateDir: true });
  await first.close();
  const second = await startHarness({ store, stateDir: first.stateDir, adminPassword: 'another-password' });
  t.teardown(() => second.close());
  t.is((await store.list(Kind.User)).length, 1);
  t.is(second.printed.length, 0);
  t.is((await second.client().post('/user/login', { username: 'admin', password: ADMIN_PASSWORD })).status, 200);
});
