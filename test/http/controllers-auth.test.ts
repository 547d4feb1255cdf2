// Two controllers' apps over one memory store (issue #18): sessions and API tokens follow the
// store, and a refresh is the store's decision. The same scenarios run over a real etcd in
// test/main/auth-etcd.test.ts; the index's relist and the registry's compare-and-swap are
// tested here on their own.
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { AuthError } from '../../src/errors.js';
import { SessionRegistry } from '../../src/http/auth/sessions.js';
import { StoreIndex } from '../../src/http/auth/store-index.js';
import { newJti } from '../../src/http/auth/tokens.js';
import { silentLogger } from '../../src/log.js';
import { ManualClock } from '../../src/model/clock.js';
import { Kind, type SessionSpec } from '../../src/model/kinds.js';
import { createMemoryStore } from '../../src/store/index.js';
import type { Store, StoreEvent } from '../../src/store/types.js';
import { until } from '../store/helpers.js';
import { ADMIN_PASSWORD, startHarness } from './harness.js';
import { scenarios, type TwoControllers } from './two-controllers.js';

async function twoControllers(t: { teardown(fn: () => Promise<void>): void }): Promise<TwoControllers> {
  const store = await createMemoryStore();
  const clock = new ManualClock(Date.now());
  const [a, b] = [await startHarness({ store, clock }), await startHarness({ store, clock })];
  t.teardown(async () => {
    await a.close();
    await b.close();
    await store.close();
  });
  return { a: { url: a.base, auth: a.http.auth }, b: { url: b.base, auth: b.http.auth }, store, adminPassword: ADMIN_PASSWORD };
}

for (const [title, scenario] of Object.entries(scenarios)) {
  test(`two controllers ${title}`, async (t) => scenario(t, await twoControllers(t)));
}

test('two controllers one refresh token rotated by two registries at once: one rotates, the other finds it reused', async (t) => {
  const store = await createMemoryStore();
  t.teardown(() => store.close());
  const clock = new ManualClock(Date.now());
  const registries = [0, 1].map(() => new SessionRegistry(store, clock, silentLogger, 3600));
  await Promise.all(registries.map((r) => r.load()));
  t.teardown(() => registries.forEach((r) => r.close()));
  const user = randomUUID();
  const { sessionId, refreshJti } = await registries[0]!.start(user);
  const results = await Promise.allSettled(registries.map((r) => r.rotate(sessionId, user, refreshJti)));
  t.deepEqual(results.map((r) => r.status).sort(), ['fulfilled', 'rejected']);
  const refused = results.find((r) => r.status === 'rejected');
  t.true(refused?.reason instanceof AuthError);
  t.is(await store.get(Kind.Session, sessionId), undefined, 'the reuse ended the session');
  t.false(registries.some((r) => r.isActive(sessionId, user)));
});

test('two controllers a request reads no session from the store, but for one the index has not heard of, once', async (t) => {
  const store = await createMemoryStore();
  t.teardown(() => store.close());
  const reads: string[] = [];
  const get: Store['get'] = (kind, id) => {
    if (kind === Kind.Session) reads.push(id);
    return store.get(kind, id);
  };
  const counted = Object.assign(Object.create(store) as Store, { get });
  const clock = new ManualClock(Date.now());
  const a = await startHarness({ store, clock });
  t.teardown(() => a.close());
  const onA = await a.admin();
  const loggedOut = await a.admin();
  const ended = loggedOut.clone(); // its cookies, kept past the logout that clears them
  t.is((await loggedOut.post('/user/logout')).status, 200);
  // Started after that logout: its list never held the ended session.
  const b = await startHarness({ store: counted, clock });
  t.teardown(() => b.close());
  for (let i = 0; i < 3; i++) t.is((await onA.clone(b.base).get('/user/me')).status, 200);
  t.deepEqual(reads, [], 'a live session: the index answers');
  for (let i = 0; i < 3; i++) t.is((await ended.clone(b.base).get('/user/me')).status, 401);
  t.is(reads.length, 1, 'an ended one the index never held: one store read, then remembered');
});

/** A store whose watch the test can deafen, then tell that its history is lost. */
function losingHistory(store: Store): { store: Store; deafen: () => void; relist: () => void } {
  const handlers: Array<(e: StoreEvent) => void> = [];
  let deaf = false;
  const watch: Store['watch'] = (from, handler) => {
    handlers.push(handler);
    return store.watch(from, (e) => deaf || handler(e));
  };
  return {
    store: Object.assign(Object.create(store) as Store, { watch }),
    deafen: () => {
      deaf = true;
    },
    relist: () => {
      deaf = false;
      for (const h of handlers) h({ type: 'relist', revision: store.revision() });
    },
  };
}

test('store index after a relist holds what the store holds and reports what went', async (t) => {
  const inner = await createMemoryStore();
  t.teardown(() => inner.close());
  const { store, deafen, relist } = losingHistory(inner);
  const create = () =>
    inner.create<SessionSpec>({
      kind: Kind.Session,
      name: 's',
      spec: { userId: randomUUID(), refreshJti: newJti(), expiresAt: new Date().toISOString() },
    });
  const kept = await create();
  const dropped = await create();
  const removed: string[] = [];
  const index = new StoreIndex(
    store,
    Kind.Session,
    { read: (doc) => (doc.spec as SessionSpec).userId, removed: (id) => removed.push(id) },
    silentLogger,
  );
  await index.start();
  t.teardown(() => index.stop());
  t.deepEqual([...index.all()].map(([, userId]) => userId).sort(), [kept.spec.userId, dropped.spec.userId].sort());

  deafen();
  await inner.delete(Kind.Session, dropped.id);
  const added = await create();
  t.true(index.has(dropped.id), 'not heard yet');
  relist();
  await until(() => removed.length > 0, 'the list after the relist');
  t.deepEqual([...index.all()].map(([id]) => id).sort(), [kept.id, added.id].sort());
  t.deepEqual(removed, [dropped.id]);
  await inner.delete(Kind.Session, kept.id);
  t.false(index.has(kept.id), 'and it follows the watch again');
});
