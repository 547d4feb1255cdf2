// A Runner that answers `ceph` and `radosgw-admin` from a SimCephCluster, so the real
// CephClient and RgwAdmin (their parsing, schemas and gate logic) run unchanged against the
// lab. What the CLI does before answering is simulated too: without quorum it cannot
// authenticate and gives up after --connect-timeout; a mgr verb waits for an active mgr until
// the caller's deadline kills it. Waiting goes through an injected sleep, so tests and the lab
// decide how long a simulated second takes.
import { setTimeout as delay } from 'node:timers/promises';
import { writeFile as fsWriteFile } from 'node:fs/promises';
import { CommandError } from '../../errors.js';
import type { CephClientOptions } from '../../clients/ceph.js';
import type { SimCephCluster } from './cluster.js';
import { CEPH_COMMANDS, type Command, type Reply } from './commands.js';
import { CephRefusal } from './errors.js';
import { stamp } from './model.js';
import { RGW_COMMANDS } from './rgw.js';

export interface SimCephRunnerOptions {
  /** Extra time each call takes, per verb ("osd pool create"); default 0. */
  latencyMs?: number | ((verb: string) => number);
  /** How the sim waits; default a real timer. Tests pass one that returns at once. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Where `mon getmap -o FILE` writes; default the real filesystem. */
  writeFile?: (path: string, data: Uint8Array) => Promise<void>;
  /** How often a waiting CLI looks again (quorum back? mgr active?); default 100 ms. */
  pollMs?: number;
}

// The Runner seam, reached through the client that consumes it: the lab may depend on clients
// but not on exec (test/architecture.test.ts).
type Runner = CephClientOptions['runner'];
type Arg = Parameters<Runner['run']>[1][number];
type RunOptions = Parameters<Runner['run']>[2];
type RunOutput = Awaited<ReturnType<Runner['run']>>;

const isSecret = (a: Arg): a is { secret: string } => typeof a === 'object' && a !== null && 'secret' in a;
/** The command line as exec's displayCommand shows it: secrets masked, odd words quoted. */
const displayCommand = (cmd: string, args: Arg[]): string =>
  [cmd, ...args.map((a) => (isSecret(a) ? '***' : /[\s'"\\$]/.test(a) ? JSON.stringify(a) : a))].join(' ');

const GLOBAL_FLAGS = new Set(['-c', '--conf', '--connect-timeout', '-n', '--name', '-k', '--keyring', '--format', '-f', '--cluster', '--id']);

export class SimCephRunner implements Runner {
  /** Every command line run, as a log would show it. */
  readonly calls: string[] = [];

  constructor(private readonly cluster: SimCephCluster, private readonly opts: SimCephRunnerOptions = {}) {}

  async run(cmd: string, args: Arg[], opts: RunOptions): Promise<RunOutput> {
    const shown = displayCommand(cmd, args);
    this.calls.push(shown);
    const plain = args.map((a) => (isSecret(a) ? a.secret : a));
    const { verb, connectSec, json } = parse(plain);
    const table = cmd === 'radosgw-admin' ? RGW_COMMANDS : cmd === 'ceph' ? CEPH_COMMANDS : null;
    if (!table) throw new CommandError(shown, 127, `${cmd}: command not found`);
    const clock = new Budget(opts, shown, this.sleep, this.opts.pollMs ?? 100);
    const latency = typeof this.opts.latencyMs === 'function' ? this.opts.latencyMs(verb.join(' ')) : (this.opts.latencyMs ?? 0);
    await clock.spend(latency);
    // radosgw-admin has no connect timeout: it hangs until the deadline.
    if (!(await clock.until(() => this.cluster.hasQuorum(), cmd === 'ceph' ? connectSec * 1000 : Infinity))) {
      const now = stamp(this.cluster.options.now());
      throw new CommandError(shown, 1,
        `${now} 7f5c2d7fa700  0 monclient(hunting): authenticate timed out after ${connectSec}\n[errno 110] RADOS timed out (error connecting to the cluster)\n`);
    }
    const command = table.find((c) => c.verb.every((w, i) => verb[i] === w));
    if (!command) return finish(shown, opts, { stdout: '', exitCode: 22, stderr: `no valid command found; 10 closest matches:\nError EINVAL: invalid command\n` });
    if (command.mgr) await clock.until(() => this.cluster.mgrs.available, Infinity);
    return finish(shown, opts, await this.answer(cmd, command, verb, opts, json));
  }

  private async answer(cmd: string, command: Command, verb: string[], opts: RunOptions, json: boolean): Promise<Reply> {
    try {
      return await command.run({
        cluster: this.cluster,
        args: verb.slice(command.verb.length),
        input: opts.input?.toString(),
        json,
        writeFile: this.opts.writeFile ?? ((p, d) => fsWriteFile(p, d)),
      });
    } catch (err) {
      if (!(err instanceof CephRefusal)) throw err;
      // radosgw-admin prints its own lines; the ceph CLI prefixes the errno's name.
      return { stdout: '', exitCode: err.errno, stderr: cmd === 'ceph' ? err.stderr : `${err.message}\n` };
    }
  }

  private readonly sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
    this.opts.sleep ? this.opts.sleep(ms, signal) : delay(ms, undefined, { ...(signal ? { signal } : {}), ref: false });
}

function parse(args: string[]): { verb: string[]; connectSec: number; json: boolean } {
  const verb: string[] = [];
  let connectSec = 0;
  let json = false;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    // Global flags come before the verb; after it every word belongs to the verb.
    if (verb.length === 0 && GLOBAL_FLAGS.has(a)) {
      const value = args[++i] ?? '';
      if (a === '--connect-timeout') connectSec = Number(value);
      if (a === '--format' || a === '-f') json = value.startsWith('json');
      continue;
    }
    verb.push(a);
  }
  // Without --connect-timeout the CLI waits for the mons as long as it is allowed to.
  return { verb, connectSec: connectSec > 0 ? connectSec : Infinity, json };
}

function finish(shown: string, opts: RunOptions, r: Reply): RunOutput {
  const stderr = r.stderr ?? '';
  if (opts.onLine) {
    for (const line of r.stdout.split('\n').filter((l) => l !== '')) opts.onLine('stdout', line);
    for (const line of stderr.split('\n').filter((l) => l !== '')) opts.onLine('stderr', line);
  }
  const exitCode = r.exitCode ?? 0;
  if (exitCode !== 0) throw new CommandError(shown, exitCode, stderr);
  return { stdout: r.stdout, stderr, exitCode: 0 };
}

/** The time a call has left before its deadline, spent in injected sleeps. */
class Budget {
  private spentMs = 0;

  constructor(
    private readonly opts: RunOptions,
    private readonly shown: string,
    private readonly sleep: (ms: number, signal?: AbortSignal) => Promise<void>,
    private readonly pollMs: number,
  ) {}

  /** Waits ms, or dies at the deadline (SIGTERM) or on abort, as a killed process would. */
  async spend(ms: number): Promise<void> {
    if (this.opts.signal?.aborted) throw this.killed('aborted');
    if (ms <= 0) return;
    const left = this.opts.timeoutMs - this.spentMs;
    try {
      await this.sleep(Math.min(ms, left), this.opts.signal);
    } catch {
      throw this.killed('aborted');
    }
    this.spentMs += Math.min(ms, left);
    if (ms >= left) throw this.killed(`timed out after ${this.opts.timeoutMs} ms`);
  }

  /** Polls until `ready`; false once `maxMs` has passed (the deadline kills it first). */
  async until(ready: () => boolean, maxMs: number): Promise<boolean> {
    let waited = 0;
    while (!ready()) {
      if (waited >= maxMs) return false;
      const step = Math.min(this.pollMs, maxMs - waited);
      await this.spend(step);
      waited += step;
    }
    return true;
  }

  private killed(why: string): CommandError {
    const err = new CommandError(this.shown, null, '', 'SIGTERM');
    err.message = `${this.shown} ${why} (killed by SIGTERM)`;
    return err;
  }
}
