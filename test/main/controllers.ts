// Quarry controllers as real processes (dist/src/main.js) sharing one etcd: what a SIGKILL is
// done to. Each has its own STATE_DIR and port; they share the prefix, the secrets key and the
// first admin's password, as controllers of one store do. The lab driver with no machines: the
// tests bring the traffic (boots, API calls) themselves.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));
export const CONTROLLER_ADMIN_PASSWORD = 'controllers-admin-password';

/** What the group needs of its caller: an ava test's `t`, or a benchmark's own. */
export interface Scope {
  teardown(fn: () => Promise<void> | void): void;
  log(...values: unknown[]): void;
}

export interface ControllerGroupOptions {
  endpoints: string[];
  prefix: string;
  /** Extra environment for every controller (LEADER_LEASE_TTL_S, ...). */
  env?: Record<string, string>;
}

export class Controller {
  readonly lines: string[] = [];
  url = '';
  private readonly exit: Promise<number | null>;

  constructor(
    readonly name: string,
    private readonly proc: ChildProcess,
  ) {
    this.exit = new Promise((resolve) => proc.once('exit', (code) => resolve(code)));
  }

  get pid(): number {
    return this.proc.pid ?? -1;
  }

  get running(): boolean {
    return this.proc.exitCode === null && this.proc.signalCode === null;
  }

  /** Whether it says it leads (GET /leaderz); false when it does not answer. */
  async leads(): Promise<boolean> {
    if (!this.running) return false;
    try {
      return (await fetch(`${this.url}/leaderz`, { signal: AbortSignal.timeout(2_000) })).status === 200;
    } catch {
      return false;
    }
  }

  kill(signal: NodeJS.Signals): Promise<number | null> {
    if (this.running) this.proc.kill(signal);
    return this.exit;
  }

  /** Log lines with this message. */
  logged(message: string): Record<string, unknown>[] {
    return this.lines.filter((l) => l.includes(`"message":"${message}"`)).map((l) => JSON.parse(l) as Record<string, unknown>);
  }
}

export class ControllerGroup {
  readonly controllers: Controller[] = [];
  private readonly secretsKey = randomBytes(32).toString('base64');

  private constructor(
    private readonly dir: string,
    private readonly opts: ControllerGroupOptions,
  ) {}

  /** Starts n controllers one after the other; all are stopped (SIGKILL) when the test ends. */
  static async start(t: Scope, n: number, opts: ControllerGroupOptions): Promise<ControllerGroup> {
    const g = new ControllerGroup(await mkdtemp(join(tmpdir(), 'quarry-controllers-')), opts);
    t.teardown(async () => {
      await Promise.all(g.controllers.map((c) => c.kill('SIGKILL')));
      await rm(g.dir, { recursive: true, force: true });
    });
    for (let i = 0; i < n; i++) await g.add(t);
    return g;
  }

  /** One more controller, once it says it started (its URL known). */
  async add(t: Scope): Promise<Controller> {
    const name = `c${this.controllers.length + 1}`;
    const proc = spawn(process.execPath, [MAIN], {
      env: {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        STATE_DIR: join(this.dir, name, 'state'),
        SPECS_DIR: join(this.dir, name, 'specs'),
        DRIVER: 'lab',
        LAB_NODES: '0',
        PORT: '0',
        HOST: '127.0.0.1',
        LOG_LEVEL: 'info',
        ADMIN_PASSWORD: CONTROLLER_ADMIN_PASSWORD,
        SECRETS_KEY: this.secretsKey,
        STORE: 'etcd',
        ETCD_ENDPOINTS: this.opts.endpoints.join(','),
        ETCD_PREFIX: this.opts.prefix,
        ...this.opts.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const c = new Controller(name, proc);
    this.controllers.push(c);
    // The log is JSON lines on stderr.
    let rest = '';
    const started = new Promise<void>((resolve, reject) => {
      proc.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        const parts = (rest + chunk).split('\n');
        rest = parts.pop() ?? '';
        for (const line of parts) {
          c.lines.push(line);
          const url = /"url":"([^"]+)".*"message":"quarry started"/.exec(line)?.[1];
          if (url) {
            c.url = url;
            resolve();
          }
        }
      });
      proc.stdout.setEncoding('utf8').on('data', (chunk: string) => c.lines.push(chunk));
      proc.once('exit', (code) => reject(new Error(`${name} exited (${code}) before it started:\n${c.lines.slice(-20).join('\n')}`)));
    });
    await started;
    t.log(`${name}: pid ${c.pid} at ${c.url}`);
    return c;
  }

  /** The running controllers that say they lead. */
  async leaders(): Promise<Controller[]> {
    const alive = this.controllers.filter((c) => c.running);
    const leads = await Promise.all(alive.map((c) => c.leads()));
    return alive.filter((_, i) => leads[i]);
  }
}
