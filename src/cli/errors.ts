// The CLI's failures, each with the exit code a script branches on (README "The quarry CLI"):
// 0 ok, 1 the server refused or an operation failed, 2 a usage error, 3 not converged before
// the timeout, 4 the server cannot be reached or nobody is logged in.
export const ExitCode = {
  ok: 0,
  failed: 1,
  usage: 2,
  notConverged: 3,
  unreachable: 4,
} as const;

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number = ExitCode.failed,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** An RFC 9457 problem document as Quarry answers it. */
export interface Problem {
  title?: string;
  status?: number;
  detail?: string;
  code?: string;
  errors?: Array<{ path?: string; message?: string; line?: number; column?: number }>;
  errorCount?: number;
  requestId?: string;
}

/** The server answered with a problem: its title, detail, errors and request id are shown. */
export class ServerError extends CliError {
  constructor(
    readonly status: number,
    readonly problem: Problem,
    exitCode: number = ExitCode.failed,
    /** What to do about it, printed last. */
    readonly hint?: string,
  ) {
    super(problem.detail ?? problem.title ?? `HTTP ${status}`, exitCode);
  }

  /** The lines printed for it: title and detail, each field error, the request id. */
  lines(): string[] {
    const p = this.problem;
    const head = `error: ${p.title ?? `HTTP ${this.status}`}${p.code ? ` (${p.code})` : ''}${p.detail ? `: ${p.detail}` : ''}`;
    const errors = (p.errors ?? []).map((e) => `  ${e.path ?? ''}${e.path ? ': ' : ''}${e.message ?? ''}`);
    const more = p.errorCount && p.errorCount > errors.length ? [`  … ${p.errorCount - errors.length} more`] : [];
    return [head, ...errors, ...more, ...(p.requestId ? [`request id: ${p.requestId}`] : []), ...(this.hint ? [this.hint] : [])];
  }
}

export class UsageError extends CliError {
  constructor(message: string) {
    super(message, ExitCode.usage);
  }
}

export class UnreachableError extends CliError {
  constructor(message: string) {
    super(message, ExitCode.unreachable);
  }
}

export class NotConvergedError extends CliError {
  constructor(message: string) {
    super(message, ExitCode.notConverged);
  }
}
