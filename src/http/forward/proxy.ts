// A follower's answer to a request only the leader can answer (RouteDef.leader): the request,
// relayed to the leader as it came (method, path and query, headers, the body streamed unread),
// and the leader's answer relayed back as it comes (status, headers, a body that may never end:
// /events, the agents' long-polls). The leader authenticates and validates the request itself;
// this controller has read nothing of it but the route it matched. Node's http client rather
// than fetch: it leaves bodies and encodings alone (fetch would decode a gzip answer and keep its
// Content-Encoding), and its streams carry back-pressure both ways.
import { Agent as HttpAgent, request as httpRequest, type ClientRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { pipeline } from 'node:stream';
import { urlToHttpOptions } from 'node:url';
import type { Context, Middleware } from 'koa';
import { ServiceUnavailableError } from '../../errors.js';
import type { Logger } from '../../log.js';
import type { LeaderView } from '../../model/leadership.js';
import { plainAddress } from '../client-address.js';
import { REQUEST_ID_HEADER, requestIdOf } from '../request-id.js';
import { FORWARDED_BY_HEADER, claimsOf, type ForwardMarker } from './marker.js';

/** 503 NOT_LEADER: ask again in a second, when an election is over or a leader is reachable. */
export class NotLeaderError extends ServiceUnavailableError {
  readonly retryAfterSeconds = 1;
  constructor(detail: string) {
    super(detail, 'NOT_LEADER');
  }
}

/** Headers about one connection, not the message (RFC 9110 7.6.1), and Host, which names the
 * server the client reached: none of them is relayed either way. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'upgrade', 'te', 'trailer', 'host']);

/** A copy of `headers` without the hop-by-hop ones, proxy-*, and those Connection names. */
export function endToEnd(headers: IncomingHttpHeaders): Record<string, string | string[]> {
  const named = new Set((headers.connection ?? '').split(',').map((h) => h.trim().toLowerCase()));
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || name.startsWith('proxy-') || named.has(name)) continue;
    out[name] = value;
  }
  return out;
}

export interface ForwardOptions {
  leader: LeaderView;
  marker: ForwardMarker;
  logger: Logger;
  /** How long a connection to the leader may take before the request is answered 503. */
  connectTimeoutMs?: number;
}

// One connection per forwarded request: a kept-alive socket the leader has just closed would fail
// a request whose body is already streamed and cannot be sent again.
const AGENTS = { http: new HttpAgent({ keepAlive: false }), https: new HttpsAgent({ keepAlive: false }) };

/** Serves a leader-only route here when this controller leads, else relays it to the leader. */
export function leaderForwarding(opts: ForwardOptions): Middleware {
  return async (ctx, next) => {
    if (opts.leader.isLeader()) {
      await next();
      return;
    }
    // Two controllers that each believe the other leads would pass a request back and forth.
    if (ctx.get(FORWARDED_BY_HEADER)) throw new NotLeaderError('this controller does not lead either; retry');
    const base = opts.leader.leaderUrl();
    if (base === null) throw new NotLeaderError('no controller leads right now; retry');
    await relay(ctx, base, opts);
  };
}

function requestHeaders(ctx: Context, marker: ForwardMarker): Record<string, string | string[]> {
  const headers = endToEnd(ctx.req.headers);
  const prior = ctx.get('X-Forwarded-For');
  const peer = plainAddress(ctx.req.socket.remoteAddress ?? '');
  headers['x-forwarded-for'] = prior ? `${prior}, ${peer}` : peer;
  headers['x-forwarded-proto'] = ctx.protocol;
  // The same id on both controllers' log lines; the leader keeps it (request-id.ts).
  headers[REQUEST_ID_HEADER.toLowerCase()] = requestIdOf(ctx) ?? '';
  headers[FORWARDED_BY_HEADER.toLowerCase()] = marker.header(ctx, claimsOf(ctx));
  return headers;
}

/** Resolves once the leader's answer has begun to flow back; rejects (503) when there is none. */
function relay(ctx: Context, base: string, opts: ForwardOptions): Promise<void> {
  const unreachable = (leader: string, error: string): NotLeaderError => {
    // The address is for the log; the caller hears only that the leader was not reached.
    opts.logger('warn', 'the leader could not be reached', { leader, error });
    return new NotLeaderError('the leading controller could not be reached; retry');
  };
  const leader = URL.parse(base);
  if (!leader || (leader.protocol !== 'http:' && leader.protocol !== 'https:'))
    return Promise.reject(unreachable(base, 'not an http(s) URL'));
  const https = leader.protocol === 'https:';
  const send = https ? httpsRequest : httpRequest;
  // The request target exactly as it came: a URL would normalise it (dot segments, %2e), and the
  // leader must see the path this controller matched (and the marker signs).
  const path = `${leader.pathname.replace(/\/+$/, '')}${ctx.originalUrl}`;
  return new Promise<void>((resolve, reject) => {
    const agent = AGENTS[https ? 'https' : 'http'];
    const upstream = send({ ...urlToHttpOptions(leader), path, method: ctx.method, headers: requestHeaders(ctx, opts.marker), agent });
    let answered = false;
    const fail = (err: Error): void => {
      if (answered) return;
      answered = true;
      ctx.req.unpipe(upstream);
      // A caller that hung up first is owed nothing, and the leader was not at fault.
      if (ctx.req.socket.destroyed) {
        ctx.status = 499; // "client closed request" (nginx's), for the log line: no answer was sent
        ctx.respond = false;
        resolve();
      } else reject(unreachable(leader.origin, err.message));
    };
    upstream.on('error', fail);
    connectDeadline(upstream, opts.connectTimeoutMs ?? 5_000);
    // The caller going away ends the leader's side too: its long-poll or event stream stops.
    ctx.res.once('close', () => upstream.destroy());
    upstream.on('response', (answer) => {
      answered = true;
      answerWith(ctx, answer, upstream);
      resolve();
    });
    ctx.req.pipe(upstream);
  });
}

function connectDeadline(upstream: ClientRequest, ms: number): void {
  upstream.once('socket', (socket) => {
    if (!socket.connecting) return;
    const timer = setTimeout(() => upstream.destroy(new Error(`no connection within ${ms} ms`)), ms);
    socket.once('connect', () => clearTimeout(timer));
    socket.once('close', () => clearTimeout(timer));
  });
}

/** The leader's status, headers and body, straight onto the response: koa's body handling is
 * bypassed (as for /events, sse/handler.ts) so the caller's back-pressure reaches the leader. */
function answerWith(ctx: Context, answer: IncomingMessage, upstream: ClientRequest): void {
  const status = answer.statusCode ?? 502;
  ctx.status = status; // for the request's log line and metrics; the head is written below
  ctx.respond = false;
  // Headers already set here (X-Request-Id, nosniff) are kept unless the leader set them too.
  ctx.res.writeHead(status, endToEnd(answer.headers));
  if (/^text\/event-stream/i.test(answer.headers['content-type'] ?? '')) {
    // Idle between events by design: no idle timeout, no Nagle delay on small frames.
    ctx.req.socket.setTimeout(0);
    ctx.req.socket.setNoDelay(true);
  }
  // A leader that dies mid-answer cuts the caller's connection: a truncated body must not look
  // complete. The caller hanging up ends the leader's side.
  pipeline(answer, ctx.res, (err) => {
    if (err) {
      upstream.destroy();
      ctx.res.destroy();
    }
  });
}

/** A leader-only route's middleware: forwarding first, so a request relayed to the leader is
 * neither authenticated nor parsed here (the leader does both, on the body as it came). */
export function leaderFirst(path: string, forward: Middleware, compiled: Middleware): Middleware {
  return async (ctx, next) => {
    // The route's template labels the request's metrics whether it is served here or relayed.
    (ctx.state as { route?: string }).route = path;
    await forward(ctx, async () => {
      await compiled(ctx, next);
    });
  };
}
