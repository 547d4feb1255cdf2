// The one seam through which Quarry runs commands. Arguments are arrays, never shell strings;
// every call has a deadline; output can stream line by line into a task run's log.

/** An argument that must never reach a log or an error message. */
export interface SecretArg {
  secret: string;
}
export type Arg = string | SecretArg;

export interface RunOptions {
  /** Hard deadline; the process is killed (SIGTERM, then SIGKILL) when it passes. */
  timeoutMs: number;
  signal?: AbortSignal;
  input?: string | Buffer;
  cwd?: string;
  env?: Record<string, string>;
  /** Each complete output line, as it arrives. */
  onLine?: (stream: 'stdout' | 'stderr', line: string) => void;
}

export interface RunOutput {
  stdout: string;
  stderr: string;
  exitCode: number;
}

export interface Runner {
  /** Rejects with CommandError on a non-zero exit, a timeout or an abort. */
  run(cmd: string, args: Arg[], opts: RunOptions): Promise<RunOutput>;
}

export const isSecret = (a: Arg): a is SecretArg => typeof a === 'object' && 'secret' in a;

/** The command line as it may be shown: secrets masked. */
export const displayCommand = (cmd: string, args: Arg[]): string =>
  [cmd, ...args.map((a) => (isSecret(a) ? '***' : /[\s'"\\$]/.test(a) ? JSON.stringify(a) : a))].join(' ');
