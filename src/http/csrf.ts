// Cross-site request refusal for state-changing methods. SameSite=Strict already keeps browsers
// from attaching the cookies; this is the second lock, for browsers or proxies that get that
// wrong. A browser always says where a request comes from (Origin, Sec-Fetch-Site); a request
// that says nothing (curl, scripts, agents) is not a browser and passes. The JSON content type
// rule of the route layer closes the HTML-form path, which cannot send application/json.
// A request with `Authorization: Bearer` passes too: a browser never adds that header by itself
// (a page's script cannot send it cross-site without a CORS preflight Quarry never grants), so
// whoever sent it held the credential, and such a request is judged by it, never by cookies.
import type { Middleware } from 'koa';
import { ForbiddenError } from '../errors.js';
import { hasBearer } from './auth/bearer.js';

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS']);

function originHost(origin: string): string | null {
  try {
    return new URL(origin).host.toLowerCase();
  } catch {
    return null; // "null" (sandboxed frames, file://) and garbage: not our origin
  }
}

export function crossSiteGuard(): Middleware {
  return (ctx, next) => {
    if (!SAFE.has(ctx.method) && !hasBearer(ctx)) {
      if (ctx.get('Sec-Fetch-Site').toLowerCase() === 'cross-site') throw new ForbiddenError('cross-site request refused');
      const origin = ctx.get('Origin');
      if (origin !== '' && originHost(origin) !== ctx.host.toLowerCase()) throw new ForbiddenError('cross-origin request refused');
    }
    return next();
  };
}
