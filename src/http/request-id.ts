// Every request gets an id: the client's X-Request-Id when it is sane, else a new one. The
// answer carries it back (header, and `requestId` in a problem+json body); every log line the
// request's handling writes carries it (AsyncLocalStorage, src/log.ts); a spec the request
// writes records it, and so do the task runs its loops start for that generation, and their
// task.state.changed events. One id finds the request, its log lines and what it started.
import type { Context, Middleware } from 'koa';
import { acceptRequestId, inRequest, newRequestId, type Level, type Logger } from '../log.js';
import { isAgent, type Caller } from './auth/index.js';

export const REQUEST_ID_HEADER = 'X-Request-Id';

const READS = new Set(['GET', 'HEAD', 'OPTIONS']);
const PROBES = new Set(['/healthz', '/readyz', '/leaderz']);

/** The request id of this request (set by requestIds before anything else runs). */
export const requestIdOf = (ctx: Context): string | null => (ctx.state as { requestId?: string }).requestId ?? null;

/** How loud a finished request is: a failure is a warning (refused) or an error (5xx); a change
 * a user made is news; reads, and the agents' steady calls, are detail. A 401 is routine (an
 * access token that expired: agents and browsers refresh and ask again), and so is a read of
 * something that is not there. A probe's 503 (not ready, not the leader) is its answer, not a
 * failure: load balancers ask every few seconds, and the controller logs its own state changes. */
export function requestLogLevel(method: string, status: number, agent: boolean, path = ''): Level {
  if (PROBES.has(path)) return 'debug';
  if (status >= 500) return 'error';
  if (status === 401 || (status === 404 && READS.has(method))) return 'info';
  if (status >= 400) return 'warn';
  return READS.has(method) || agent ? 'debug' : 'info';
}

export function requestIds(logger: Logger): Middleware {
  return async (ctx, next) => {
    const requestId = acceptRequestId(ctx.get(REQUEST_ID_HEADER) || undefined) ?? newRequestId();
    (ctx.state as { requestId?: string }).requestId = requestId;
    ctx.set(REQUEST_ID_HEADER, requestId);
    const started = Date.now();
    await inRequest(requestId, async () => {
      try {
        await next();
      } finally {
        const caller = (ctx.state as { principal?: Caller | null }).principal ?? null;
        const who = caller
          ? isAgent(caller)
            ? { agent: caller.nodeId }
            : { user: caller.user.username, ...(caller.token ? { via: caller.token.name } : {}) }
          : {};
        const code = (ctx.state as { problemCode?: string }).problemCode;
        logger(requestLogLevel(ctx.method, ctx.status, isAgent(caller), ctx.path), 'request', {
          requestId,
          method: ctx.method,
          // The path only: a query may hold S3 keys or a signed link's signature.
          route: ctx.path,
          status: ctx.status,
          ...(code ? { code } : {}),
          ...who,
          durationMs: Date.now() - started,
        });
      }
    });
  };
}
