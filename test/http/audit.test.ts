// GET /audit over real HTTP: changes made by a user and by an API token are recorded with their
// actor and request id; admins only; filters; bad filters refused.
import test, { type ExecutionContext } from 'ava';
import type { AuditEntrySpec } from '../../src/model/audit-kinds.js';
import { ManualClock } from '../../src/model/clock.js';
import { createMemoryStore } from '../../src/store/index.js';
import { startHarness, type Harness } from './harness.js';
import { createToken } from './route-checks.js';
import type { ProblemBody } from './bodies.js';

type Entry = AuditEntrySpec & { id: string };

async function auditHarness(t: ExecutionContext): Promise<Harness> {
  // One clock for the app and the store: entries' times follow it.
  const clock = new ManualClock(Date.now());
  const h = await startHarness({ clock, store: await createMemoryStore({ clock, auditMaxEntries: 1000 }) });
  t.teardown(async () => {
    await h.close();
    await h.store.close();
  });
  return h;
}

test('audit a change by a user and one by an API token are recorded with who, what, generations, fields and request id', async (t) => {
  const h = await auditHarness(t);
  const admin = await h.admin();
  const bobId = await h.createUser('bob');
  const byUser = await admin.request('PATCH', `/users/${bobId}`, { json: { name: 'Robert' }, headers: { 'x-request-id': 'rename-bob-1' } });
  t.is(byUser.status, 200);
  const { token } = await createToken(admin, { name: 'ci', scope: 'write' });
  const byToken = await h.client().request('PATCH', `/users/${bobId}`, {
    json: { email: 'robert@example.com' },
    headers: { authorization: `Bearer ${token}`, 'x-request-id': 'rename-bob-2' },
  });
  t.is(byToken.status, 200);
  const r = await admin.get<{ entries: Entry[] }>(`/audit?objectId=${bobId}`);
  t.is(r.status, 200);
  const [second, first, created] = r.json.entries;
  t.like(second, {
    actor: { type: 'token', name: 'admin/ci' },
    action: 'update',
    kind: 'User',
    objectId: bobId,
    objectName: 'bob',
    generationBefore: 2,
    generationAfter: 3,
    changedFields: ['/email'],
    requestId: 'rename-bob-2',
  });
  t.like(first, {
    actor: { type: 'user', name: 'admin' },
    generationBefore: 1,
    generationAfter: 2,
    changedFields: ['/name'],
    requestId: 'rename-bob-1',
  });
  t.like(created, { action: 'create', actor: { type: 'user', name: 'admin' }, generationBefore: null, generationAfter: 1 });
  t.true(second!.id > first!.id, 'newest first');
  // A field's change is named, never its value: not even a password hash's.
  const pw = await admin.request('PATCH', `/users/${bobId}`, { json: { newPassword: 'another-password' } });
  t.is(pw.status, 200);
  const latest = (await admin.get<{ entries: Entry[] }>(`/audit?objectId=${bobId}&limit=1`)).json.entries[0];
  t.deepEqual(latest?.changedFields, ['/passwordHash']);
  const all = (await admin.get('/audit?limit=1000')).text;
  t.false(all.includes('scrypt$'));
  t.false(all.includes(token));
});

test('audit is for admins only; an admin read token may read it', async (t) => {
  const h = await auditHarness(t);
  await h.createUser('bob');
  const bob = await h.login('bob', 'bob-password');
  const refused = await bob.get<ProblemBody>('/audit');
  t.is(refused.status, 403);
  t.is(refused.json.code, 'FORBIDDEN');
  const bobToken = await createToken(bob, { name: 'bobs', scope: 'read' });
  t.is((await h.client().get('/audit', { headers: { authorization: `Bearer ${bobToken.token}` } })).status, 403);
  const adminToken = await createToken(await h.admin(), { name: 'auditor', scope: 'read' });
  const ok = await h.client().get<{ entries: Entry[] }>('/audit', { headers: { authorization: `Bearer ${adminToken.token}` } });
  t.is(ok.status, 200);
  t.true(ok.json.entries.length >= 1);
});

test('audit filters by kind, object, actor, time and limit, newest first', async (t) => {
  const h = await auditHarness(t);
  const admin = await h.admin();
  const bobId = await h.createUser('bob');
  const start = h.clock.now();
  h.clock.advance(60_000);
  const later = new Date(h.clock.now()).toISOString();
  const carolId = await h.createUser('carol');
  const { token } = await createToken(admin, { name: 'ci', scope: 'write' });
  await h.client().request('PATCH', `/users/${carolId}`, { json: { name: 'Carol C' }, headers: { authorization: `Bearer ${token}` } });
  const get = async (q: string) => (await admin.get<{ entries: Entry[] }>(`/audit?${q}`)).json.entries;
  const users = await get('kind=User');
  t.true(users.every((e) => e.kind === 'User'));
  t.true(users.length >= 4, 'bob, carol, carol renamed, and the first admin');
  t.deepEqual(
    (await get(`objectId=${bobId}`)).map((e) => e.action),
    ['create'],
  );
  t.deepEqual(
    (await get('actor=admin/ci')).map((e) => e.objectId),
    [carolId],
  );
  t.deepEqual(
    (await get('actor=token:admin/ci')).map((e) => e.objectId),
    [carolId],
  );
  t.deepEqual(await get('actor=user:admin/ci'), []);
  const since = await get(`since=${encodeURIComponent(later)}`);
  t.deepEqual(
    since.map((e) => `${e.action} ${e.kind} ${e.objectName}`),
    ['update User carol', 'create ApiToken admin/ci', 'create User carol'],
  );
  t.true(since.every((e) => e.at === later));
  t.true(Date.parse(later) > start);
  const two = await get('limit=2');
  t.is(two.length, 2);
  t.deepEqual(
    two.map((e) => e.id),
    [...two.map((e) => e.id)].sort().reverse(),
  );
  t.deepEqual(await get('kind=Disk'), []);
});

test('audit refuses bad filters with 400 problem+json', async (t) => {
  const h = await auditHarness(t);
  const admin = await h.admin();
  for (const q of [
    'limit=0',
    'limit=1001',
    'limit=ten',
    'since=yesterday',
    'since=2026-13-45T00:00:00Z',
    'kind=No%20de',
    'objectId=',
    'actor=',
    'other=1',
  ]) {
    const r = await admin.get<ProblemBody>(`/audit?${q}`);
    t.is(r.status, 400, q);
    t.is(r.json.code, 'VALIDATION_FAILED', q);
    t.is(r.headers.get('content-type'), 'application/problem+json', q);
  }
});
