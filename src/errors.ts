// The named error classes of Quarry. Each carries the HTTP status and the stable machine
// `code` (the table in docs/api-conventions.md, "Errors"), so the HTTP layer maps them without
// knowing where they came from.

export interface FieldError {
  path: string;
  message: string;
}

export class QuarryError extends Error {
  readonly status: number;
  readonly code: string;
  constructor(message: string, status: number, code: string, options?: ErrorOptions) {
    super(message, options);
    this.name = new.target.name;
    this.status = status;
    this.code = code;
  }
}

/** Bad input: a body or parameter that fails its schema, an unknown operation. */
export class InputError extends QuarryError {
  readonly errors: FieldError[];
  constructor(message: string, errors: FieldError[] = [], code = 'VALIDATION_FAILED') {
    super(message, 400, code);
    this.errors = errors;
  }
}

export class AuthError extends QuarryError {
  constructor(message = 'missing, invalid or expired credentials') {
    super(message, 401, 'UNAUTHENTICATED');
  }
}

export class ForbiddenError extends QuarryError {
  constructor(message = 'not allowed for this user') {
    super(message, 403, 'FORBIDDEN');
  }
}

export class NotFoundError extends QuarryError {
  constructor(message: string) {
    super(message, 404, 'NOT_FOUND');
  }
}

/** A stale resourceVersion, or a state that refuses the request (IMAGE_IS_DEFAULT, ...). */
export class ConflictError extends QuarryError {
  constructor(message: string, code = 'CONFLICT') {
    super(message, 409, code);
  }
}

export class PayloadTooLargeError extends QuarryError {
  constructor(message = 'request body is larger than the limit') {
    super(message, 413, 'PAYLOAD_TOO_LARGE');
  }
}

export class RateLimitedError extends QuarryError {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number, message = 'too many failed attempts') {
    super(message, 429, 'RATE_LIMITED');
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** The request is fine but what it reads does not exist yet (no monitor quorum, no metrics):
 * the one 5xx whose message is meant for the client, and says when to ask again. */
export class ServiceUnavailableError extends QuarryError {
  constructor(message: string, code = 'UNAVAILABLE') {
    super(message, 503, code);
  }
}

/** The code of the store away for a moment (etcd electing, a member gone): retried by whoever
 * hit it, so logged as a warning, not an error. */
export const STORE_UNAVAILABLE = 'STORE_UNAVAILABLE';

export const storeUnavailable = (err: unknown): boolean => err instanceof ServiceUnavailableError && err.code === STORE_UNAVAILABLE;

/** A reconcile or task failure that retrying cannot fix; the loop stops backing off. */
export class TerminalError extends QuarryError {
  constructor(message: string, options?: ErrorOptions) {
    super(message, 500, 'TERMINAL', options);
  }
}

/** A command that exited non-zero, timed out or was aborted. `stderr` is kept for logs, never
 * for HTTP answers (a 5xx never shows internals). */
export class CommandError extends QuarryError {
  readonly command: string;
  readonly exitCode: number | null;
  readonly stderr: string;
  readonly signal: string | null;
  constructor(command: string, exitCode: number | null, stderr: string, signal: string | null = null) {
    const why = signal ? `killed by ${signal}` : `exited with ${exitCode}`;
    super(`${command} ${why}${stderr ? `: ${lastLine(stderr)}` : ''}`, 500, 'COMMAND_FAILED');
    this.command = command;
    this.exitCode = exitCode;
    this.stderr = stderr;
    this.signal = signal;
  }
}

function lastLine(text: string): string {
  const lines = text.trim().split('\n');
  return (lines[lines.length - 1] ?? '').slice(0, 300);
}
