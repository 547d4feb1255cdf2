// One dnsmasq per network on the real master, in the foreground (-k) so Quarry holds its pid.
// A configuration change is a stop and a start: SIGHUP does not re-read dhcp-range and the
// other main settings, and crashes Debian 12's dnsmasq with tagged host entries.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import type { ProcessSupervisor, Supervised } from '../exec/supervisor.js';
import {
  DhcpFailureReason,
  DhcpServerBook,
  DhcpStartError,
  classifyDnsmasqError,
  type DhcpFiles,
  type DhcpServerState,
  type DhcpServers,
  type DhcpStartRequest,
} from './dhcp.js';

export interface DnsmasqOptions {
  supervisor: ProcessSupervisor;
  /** STATE_DIR/dnsmasq: configurations, pid and lease files. */
  dir: string;
  /** Run inside this network namespace (`ip netns exec`), for tests and containers. */
  netns?: string | null;
  /** How long a start may take to say it serves. */
  startTimeoutMs?: number;
  stopGraceMs?: number;
  now?: () => number;
}

interface Server {
  proc: Supervised;
  state: DhcpServerState;
  /** The last lines it wrote: an unexpected end is explained with them. */
  tail: string[];
  stopping: boolean;
}

const STARTED = /started, version/;
const TAIL = 20;

export class DnsmasqServers extends DhcpServerBook<Server> implements DhcpServers {
  private readonly now: () => number;

  constructor(private readonly opts: DnsmasqOptions) {
    super(opts.dir);
    this.now = opts.now ?? Date.now;
  }

  running(networkId: string): DhcpServerState | null {
    return this.servers.get(networkId)?.state ?? null;
  }

  async start(networkId: string, req: DhcpStartRequest, log: (line: string) => void): Promise<DhcpServerState> {
    const files = this.files(networkId);
    // Owner-only: dnsmasq starts as root and opens its files before it drops privileges.
    await mkdir(this.opts.dir, { recursive: true, mode: 0o700 });
    await writeFile(files.conf, req.config, { mode: 0o600 });
    await this.stop(networkId);
    await this.stopStale(files, log);
    this.exits.delete(networkId);
    const [cmd, args] = this.command(files.conf);
    const tail: string[] = [];
    let onStarted: () => void = () => undefined;
    const started = new Promise<void>((resolve) => (onStarted = resolve));
    const proc = this.opts.supervisor.spawn(cmd, args, {
      onLine: (_stream, line) => {
        tail.push(line);
        if (tail.length > TAIL) tail.shift();
        if (STARTED.test(line)) onStarted();
      },
    });
    const server: Server = {
      proc,
      tail,
      stopping: false,
      state: { pid: proc.pid, configHash: req.configHash, nic: req.nic, startedAt: this.now() },
    };
    log(`dnsmasq pid ${proc.pid} on ${req.nic}`);
    const timeout = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), this.opts.startTimeoutMs ?? 10_000).unref());
    const first = await Promise.race([started.then(() => 'started' as const), proc.exited, timeout]);
    if (first !== 'started') {
      await proc.stop(this.opts.stopGraceMs ?? 2_000);
      const why =
        first === 'timeout'
          ? { reason: DhcpFailureReason.StartFailed, message: 'dnsmasq did not report that it started' }
          : failure(first.error, tail);
      tail.forEach((l) => log(l));
      this.exits.set(networkId, { at: this.now(), configHash: req.configHash, ...why });
      throw new DhcpStartError(why.reason, why.message);
    }
    this.servers.set(networkId, server);
    void proc.exited.then(() => this.died(networkId, server));
    return server.state;
  }

  async stop(networkId: string): Promise<void> {
    const server = this.servers.get(networkId);
    if (!server) return;
    server.stopping = true;
    this.servers.delete(networkId);
    await server.proc.stop(this.opts.stopGraceMs ?? 2_000);
  }

  async stopAll(): Promise<void> {
    await Promise.all(this.networks().map((id) => this.stop(id)));
  }

  private died(networkId: string, server: Server): void {
    if (server.stopping) return;
    if (this.servers.get(networkId) === server) this.servers.delete(networkId);
    const last = server.tail.slice(-3).join(' / ') || 'no output';
    this.ended(networkId, {
      at: this.now(),
      configHash: server.state.configHash,
      reason: DhcpFailureReason.Exited,
      message: `dnsmasq pid ${server.state.pid} exited: ${last}`,
    });
  }

  private command(conf: string): [string, string[]] {
    const args = ['-k', `--conf-file=${conf}`];
    return this.opts.netns ? ['ip', ['netns', 'exec', this.opts.netns, 'dnsmasq', ...args]] : ['dnsmasq', args];
  }

  /** A dnsmasq left by a Quarry that crashed still holds the port: end it, if it is ours. */
  private async stopStale(files: DhcpFiles, log: (line: string) => void): Promise<void> {
    const pid = Number((await readFile(files.pidFile, 'utf8').catch(() => '')).trim());
    if (!Number.isInteger(pid) || pid <= 1) return;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (!cmdline.includes(`--conf-file=${files.conf}`)) return;
    log(`stopping dnsmasq pid ${pid} left by an earlier run`);
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      return;
    }
    for (let i = 0; i < 50 && (await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '')) !== ''; i++)
      await new Promise((r) => setTimeout(r, 20));
  }
}

function failure(spawnError: string | undefined, tail: string[]): { reason: DhcpFailureReason; message: string } {
  if (spawnError) return { reason: DhcpFailureReason.StartFailed, message: `dnsmasq could not be started: ${spawnError}` };
  return classifyDnsmasqError(tail);
}
