// One line per event, JSON, to stderr: machine-readable for operators' log shippers. pino
// writes the lines (levels, serialization); the rest of Quarry sees only the `Logger` function
// type below, so nothing else imports it. Fields whose names say they hold a secret are masked
// here, before pino sees them, the one place every log line passes.
// A line written while an HTTP request is handled carries that request's id (`requestId`), the
// same id its answer's X-Request-Id header and problem+json body show (docs/api-conventions.md,
// "Request ids").
import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import { pino } from 'pino';

export const LEVELS = ['debug', 'info', 'warn', 'error'] as const;
export type Level = (typeof LEVELS)[number];
export type Logger = (level: Level, message: string, fields?: Record<string, unknown>) => void;

const SECRET = /pass(word)?|secret|token|key(ring)?|credential|cookie|authorization/i;

export function redact(fields: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) {
    if (SECRET.test(k)) out[k] = '***';
    else if (v instanceof Error) out[k] = v.message;
    else if (v && typeof v === 'object' && !Array.isArray(v)) out[k] = redact(v as Record<string, unknown>);
    else out[k] = v;
  }
  return out;
}

/** Who makes a change, for the audit trail (docs/api-conventions.md, "Audit"): a user, an API
 * token (`<user>/<token name>`), a spec file (its path), or Quarry itself (a loop, an agent). */
export interface Actor {
  type: 'user' | 'token' | 'file' | 'system';
  name: string;
}

/** The request whose handling is under way, if any, and who acts. One store for the process: it
 * is how Node carries a value through every await of one request without passing it by hand. */
interface RequestScope {
  requestId?: string;
  actor?: Actor;
}
const scope = new AsyncLocalStorage<RequestScope>();

/** Runs `fn` as part of the request `requestId`: log lines and spec writes inside say so. */
export const inRequest = <T>(requestId: string, fn: () => T): T => scope.run({ requestId }, fn);

/** Runs `fn` as `actor` (inside the current request, if any): the store's audit trail records
 * the changes made inside as theirs. */
export const asActor = <T>(actor: Actor, fn: () => T): T => {
  // Not `{ ...scope.getStore(), actor }`: that shape lands in V8's old generation (route.ts says
  // why), and every agent report passes here.
  const requestId = scope.getStore()?.requestId;
  return scope.run(requestId === undefined ? { actor } : { requestId, actor }, fn);
};

/** Who acts here, or null (then the store records Quarry itself). */
export const currentActor = (): Actor | null => scope.getStore()?.actor ?? null;

/** Runs `fn` outside any request: for work a request only wakes (store watchers, loops), which
 * would otherwise carry that request's id for as long as it lives. */
export const outsideRequest = <T>(fn: () => T): T => scope.exit(fn);

/** The id of the request being handled here, or null. */
export const currentRequestId = (): string | null => scope.getStore()?.requestId ?? null;

/** What a client may choose as its request id: 1–128 characters of letters, digits and
 * `-_.:@/+=`, so it can go into a header, a log line and a query without quoting. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** A client's X-Request-Id when it is sane (kept as sent), else null (the caller makes one). */
export function acceptRequestId(header: unknown): string | null {
  const value = Array.isArray(header) ? (header as unknown[])[0] : header;
  return typeof value === 'string' && SAFE_REQUEST_ID.test(value) ? value : null;
}

export const newRequestId = (): string => randomUUID();

/** The logger, with the current request's id added to each line written during a request
 * (a line that names its own requestId keeps it). */
export function withRequestIds(logger: Logger): Logger {
  return (level, message, fields) => {
    const requestId = currentRequestId();
    if (requestId === null || (fields && 'requestId' in fields)) logger(level, message, fields);
    else logger(level, message, { ...fields, requestId });
  };
}

/** Lines at `min` and above, one JSON object each (`time`, `level`, `message`, the fields), to
 * `write` (stderr by default, synchronously: a line written just before an exit is not lost). */
export function createLogger(min: Level = 'info', write?: (line: string) => void): Logger {
  const out = pino(
    {
      level: min,
      base: null,
      messageKey: 'message',
      timestamp: pino.stdTimeFunctions.isoTime,
      // The level's name, not pino's number: what LOG_LEVEL and the log shippers speak.
      formatters: { level: (label) => ({ level: label }) },
    },
    write ? { write } : pino.destination({ dest: 2, sync: true }),
  );
  return withRequestIds((level, message, fields) => {
    if (!out.isLevelEnabled(level)) return;
    if (fields) out[level](redact(fields), message);
    else out[level](message);
  });
}

export const silentLogger: Logger = () => {};
