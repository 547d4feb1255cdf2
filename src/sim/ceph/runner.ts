// A Runner that answers `ceph` and `radosgw-admin` from a SimCephCluster, so the real
// CephClient and RgwAdmin (their parsing, schemas and gate logic) run unchanged against the
// lab. What the CLI does before answering is simulated too: without quorum it cannot
// authenticate and gives up after --connect-timeout; a mgr verb waits for an active mgr until
// the caller's deadline kills it. Waiting goes through an injected sleep, so tests and the lab
// decide how long a simulated second takes.
import { setTimeout as delay } from 'node:timers/promises';
import { readFile as fsReadFile, writeFile as fsWriteFile } from 'node:fs/promises';
import { CommandError } from '../../errors.js';
import type { CephClientOptions } from '../../clients/ceph.js';
import type { SimCephCluster } from './cluster.js';
import { CEPH_COMMANDS, type Command, type Reply } from './commands.js';
import { CephRefusal } from './errors.js';
import { stamp } from './model.js';
import { RGW_COMMANDS } from './rgw.js';
import { STOP_GATE_COMMANDS } from './stop-gates.js';
import { parseKeyring } from './keys.js';

export interface SimCephRunnerOptions {
  /** Extra time each call takes, per verb ("osd pool create"); default 0. */
  latencyMs?: number | ((verb: string) => number);
  /** How the sim waits; default a real timer. Tests pass one that returns at once. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Where `mon getmap -o FILE` writes; default the real filesystem. */
  writeFile?: (path: string, data: Uint8Array) => Promise<void>;
  /** How often a waiting CLI looks again (quorum back? mgr active?); default 100 ms. */
  pollMs?: number;
  /** Where `-k FILE` is read from, to check the caller's key; default the real filesystem. */
  readFile?: (path: string) => Promise<string>;
  /** The key a caller without `-k` shows for an entity (the lab's master: the client.admin key
   * Quarry keeps); undefined, or no function, and only the entity's existence is checked. */
  keyOf?: (entity: string) => Promise<string | undefined>;
}

// The Runner seam, reached through the client that consumes it: the lab may depend on clients
// but not on exec (test/architecture.test.ts).
type Runner = CephClientOptions['runner'];
type Arg = Parameters<Runner['run']>[1][number];
type RunOptions = Parameters<Runner['run']>[2];
type RunOutput = Awaited<ReturnType<Runner['run']>>;

/** Every `ceph` verb: the maps' and the stop gates' (stop-gates.ts). */
const CEPH_VERBS: Command[] = [...CEPH_COMMANDS, ...STOP_GATE_COMMANDS];

const isSecret = (a: Arg): a is { secret: string } => typeof a === 'object' && 'secret' in a;
/** The command line as exec's displayCommand shows it: secrets masked, odd words quoted. */
const displayCommand = (cmd: string, args: Arg[]): string =>
  [cmd, ...args.map((a) => (isSecret(a) ? '***' : /[\s'"\\$]/.test(a) ? JSON.stringify(a) : a))].join(' ');

const GLOBAL_FLAGS = new Set([
  '-c',
  '--conf',
  '--connect-timeout',
  '-n',
  '--name',
  '-k',
  '--keyring',
  '--format',
  '-f',
  '--cluster',
  '--id',
]);

export class SimCephRunner implements Runner {
  /** Every command line run, as a log would show it. */
  readonly calls: string[] = [];

  constructor(
    private readonly cluster: SimCephCluster,
    private readonly opts: SimCephRunnerOptions = {},
  ) {}

  async run(cmd: string, args: Arg[], opts: RunOptions): Promise<RunOutput> {
    const shown = displayCommand(cmd, args);
    this.calls.push(shown);
    const plain = args.map((a) => (isSecret(a) ? a.secret : a));
    const { verb, connectSec, json, name, keyring } = parse(plain);
    const table = cmd === 'radosgw-admin' ? RGW_COMMANDS : cmd === 'ceph' ? CEPH_VERBS : null;
    if (!table) throw new CommandError(shown, 127, `${cmd}: command not found`);
    const clock = new Budget(opts, shown, this.sleep, this.opts.pollMs ?? 100);
    const latency = typeof this.opts.latencyMs === 'function' ? this.opts.latencyMs(verb.join(' ')) : (this.opts.latencyMs ?? 0);
    await clock.spend(latency);
    // radosgw-admin has no connect timeout: it hangs until the deadline.
    if (!(await clock.until(() => this.cluster.hasQuorum(), cmd === 'ceph' ? connectSec * 1000 : Infinity))) {
      const now = stamp(this.cluster.options.now());
      throw new CommandError(
        shown,
        1,
        `${now} 7f5c2d7fa700  0 monclient(hunting): authenticate timed out after ${connectSec}\n[errno 110] RADOS timed out (error connecting to the cluster)\n`,
      );
    }
    // Connected: cephx checks who the caller is before any command.
    if (!this.cluster.accounts.authenticates(name, await this.keyShown(name, keyring)))
      throw denied(cmd, shown, stamp(this.cluster.options.now()));
    const command = table.find((c) => c.verb.every((w, i) => verb[i] === w));
    if (!command)
      return finish(shown, opts, {
        stdout: '',
        exitCode: 22,
        stderr: `no valid command found; 10 closest matches:\nError EINVAL: invalid command\n`,
      });
    if (command.mgr) await clock.until(() => this.cluster.mgrs.available, Infinity);
    return finish(shown, opts, await this.answer(cmd, command, verb, opts, json, name));
  }

  /** The key the caller presents: its entry in the `-k` keyring, or what keyOf says. A keyring
   * that cannot be read or lacks the entity presents no valid key, as cephx sees it. */
  private async keyShown(name: string, keyring: string | undefined): Promise<string | undefined> {
    if (keyring === undefined) return this.opts.keyOf?.(name);
    try {
      const text = await (this.opts.readFile ?? ((p: string) => fsReadFile(p, 'utf8')))(keyring);
      return parseKeyring(text).find((e) => e.entity === name)?.key ?? '';
    } catch {
      return '';
    }
  }

  private async answer(cmd: string, command: Command, verb: string[], opts: RunOptions, json: boolean, caller: string): Promise<Reply> {
    try {
      return await command.run({
        caller,
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

function parse(args: string[]): { verb: string[]; connectSec: number; json: boolean; name: string; keyring: string | undefined } {
  const verb: string[] = [];
  let connectSec = 0;
  let json = false;
  let name = 'client.admin';
  let keyring: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i] as string;
    // Global flags come before the verb; after it every word belongs to the verb.
    if (verb.length === 0 && GLOBAL_FLAGS.has(a)) {
      const value = args[++i] ?? '';
      if (a === '--connect-timeout') connectSec = Number(value);
      if (a === '--format' || a === '-f') json = value.startsWith('json');
      if (a === '-n' || a === '--name') name = value;
      if (a === '--id') name = `client.${value}`;
      if (a === '-k' || a === '--keyring') keyring = value;
      continue;
    }
    verb.push(a);
  }
  // Without --connect-timeout the CLI waits for the mons as long as it is allowed to.
  return { verb, connectSec: connectSec > 0 ? connectSec : Infinity, json, name, keyring };
}

/** What the CLIs print when cephx refuses the caller (recorded from Ceph 16.2.15). */
function denied(cmd: string, shown: string, now: string): CommandError {
  const bad = `${now} 7f0fce89d6c0 -1 monclient(hunting): handle_auth_bad_method server allowed_methods [2] but i only support [2]\n`;
  return cmd === 'ceph'
    ? new CommandError(shown, 13, `${bad}[errno 13] RADOS permission denied (error connecting to the cluster)\n`)
    : new CommandError(shown, 1, `${bad}failed to fetch mon config (--no-mon-config to skip)\n`);
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
