// What two controllers sharing one store (issue #18) must agree on about sessions and API tokens,
// written once and run twice: over a memory store (test/http/controllers-auth.test.ts) and over
// a real etcd (test/main/auth-etcd.test.ts). Nothing here waits a fixed time: a test waits for
// the condition itself (a session-end listener, or asking again until the answer changes).
import type { ExecutionContext } from 'ava';
import type { Auth } from '../../src/http/auth/index.js';
import { Kind } from '../../src/model/kinds.js';
import type { Store } from '../../src/store/types.js';
import { Client } from './client.js';

export interface Controller {
  url: string;
  auth: Auth;
}

export interface TwoControllers {
  a: Controller;
  b: Controller;
  store: Store;
  adminPassword: string;
}

/** The session an access cookie belongs to (its `sid` claim). */
function sessionOf(c: Client): string {
  const payload = (c.jar.get('access_token') ?? '').split('.')[1] ?? '';
  return (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { sid: string }).sid;
}

/** Resolves once `on` has seen the session (or `token:<id>`) end; register before the ending. */
function endSeen(on: Controller, sessionId: string): Promise<void> {
  return new Promise((resolve) => {
    const off = on.auth.liveness.onEnd((id) => {
      if (id !== sessionId) return;
      off();
      resolve();
    });
  });
}

/** Asks until `ok` holds; the bound only turns a hang into a failure naming `what`. */
async function until(what: string, ok: () => Promise<boolean> | boolean, tries = 4000): Promise<void> {
  for (let i = 0; !(await ok()); i++) {
    if (i >= tries) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

async function login(p: TwoControllers, on: Controller): Promise<Client> {
  const c = new Client(on.url);
  const r = await c.post('/user/login', { username: 'admin', password: p.adminPassword });
  if (r.status !== 200) throw new Error(`login: ${r.status} ${r.text}`);
  return c;
}

const status = async (c: Client, method: string, path: string): Promise<number> => (await c.request(method, path)).status;

export async function sessionStartedAfterOtherStarted(t: ExecutionContext, p: TwoControllers): Promise<void> {
  const onA = await login(p, p.a);
  const onB = onA.clone(p.b.url);
  const me = await onB.get<{ id: string }>('/user/me');
  t.is(me.status, 200, 'at once: a session B has not heard of yet is looked up in the store');
  await until("B's index holding the session", () => p.b.auth.sessions.isActive(sessionOf(onA), me.json.id));
  t.is(await status(onB, 'GET', '/user/me'), 200);
}

export async function logoutSeenByOther(t: ExecutionContext, p: TwoControllers): Promise<void> {
  const onA = await login(p, p.a);
  const onB = onA.clone(p.b.url);
  t.is(await status(onB, 'GET', '/user/me'), 200);
  const ended = endSeen(p.b, sessionOf(onA));
  t.is(await status(onA, 'POST', '/user/logout'), 200);
  await ended;
  t.is(await status(onB, 'GET', '/user/me'), 401, 'B refuses the logged-out session');
  t.is(await status(onB, 'POST', '/user/refresh'), 401);
}

export async function refreshOnOneThenOther(t: ExecutionContext, p: TwoControllers): Promise<void> {
  const onB = (await login(p, p.a)).clone(p.b.url);
  t.is(await status(onB, 'POST', '/user/refresh'), 200, 'refreshed on B');
  const onA = onB.clone(p.a.url);
  t.is(await status(onA, 'POST', '/user/refresh'), 200, "then on A with B's new refresh token: no replay");
  t.is(await status(onA, 'GET', '/user/me'), 200);
  t.is(await status(onA.clone(p.b.url), 'GET', '/user/me'), 200);
}

export async function sameRefreshTokenAtOnce(t: ExecutionContext, p: TwoControllers): Promise<void> {
  const first = await login(p, p.a);
  const sessionId = sessionOf(first);
  const ended = [endSeen(p.a, sessionId), endSeen(p.b, sessionId)];
  const clients = [first.clone(p.a.url), first.clone(p.b.url)];
  const answers = await Promise.all(clients.map((c) => c.post('/user/refresh')));
  t.deepEqual(answers.map((r) => r.status).sort(), [200, 401], 'exactly one rotates');
  t.is(await p.store.get(Kind.Session, sessionId), undefined, 'and the reuse ended the session');
  await Promise.all(ended);
  const winner = clients[answers.findIndex((r) => r.status === 200)]!;
  t.is(await status(winner, 'POST', '/user/refresh'), 401, "the winner's new refresh token dies with the session");
  for (const url of [p.a.url, p.b.url]) t.is(await status(winner.clone(url), 'GET', '/user/me'), 401);
}

export async function apiTokenAcrossControllers(t: ExecutionContext, p: TwoControllers): Promise<void> {
  const onA = await login(p, p.a);
  const created = await onA.post<{ id: string; token: string }>('/user/tokens', { name: 'two-controllers', scope: 'read' });
  t.is(created.status, 201, created.text);
  const onB = new Client(p.b.url);
  const bearer = { headers: { authorization: `Bearer ${created.json.token}` } };
  await until('B accepting the token', async () => (await onB.get('/user/me', bearer)).status === 200);
  const ended = endSeen(p.b, `token:${created.json.id}`);
  t.is(await status(onA, 'DELETE', `/user/tokens/${created.json.id}`), 204);
  await ended;
  t.is((await onB.get('/user/me', bearer)).status, 401, 'B refuses the revoked token');
}

/** Every scenario, by the title part the test files give it. */
export const scenarios: Record<string, (t: ExecutionContext, p: TwoControllers) => Promise<void>> = {
  'a session started on A after B started is accepted on B': sessionStartedAfterOtherStarted,
  'a logout on A is refused on B': logoutSeenByOther,
  'a refresh on B, then on A with the new token, both succeed': refreshOnOneThenOther,
  'one refresh token sent to A and B at once: one succeeds and the session ends': sameRefreshTokenAtOnce,
  'an API token created on A works on B, and revoked on A is refused on B': apiTokenAcrossControllers,
};
