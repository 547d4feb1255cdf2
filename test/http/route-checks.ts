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
