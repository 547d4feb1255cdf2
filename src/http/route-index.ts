// The route table, indexed by the first segment of the path. @koa/router tries every route's
// pattern in turn and composes the matched layers for each request: with ~100 routes that was
// a sizeable share of an authenticated GET's cost in Quarry's own code (bench/api-get.ts). Every
// route's path starts with a literal segment (`/nodes/...`, `/ceph/...`), and a request can only
// match routes that share it, so each segment gets a router of its own and a request is matched
// against its area's few routes. The order rule stays @koa/router's ('specificity'), applied
// within the area, which holds every route that could match.
import Router from '@koa/router';
import type { Middleware } from 'koa';

export interface IndexedRoute {
  /** A @koa/router path (`/nodes/:nodeId`). */
  path: string;
  method: string;
  middleware: Middleware;
}

/** The first segment of a path, lower-cased: @koa/router matches without regard to case. */
export function firstSegment(path: string): string {
  const end = path.indexOf('/', 1);
  return (end < 0 ? path.slice(1) : path.slice(1, end)).toLowerCase();
}

/** Dispatches a request to the router of its path's first segment; a segment no route starts
 * with goes straight on to `next` (the 404/405 fallback). */
export function indexedRoutes(routes: readonly IndexedRoute[]): Middleware {
  const areas = new Map<string, Router>();
  for (const r of routes) {
    const segment = firstSegment(r.path);
    if (segment === '' || segment.startsWith(':')) throw new Error(`route ${r.method} ${r.path}: the first path segment must be literal`);
    let router = areas.get(segment);
    if (!router) areas.set(segment, (router = new Router({ exclusive: 'specificity' })));
    router.register(r.path, [r.method], r.middleware);
  }
  const dispatch = new Map<string, Middleware>([...areas].map(([segment, router]) => [segment, router.routes() as Middleware]));
  return (ctx, next) => {
    const area = dispatch.get(firstSegment(ctx.path));
    return area ? (area(ctx, next) as Promise<void>) : next();
  };
}
