// The dashboard's session (src/ui/api.ts) against a stand-in fetch: one refresh at a time (a
// refresh token is single-use, and two refreshes with the same one would end the session), a 401
// refreshed once and asked again, a refused refresh ending the session.
import test from 'ava';
import { ApiError, Session } from '../../src/ui/api.js';

interface Call {
  method: string;
  path: string;
}

/** Answers by path; `gate` holds the refresh answers until released. */
function fakeFetch(answers: Record<string, Array<{ status: number; body?: unknown }>>) {
  const calls: Call[] = [];
  let release: () => void = () => undefined;
  const gate = new Promise<void>((r) => (release = r));
  // The page asks by path only (same origin): a string.
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const path = typeof input === 'string' ? input : input instanceof URL ? input.pathname : input.url;
    calls.push({ method: init?.method ?? 'GET', path });
    if (path === '/user/refresh') await gate;
    const queue = answers[path] ?? [];
    const a = queue.length > 1 ? queue.shift()! : (queue[0] ?? { status: 404, body: { status: 404, code: 'NOT_FOUND' } });
    return new Response(a.body === undefined ? null : JSON.stringify(a.body), { status: a.status });
  };
  return { calls, fetch, release };
}

const real = globalThis.fetch;
test.afterEach.always(() => {
  globalThis.fetch = real;
});

const user = { id: 'u1', username: 'admin', name: 'Admin', isAdmin: true };

test.serial('ui session two refreshes at once send one request, and both learn its answer', async (t) => {
  const f = fakeFetch({
    '/user/refresh': [{ status: 200, body: { accessToken: 'x', expiresIn: 900 } }],
    '/user/logout': [{ status: 200 }],
  });
  globalThis.fetch = f.fetch;
  const s = new Session();
  const both = Promise.all([s.refresh(), s.refresh()]);
  f.release();
  t.deepEqual(await both, [true, true]);
  t.is(f.calls.filter((c) => c.path === '/user/refresh').length, 1);
  await s.logout();
});

test.serial('ui session a 401 is refreshed once and asked again; the second answer counts', async (t) => {
  const f = fakeFetch({
    '/user/me': [{ status: 200, body: user }],
    '/nodes': [
      { status: 401, body: { status: 401, code: 'UNAUTHENTICATED' } },
      { status: 200, body: [{ id: 'n1' }] },
    ],
    '/user/refresh': [{ status: 200, body: { accessToken: 'x', expiresIn: 900 } }],
    '/user/logout': [{ status: 200 }],
  });
  f.release();
  globalThis.fetch = f.fetch;
  const s = new Session();
  t.deepEqual(await s.resume(), user);
  t.deepEqual(await s.get('/nodes'), [{ id: 'n1' }]);
  t.deepEqual(
    f.calls.filter((c) => c.path === '/nodes').map((c) => c.method),
    ['GET', 'GET'],
  );
  t.is(s.user?.username, 'admin', 'still logged in');
  await s.logout();
});

test.serial('ui session a refused refresh ends the session: listeners hear null, the read fails with the problem', async (t) => {
  const f = fakeFetch({
    '/user/me': [{ status: 200, body: user }],
    '/status': [{ status: 401, body: { status: 401, code: 'UNAUTHENTICATED', detail: 'session expired' } }],
    '/user/refresh': [
      { status: 200, body: { accessToken: 'x', expiresIn: 900 } },
      { status: 401, body: { status: 401 } },
    ],
  });
  f.release();
  globalThis.fetch = f.fetch;
  const s = new Session();
  const heard: Array<string | null> = [];
  s.onChange((u) => heard.push(u?.username ?? null));
  await s.resume(); // its first refresh (learning the token's life) succeeds
  const err = await t.throwsAsync(s.get('/status'), { instanceOf: ApiError });
  t.is(err.problem.code, 'UNAUTHENTICATED');
  t.deepEqual(heard, ['admin', null]);
  t.is(s.user, null);
});

test.serial('ui session a refused login is an ApiError with the server detail, and nobody is logged in', async (t) => {
  const f = fakeFetch({
    '/user/login': [{ status: 401, body: { status: 401, code: 'UNAUTHENTICATED', detail: 'wrong username or password' } }],
  });
  f.release();
  globalThis.fetch = f.fetch;
  const s = new Session();
  const err = await t.throwsAsync(s.login('admin', 'nope'), { instanceOf: ApiError });
  t.is(err.message, 'wrong username or password');
  t.is(s.user, null);
  t.false(
    f.calls.some((c) => c.path === '/user/refresh'),
    'a refused login is not retried through a refresh',
  );
});
