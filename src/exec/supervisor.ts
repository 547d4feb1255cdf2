// Long-running processes (dnsmasq): spawned with an argument array and no shell, their pid
// held, their exit reported, stopped with SIGTERM and then SIGKILL. The Runner is for commands
// that finish; this is for daemons Quarry owns for as long as it runs.
import { spawn } from 'node:child_process';
import { LineSplitter } from './lines.js';

export interface ExitInfo {
  code: number | null;
  signal: string | null;
  /** Why it could not start at all (a missing binary), when that is why. */
  error?: string;
}

export interface SpawnOptions {
  env?: Record<string, string>;
  /** Each complete output line, as it arrives. */
  onLine?: (stream: 'stdout' | 'stderr', line: string) => void;
}

export interface Supervised {
  readonly pid: number;
  /** Settles once, when the process has exited (whoever stopped it). */
  readonly exited: Promise<ExitInfo>;
  /** SIGTERM, then SIGKILL after graceMs; resolves when it has exited. */
  stop(graceMs: number): Promise<ExitInfo>;
}

export interface ProcessSupervisor {
  spawn(cmd: string, args: string[], opts?: SpawnOptions): Supervised;
}

const signalName = (s: NodeJS.Signals | null): string | null => s ?? null;

export class NodeProcessSupervisor implements ProcessSupervisor {
  spawn(cmd: string, args: string[], opts: SpawnOptions = {}): Supervised {
    const child = spawn(cmd, args, {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: opts.env ? { ...process.env, ...opts.env } : process.env,
    });
    const lines = (stream: 'stdout' | 'stderr') => new LineSplitter((line) => opts.onLine?.(stream, line));
    const out = lines('stdout');
    const err = lines('stderr');
    child.stdout.on('data', (c: Buffer) => out.write(c));
    child.stderr.on('data', (c: Buffer) => err.write(c));
    let failed: string | undefined;
    const exited = new Promise<ExitInfo>((resolve) => {
      child.once('error', (e) => {
        failed = e.message;
        // A process that never started emits no 'close'.
        if (child.pid === undefined) resolve({ code: null, signal: null, error: failed });
      });
      child.once('close', (code, signal) => {
        out.end();
        err.end();
        resolve({ code, signal: signalName(signal), ...(failed ? { error: failed } : {}) });
      });
    });
    return {
      pid: child.pid ?? -1,
      exited,
      stop: async (graceMs) => {
        if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
          const info = await exited;
          clearTimeout(timer);
          return info;
        }
        return exited;
      },
    };
  }
}
