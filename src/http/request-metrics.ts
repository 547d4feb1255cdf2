// Each finished request, told to an observer (src/metrics counts them): method, the route's
// template (`/nodes/{nodeId}`, set by the route layer; `unmatched` for a path no route knows,
// never the raw URL, so a scanner cannot make a series per path), status and duration.
import type { Middleware } from 'koa';

export interface RequestObserver {
  requestDone(method: string, route: string, status: number, seconds: number): void;
}

export const UNMATCHED_ROUTE = 'unmatched';

export function observeRequests(observer: RequestObserver): Middleware {
  return async (ctx, next) => {
    const t0 = performance.now();
    try {
      await next();
    } finally {
      const route = (ctx.state as { route?: string }).route ?? UNMATCHED_ROUTE;
      observer.requestDone(ctx.method, route, ctx.status, (performance.now() - t0) / 1000);
    }
  };
}
