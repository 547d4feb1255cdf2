// Runs the built `quarry` binary as a child process, as an operator's shell would, with its own
// config directory; and an in-process runner for the unit tests of the command tree.
import type { ExecutionContext } from 'ava';
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../../src/cli/run.js';

export const BIN = join(dirname(fileURLToPath(import.meta.url)), '../../src/cli/main.js');

export interface Ran {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** PATH and a home of the test's own; the coverage directory passes (c8 counts the child). */
const baseEnv = (home: string): Record<string, string> => ({
  PATH: process.env.PATH ?? '',
  HOME: home,
  XDG_CONFIG_HOME: home,
  ...(process.env.NODE_V8_COVERAGE ? { NODE_V8_COVERAGE: process.env.NODE_V8_COVERAGE } : {}),
});

/** A temporary XDG_CONFIG_HOME, removed after the test. */
export async function configHome(t: ExecutionContext): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'quarry-cli-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** The binary with these arguments; QUARRY_* from the test's environment never leak in. */
export function quarry(
  args: string[],
  opts: { home: string; env?: Record<string, string>; input?: string; timeoutMs?: number },
): Promise<Ran> {
  const env: Record<string, string> = { ...baseEnv(opts.home), ...opts.env };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 50_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
    child.stdin.end(opts.input ?? '');
  });
}

/** The binary left running (events -w): its output so far, and its exit. */
export function startQuarry(args: string[], opts: { home: string; env?: Record<string, string> }) {
  const env: Record<string, string> = { ...baseEnv(opts.home), ...opts.env };
  const child = spawn(process.execPath, [BIN, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  const got = { stdout: '', stderr: '' };
  child.stdout.on('data', (d: Buffer) => (got.stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (got.stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  return { child, got, exited };
}

/** The CLI in-process (no child): for unit tests against fakes. */
export async function runCli(args: string[], env: Record<string, string>): Promise<Ran> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run(args, {
    out: (s) => out.push(s),
    err: (s) => err.push(s),
    env,
    stdin: process.stdin,
  });
  return { code, stdout: out.join('\n'), stderr: err.join('\n') };
}
