// Every error leaves as RFC 9457 problem details. Quarry's error classes carry their status and
// code; the parsers' own errors (http-errors from raw-body and co-body) are translated; anything
// else is a 500 whose detail says nothing but a reference to the server log line, because a
// message may hold paths, command lines or a stack.
import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Context, Middleware } from 'koa';
import { InputError, QuarryError, ServiceUnavailableError, type FieldError } from '../errors.js';
import type { IdGen } from '../model/clock.js';
import { MAX_FIELD_ERRORS, ValidationError } from '../model/validate.js';
import { newRequestId, type Logger } from '../log.js';

export const PROBLEM_TYPE = 'application/problem+json';

export class UnsupportedMediaTypeError extends QuarryError {
  constructor(expected: string) {
    super(`this operation takes ${expected}`, 415, 'UNSUPPORTED_MEDIA_TYPE');
  }
}

export class MethodNotAllowedError extends QuarryError {
  constructor(
    method: string,
    readonly allow: string[],
  ) {
    super(`${method} is not allowed here; allowed: ${allow.join(', ')}`, 405, 'METHOD_NOT_ALLOWED');
  }
}

export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: string;
  errors?: FieldError[];
  /** How many field errors there were in all; `errors` lists the first MAX_FIELD_ERRORS. */
  errorCount?: number;
  /** The request's id (its X-Request-Id header): the log lines of the request carry it. */
  requestId?: string;
}

/** A detail longer than this is cut: whatever a message quotes, the answer stays small. */
const MAX_DETAIL = 1000;

const problemType = (code: string): string => `urn:quarry:problem:${code.toLowerCase().replace(/_/g, '-')}`;

export function problem(status: number, code: string, detail: string, errors?: FieldError[], errorCount?: number): Problem {
  const listed = errors ? { errors: errors.slice(0, MAX_FIELD_ERRORS), errorCount: Math.max(errorCount ?? 0, errors.length) } : {};
  const cut = detail.length > MAX_DETAIL ? `${detail.slice(0, MAX_DETAIL)}…` : detail;
  return { type: problemType(code), title: STATUS_CODES[status] ?? 'Error', status, detail: cut, code, ...listed };
}

/** The parsers throw http-errors: `{ status, expose, type }`. Their messages are not shown. */
function fromParser(err: { status: number; type?: unknown }): QuarryError {
  if (err.status === 413) return new QuarryError('request body is larger than 1 MiB', 413, 'PAYLOAD_TOO_LARGE');
  if (err.status === 415) return new UnsupportedMediaTypeError('a supported encoding and charset');
  if (err.status === 400) return new InputError('request body is not valid JSON', [{ path: '/body', message: 'malformed JSON' }]);
  return new QuarryError(STATUS_CODES[err.status] ?? 'bad request', err.status, 'BAD_REQUEST');
}

/** http-errors say `expose`; co-body's malformed-JSON SyntaxError only gets `status = 400`
 * (and `body`, the raw text, which may hold a password: it is never shown or logged). */
const isParserError = (err: unknown): err is { status: number } => {
  const e = err as { status?: unknown; expose?: unknown } | null;
  const clientSide = typeof e?.status === 'number' && e.status >= 400 && e.status < 500;
  return clientSide && !(err instanceof QuarryError) && (e.expose === true || err instanceof SyntaxError);
};

/** What was thrown, for a log line: anything may be thrown (null, a string), so nothing is assumed. */
const thrown = (err: unknown): { message?: unknown; stack?: unknown } =>
  (err as { message?: unknown; stack?: unknown } | null | undefined) ?? {};

/** The client-facing form of an error, or null when it must be hidden (5xx). */
export function classify(err: unknown): QuarryError | null {
  const known = err instanceof QuarryError ? err : isParserError(err) ? fromParser(err) : null;
  return known && (known.status < 500 || known instanceof ServiceUnavailableError) ? known : null;
}

function respond(ctx: Context, body: Problem): void {
  const state = ctx.state as { requestId?: string; problemCode?: string };
  ctx.status = body.status;
  ctx.body = JSON.stringify(state.requestId ? { ...body, requestId: state.requestId } : body);
  ctx.type = PROBLEM_TYPE;
  // For the request's log line (request-id.ts): the code says why it was refused.
  state.problemCode = body.code;
}

export function errorMiddleware(logger: Logger, ids: IdGen): Middleware {
  return async (ctx, next) => {
    try {
      await next();
    } catch (err) {
      const known = classify(err);
      if (ctx.headerSent) {
        logger('warn', 'error after the response started', { method: ctx.method, route: ctx.path, error: thrown(err).message });
        return;
      }
      if (known) {
        // RateLimitedError, and a 503 that knows when to ask again (TEMPLATE_BUSY).
        const retry = (known as { retryAfterSeconds?: unknown }).retryAfterSeconds;
        if (typeof retry === 'number') ctx.set('Retry-After', String(retry));
        if (known instanceof MethodNotAllowedError) ctx.set('Allow', known.allow.join(', '));
        const count = known instanceof ValidationError ? known.errorCount : undefined;
        respond(ctx, problem(known.status, known.code, known.message, known instanceof InputError ? known.errors : undefined, count));
        return;
      }
      const reference = ids();
      logger('error', 'request failed', {
        method: ctx.method,
        route: ctx.path,
        reference,
        error: String(thrown(err).message ?? err),
        stack: thrown(err).stack,
      });
      respond(ctx, problem(500, 'INTERNAL', `internal error; the server log has the details under reference ${reference}`));
    }
  };
}

/** Node's HTTP parser refuses some requests before koa sees them (headers over 16 KiB, a
 * malformed request line): they get a problem+json answer too, and the connection closes. */
export function clientErrorHandler(err: Error & { code?: string }, socket: Duplex): void {
  if (err.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, code, detail] =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'HEADERS_TOO_LARGE', 'the request line and headers are larger than 16 KiB']
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'REQUEST_TIMEOUT', 'the request did not arrive in time']
        : [400, 'BAD_REQUEST', 'the request is not valid HTTP'];
  // Koa never saw it: the request id is made here, as the app would have.
  const requestId = newRequestId();
  const body = JSON.stringify({ ...problem(status, code, detail), requestId });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${PROBLEM_TYPE}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Request-Id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
  );
}
