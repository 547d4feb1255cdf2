// POST /gateways/rgw/users without the loops: the route declares the user and waits for the
// key pair to be stored; it answers 202 when that takes too long, and hands a secret out once.
import test from 'ava';
import type { AreaContext } from '../../src/http/app.js';
import { Inventory } from '../../src/services/inventory.js';
import { Invocations } from '../../src/services/invocations.js';
import { RgwUsers } from '../../src/services/rgw-users.js';
import { gatewayRoutes } from '../../src/http/routes/gateways.js';
import { StorageKind, rgwUserId } from '../../src/model/storage-kinds.js';
import type { Store } from '../../src/store/types.js';
import { waitFor } from '../lab/harness.js';
import { startHarness, type Harness } from './harness.js';
import type { ProblemBody } from './bodies.js';

function harness(waitMs: number): Promise<Harness> {
  const area = (ctx: AreaContext) => {
    const inventory = new Inventory(ctx.store);
    return gatewayRoutes({
      store: ctx.store,
      inventory,
      invocations: new Invocations(ctx.store, inventory),
      users: new RgwUsers(ctx.store, ctx.clock, waitMs),
    });
  };
  return startHarness({ areas: [area] });
}

/** What the rgw-user loop's run stores once RGW made the user. */
const issue = (store: Store, userId: string, n = 1) =>
  store.create({
    kind: StorageKind.RgwUserSecret,
    id: rgwUserId(userId),
    name: userId,
    spec: { userId, accessKey: `AK${n}` },
    status: { secretKey: `SECRET${n}`, shownAt: null },
  });

test('rgw users: without keys in time the answer is 202, and the same request later gets them once', async (t) => {
  const h = await harness(30);
  t.teardown(() => h.close());
  const c = await h.admin();
  const body = { userId: 'bob', displayName: 'Bob' };
  const first = await c.post('/gateways/rgw/users', body);
  t.is(first.status, 202);
  t.deepEqual(first.json, { status: 'scheduled' });
  t.is(
    (await c.post<ProblemBody>('/gateways/rgw/users', { ...body, displayName: 'Robert' })).json.code,
    'RGW_USER_EXISTS',
    'another spec is refused',
  );
  await issue(h.store, 'bob');
  const second = await c.post('/gateways/rgw/users', body);
  t.is(second.status, 201);
  t.deepEqual(second.json, { userId: 'bob', displayName: 'Bob', keys: [{ accessKey: 'AK1', secretKey: 'SECRET1' }] });
  const third = await c.post<ProblemBody>('/gateways/rgw/users', body);
  t.is(third.status, 409);
  t.regex(third.json.detail, /shown once/);
  t.false(third.text.includes('SECRET1'));
});

test('rgw users: a creation waiting for the loop answers as soon as the keys are stored', async (t) => {
  const h = await harness(10_000);
  t.teardown(() => h.close());
  const c = await h.admin();
  const pending = c.post<{ keys: unknown }>('/gateways/rgw/users', { userId: 'carol', displayName: 'Carol', email: 'carol@example.com' });
  await waitFor('user declared', () => h.store.get(StorageKind.RgwUser, rgwUserId('carol')));
  await issue(h.store, 'carol', 2);
  const r = await pending;
  t.is(r.status, 201);
  t.deepEqual(r.json.keys, [{ accessKey: 'AK2', secretKey: 'SECRET2' }]);
});

test('rgw users: of two racing requests for the same user, only one sees the secret', async (t) => {
  const h = await harness(30);
  t.teardown(() => h.close());
  const c = await h.admin();
  await issue(h.store, 'dave', 3);
  const body = { userId: 'dave', displayName: 'Dave' };
  const replies = await Promise.all([c.post('/gateways/rgw/users', body), c.post('/gateways/rgw/users', body)]);
  t.deepEqual(replies.map((r) => r.status).sort(), [201, 409]);
  t.is(replies.filter((r) => r.text.includes('SECRET3')).length, 1);
});

test('rgw users: the list shows access keys only, to every user', async (t) => {
  const h = await harness(30);
  t.teardown(() => h.close());
  const c = await h.admin();
  await c.post('/gateways/rgw/users', { userId: 'erin', displayName: 'Erin' });
  await h.store.updateStatus(StorageKind.RgwUser, rgwUserId('erin'), { phase: 'ready', accessKey: 'AK9' });
  await h.createUser('reader');
  const reader = await h.login('reader', 'reader-password');
  for (const who of [c, reader]) {
    t.deepEqual((await who.get('/gateways/rgw/users')).json, [
      { userId: 'erin', displayName: 'Erin', keys: [{ accessKey: 'AK9' }], state: 'ready', message: '' },
    ]);
  }
  t.is((await reader.post('/gateways/rgw/users', { userId: 'frank', displayName: 'Frank' })).status, 403);
  await t.throwsAsync(
    () => h.store.updateStatus(StorageKind.RgwUser, rgwUserId('erin'), { phase: 'ready', secretKey: 'x' }),
    undefined,
    'the schema keeps secrets out of a user',
  );
});
