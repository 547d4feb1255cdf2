// The Runner that runs real commands, and the only file of Quarry that imports zx.
//
// zx always goes through a shell. The command line is built by zx's own quoting of an array
// (`$'...'`, bash ANSI-C quoting), never by joining strings, and prefixed with `exec` so the
// shell replaces itself: the pid we hold is the command's, and signals reach it directly.
import type * as ZxModule from 'zx';
import type { ProcessOutput, ProcessPromise } from 'zx';
import { CommandError } from '../errors.js';
import { LineSplitter, secretMasker } from './lines.js';
import { groupAlive } from './processes.js';
import { displayCommand, isSecret, type Arg, type RunOptions, type RunOutput, type Runner } from './runner.js';

export interface ZxRunnerOptions {
  /** How long a process gets between SIGTERM and SIGKILL. */
  killGraceMs?: number;
  /** A bash-compatible shell; zx's quoting needs one. */
  shell?: string;
}

const DEFAULT_GRACE_MS = 5_000;
/** How long past SIGKILL a stopped command's group may take to go. Only a process stuck in the
 * kernel (uninterruptible I/O) outlives SIGKILL; the error is reported then anyway. */
const AFTER_KILL_MS = 5_000;
const POLL_MS = 10;
const noop = (): void => undefined;

type Zx = typeof ZxModule;
/** Loaded at the first command, not at start-up: ~4 MB of heap that a master which has run
 * nothing yet (a lab, a cluster still without monitors) does not need. */
const zx = (): Promise<Zx> => import('zx');

/** Why a process was stopped before it finished on its own. */
type StopReason = { kind: 'timeout'; ms: number } | { kind: 'abort' };

export class ZxRunner implements Runner {
  private readonly graceMs: number;
  private readonly shell: string | undefined;

  constructor(opts: ZxRunnerOptions = {}) {
    this.graceMs = opts.killGraceMs ?? DEFAULT_GRACE_MS;
    this.shell = opts.shell;
  }

  async run(cmd: string, args: Arg[], opts: RunOptions): Promise<RunOutput> {
    assertDeadline(opts.timeoutMs);
    const z = await zx();
    const shown = displayCommand(cmd, args);
    const mask = secretMasker(args);
    if (opts.signal?.aborted) throw stoppedError(shown, { kind: 'abort' }, null, null, '');

    const proc = this.spawn(z, cmd, args, opts);
    const streams = attachLines(proc, opts, mask);
    const killer = new Killer(proc.pid, this.graceMs);
    const timer = setTimeout(() => killer.stop({ kind: 'timeout', ms: opts.timeoutMs }), opts.timeoutMs);
    const onAbort = (): void => killer.stop({ kind: 'abort' });
    opts.signal?.addEventListener('abort', onAbort, { once: true });
    let out: ProcessOutput;
    try {
      out = await proc;
      clearTimeout(timer);
      // The command's end is not its group's: a child that closed its output, or ignored
      // SIGTERM, is still running. An error that says "killed" is true when the caller reads it,
      // so a retry never runs beside what is left of the first try.
      if (killer.reason) await killer.groupGone();
    } finally {
      clearTimeout(timer);
      killer.settled();
      opts.signal?.removeEventListener('abort', onAbort);
      streams.flush();
    }
    return result(shown, out, killer, mask);
  }

  private spawn({ $, quote }: Zx, cmd: string, args: Arg[], opts: RunOptions): ProcessPromise {
    const argv = args.map((a) => (isSecret(a) ? a.secret : a));
    const input = opts.input;
    const hasInput = input !== undefined && input.length > 0;
    return $({
      shell: this.shell ?? (typeof $.shell === 'string' ? $.shell : 'bash'),
      quote,
      prefix: '',
      postfix: '',
      quiet: true,
      verbose: false,
      nothrow: true,
      // Its own process group, so a kill reaches whatever the command started too.
      detached: true,
      log: noop as unknown as typeof $.log,
      cwd: opts.cwd,
      env: opts.env ? { ...process.env, ...opts.env } : process.env,
      // Without input, stdin is closed: a command that reads it must not wait for a deadline.
      ...(hasInput ? { input } : { stdio: ['ignore', 'pipe', 'pipe'] as const }),
    })`exec ${cmd} ${argv}`;
  }
}

/** A deadline must be a positive, finite number of milliseconds: a call without one is the
 * way a controller hangs forever. */
function assertDeadline(ms: unknown): asserts ms is number {
  if (typeof ms !== 'number' || !Number.isFinite(ms) || ms <= 0) {
    throw new TypeError(`timeoutMs must be a positive number of milliseconds, got ${String(ms)}`);
  }
}

function attachLines(proc: ProcessPromise, opts: RunOptions, mask: (s: string) => string): { flush(): void } {
  const onLine = opts.onLine;
  if (!onLine) return { flush: noop };
  const out = new LineSplitter((line) => onLine('stdout', mask(line)));
  const err = new LineSplitter((line) => onLine('stderr', mask(line)));
  // zx's proc.stdout is `this.child?.stdout`, typed as always there; the child's own streams
  // say what they are (absent before the spawn, null when not piped).
  proc.child?.stdout?.on('data', (chunk: Buffer) => out.write(chunk));
  proc.child?.stderr?.on('data', (chunk: Buffer) => err.write(chunk));
  return {
    flush: () => {
      out.end();
      err.end();
    },
  };
}

/** SIGTERM first, SIGKILL after a grace period, to the whole process group. */
class Killer {
  reason: StopReason | null = null;
  lastSignal: NodeJS.Signals | null = null;
  private graceTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly pid: number | undefined,
    private readonly graceMs: number,
  ) {}

  stop(reason: StopReason): void {
    if (this.reason) return;
    this.reason = reason;
    this.send('SIGTERM');
    this.graceTimer = setTimeout(() => this.send('SIGKILL'), this.graceMs);
  }

  settled(): void {
    if (this.graceTimer) clearTimeout(this.graceTimer);
  }

  /** Resolves once no process of the group is left; SIGKILL still follows the grace meanwhile. */
  async groupGone(): Promise<void> {
    if (this.pid === undefined) return;
    const until = Date.now() + this.graceMs + AFTER_KILL_MS;
    while ((await groupAlive(this.pid)) && Date.now() < until) {
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }

  private send(signal: NodeJS.Signals): void {
    if (this.pid === undefined) return;
    this.lastSignal = signal;
    try {
      process.kill(-this.pid, signal);
    } catch {
      try {
        process.kill(this.pid, signal);
      } catch {
        // Already gone.
      }
    }
  }
}

function result(shown: string, out: ProcessOutput, killer: Killer, mask: (s: string) => string): RunOutput {
  const stderr = mask(out.stderr);
  if (killer.reason) {
    throw stoppedError(shown, killer.reason, out.exitCode, out.signal ?? killer.lastSignal, stderr);
  }
  if (out.exitCode !== 0) {
    // A spawn failure (missing cwd, missing shell) has no exit code and no stderr.
    const why = stderr || (out.cause ? mask(out.cause.message) : '');
    throw new CommandError(shown, out.exitCode, why);
  }
  return { stdout: out.stdout, stderr: out.stderr, exitCode: 0 };
}

function stoppedError(shown: string, reason: StopReason, exitCode: number | null, signal: string | null, stderr: string): CommandError {
  const err = new CommandError(shown, exitCode, stderr, signal ?? 'SIGTERM');
  const why = reason.kind === 'timeout' ? `timed out after ${reason.ms} ms` : 'aborted';
  // The class builds "killed by X"; the operator also needs to know why it was killed.
  err.message = signal ? `${shown} ${why} (killed by ${signal})` : `${shown} ${why} before it started`;
  return err;
}
