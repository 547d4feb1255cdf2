// What a master-level script sees while it runs, and the Runner wrapper that makes every
// command it runs visible in the run's log.
import { displayCommand, type Arg, type RunOptions, type RunOutput, type Runner } from '../exec/runner.js';
import type { LogLevel, RunContext } from './types.js';

type Log = (level: LogLevel, message: string) => void;

/** Logs each command line (secrets masked) and its output lines, and ties every command to
 * the run's signal so a cancel or a timeout kills what the script is running. */
export function loggingRunner(inner: Runner, log: Log, runSignal: AbortSignal): Runner {
  return {
    async run(cmd: string, args: Arg[], opts: RunOptions): Promise<RunOutput> {
      log('info', `$ ${displayCommand(cmd, args)}`);
      const signal = opts.signal ? AbortSignal.any([runSignal, opts.signal]) : runSignal;
      const onLine = (stream: 'stdout' | 'stderr', line: string): void => {
        // The inner runner has masked secrets in the line already.
        log(stream === 'stdout' ? 'info' : 'warn', line);
        opts.onLine?.(stream, line);
      };
      try {
        return await inner.run(cmd, args, { ...opts, signal, onLine });
      } catch (err) {
        log('error', err instanceof Error ? err.message : String(err));
        throw err;
      }
    },
  };
}

export interface ContextParts {
  runId: string;
  args: Record<string, unknown>;
  signal: AbortSignal;
  runner: Runner;
  log: Log;
  ask: (prompt: string, options: string[]) => Promise<string>;
}

export function makeRunContext(parts: ContextParts): RunContext {
  const { runId, args, signal, runner, log, ask } = parts;
  return {
    runId,
    // A copy: the script must not change the args recorded in the run's spec.
    args: structuredClone(args),
    signal,
    log,
    runner: loggingRunner(runner, log, signal),
    ask,
  };
}
