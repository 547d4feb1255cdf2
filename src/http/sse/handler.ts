// GET /events as a koa handler. koa's body handling is bypassed (ctx.respond = false) and the
// hub writes to the raw ServerResponse, so res.write()'s false and 'drain' reach the hub
// directly; a PassThrough body would add a buffer that hides a client which stopped reading.
import type { Middleware, ParameterizedContext } from 'koa';
import type { SseHub } from './hub.js';

export interface SseHandlerOptions {
  /** Reconnection delay suggested to clients (`retry:`). */
  retryMs?: number;
}

export function sseHandler(hub: SseHub, opts: SseHandlerOptions = {}): Middleware {
  return (ctx) => {
    openStream(hub, ctx, opts);
  };
}

/** Answers the request with an event stream fed by the hub; returns the function that ends it
 * from the server's side (a session that ended, a server that stops). */
export function openStream(hub: SseHub, ctx: ParameterizedContext, opts: SseHandlerOptions = {}): () => void {
  const preamble = `retry: ${opts.retryMs ?? 2000}\n\n`;
  const lastEventId = ctx.get('Last-Event-ID') || firstQueryValue(ctx.query['lastEventId']);
  ctx.status = 200; // for whatever logs ctx.status; the head itself is written below
  ctx.respond = false;
  quietDisconnects(ctx);
  const { req, res } = ctx;
  // Headers that upstream middleware set with ctx.set() are already on res and are kept.
  res.writeHead(200, {
    'Content-Type': 'text/event-stream; charset=utf-8',
    'Cache-Control': 'no-cache',
    Connection: 'keep-alive',
    'X-Accel-Buffering': 'no',
  });
  // A stream is idle between events by design: no idle timeout, and no Nagle delay on
  // the small frames (batching is the hub's job, with a known bound).
  req.socket.setTimeout(0);
  req.socket.setNoDelay(true);
  req.socket.setKeepAlive(true);
  // The hub listens for the response's 'close' itself and detaches then.
  const detach = hub.attach(res, { lastEventId, preamble });
  return () => {
    detach();
    if (!res.writableEnded) res.end();
  };
}

/**
 * A reader going away is how every event stream ends; koa would report the socket's
 * ECONNRESET as an application error. Anything else still goes to koa's handler.
 */
function quietDisconnects(ctx: ParameterizedContext): void {
  const report = ctx.onerror.bind(ctx);
  ctx.onerror = (err) => {
    const code = (err as { code?: unknown } | null)?.code;
    if (typeof code === 'string' && DISCONNECT_CODES.has(code)) return;
    report(err);
  };
}

const DISCONNECT_CODES = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'ERR_STREAM_PREMATURE_CLOSE']);

function firstQueryValue(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
