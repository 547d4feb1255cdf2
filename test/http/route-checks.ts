// Checks shared by the route-table tests of the bare HTTP app and of the whole of Quarry.
import type { ExecutionContext } from 'ava';
import type { AnyRoute } from '../../src/http/route.js';
import { Client } from './client.js';
import type { ProblemBody } from './bodies.js';

const ANY_ID = '00000000-0000-4000-8000-000000000000';
export const fill = (path: string): string => path.replace(/\{[^}]+\}/g, ANY_ID);

/** Every non-public route answers 401 UNAUTHENTICATED with no cookie and with a forged one. */
export async function assertPrivateRoutesRefuse(t: ExecutionContext, routes: readonly AnyRoute[], base: string): Promise<number> {
  const garbage = new Client(base);
  garbage.jar.set('access_token', 'eyJhbGciOiJIUzI1NiJ9.e30.x');
  const privateRoutes = routes.filter((x) => !x.public);
  for (const r of privateRoutes) {
    const opts = r.method === 'GET' ? {} : { json: {} };
    for (const c of [new Client(base), garbage]) {
      const reply = await c.request<ProblemBody | undefined>(r.method, fill(r.path), opts);
      t.is(reply.status, 401, `${r.method} ${r.path}`);
      t.is(reply.json?.code, 'UNAUTHENTICATED', `${r.method} ${r.path}`);
    }
  }
  return privateRoutes.length;
}

/** The API tokens the token matrix calls every route with. */
export interface MatrixTokens {
  read: string;
  write: string;
  revoked: string;
  /** Called once the other three have been tried on every route: makes `expired` expire (moves
   * the clock past it). */
  expire: () => Promise<void> | void;
  expired: string;
}

/** Status, code and detail of one request with `Authorization: Bearer`; an event stream is
 * judged by its status and dropped. */
async function bearerCall(base: string, r: AnyRoute, token: string): Promise<{ status: number; code?: string; detail?: string }> {
  const abort = new AbortController();
  const res = await fetch(new URL(fill(r.path), base), {
    method: r.method,
    headers: { authorization: `Bearer ${token}`, ...(r.method === 'GET' ? {} : { 'content-type': 'application/json' }) },
    ...(r.method === 'GET' ? {} : { body: '{}' }),
    signal: abort.signal,
    redirect: 'manual',
  });
  if ((res.headers.get('content-type') ?? '').includes('event-stream')) {
    abort.abort();
    return { status: res.status };
  }
  const text = await res.text();
  const json = (/json/.test(res.headers.get('content-type') ?? '') && text ? JSON.parse(text) : {}) as ProblemBody;
  return { status: res.status, code: json.code, detail: json.detail };
}

/**
 * The auth matrix with API tokens, over every user route (not public, signed or S3): a revoked
 * and an expired token are 401; a read token is 403 (read-only) on every route that changes
 * something and passes authentication on the rest; a write token always passes authentication
 * (it may still be the wrong sort of caller: 403 on agent routes, for admins only, ...).
 */
export async function assertTokenMatrix(
  t: ExecutionContext,
  routes: readonly AnyRoute[],
  base: string,
  tokens: MatrixTokens,
): Promise<number> {
  const userRoutes = routes.filter((x) => !x.public && !x.signed && !x.s3);
  const readOnlyRefusal = /read-only/;
  for (const r of userRoutes) {
    const name = `${r.method} ${r.path}`;
    const revoked = await bearerCall(base, r, tokens.revoked);
    t.is(revoked.status, 401, `${name} with a revoked token`);
    t.is(revoked.code, 'UNAUTHENTICATED', `${name} with a revoked token`);
    const read = await bearerCall(base, r, tokens.read);
    t.not(read.status, 401, `${name} with a read token`);
    if (r.method === 'GET' || r.readOnly) t.false(readOnlyRefusal.test(read.detail ?? ''), `${name}: a read token may call it`);
    else {
      t.is(read.status, 403, `${name} with a read token`);
      // An agent route refuses every user first.
      if (r.agent !== true) t.regex(read.detail ?? '', readOnlyRefusal, `${name} with a read token`);
    }
    const write = await bearerCall(base, r, tokens.write);
    t.not(write.status, 401, `${name} with a write token`);
    t.false(readOnlyRefusal.test(write.detail ?? ''), `${name} with a write token`);
  }
  await tokens.expire();
  for (const r of userRoutes) {
    const expired = await bearerCall(base, r, tokens.expired);
    t.is(expired.status, 401, `${r.method} ${r.path} with an expired token`);
    t.is(expired.code, 'UNAUTHENTICATED', `${r.method} ${r.path} with an expired token`);
  }
  return userRoutes.length;
}

/** A token of the client's user through the API (fails the test's setup on a non-201). */
export async function createToken(
  c: Client,
  body: { name: string; scope: 'read' | 'write'; expiresInDays?: number },
): Promise<{ id: string; token: string }> {
  const r = await c.post<{ id: string; token: string }>('/user/tokens', body);
  if (r.status !== 201) throw new Error(`POST /user/tokens: ${r.status} ${r.text}`);
  return r.json;
}

/** The four tokens of the matrix, made by `c`'s user; `advance` moves the server's clock. */
export async function matrixTokens(c: Client, advance: (ms: number) => void): Promise<MatrixTokens> {
  const read = await createToken(c, { name: 'matrix-read', scope: 'read', expiresInDays: 3650 });
  const write = await createToken(c, { name: 'matrix-write', scope: 'write', expiresInDays: 3650 });
  const revoked = await createToken(c, { name: 'matrix-revoked', scope: 'write', expiresInDays: 3650 });
  const expired = await createToken(c, { name: 'matrix-expired', scope: 'write', expiresInDays: 1 });
  const del = await c.request('DELETE', `/user/tokens/${revoked.id}`);
  if (del.status !== 204) throw new Error(`DELETE /user/tokens: ${del.status} ${del.text}`);
  return {
    read: read.token,
    write: write.token,
    revoked: revoked.token,
    expired: expired.token,
    expire: () => advance(24 * 3600_000 + 1000),
  };
}
