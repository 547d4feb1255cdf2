// A real etcd (Debian's etcd-server, /usr/bin/etcd) for the etcd backend's tests and the store
// benchmark: members on 127.0.0.1 with free ports, in a temporary data directory removed at
// stop(). A test file starts one in test.before and stops it in test.after.always.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const ETCD_BIN = process.env.ETCD_BIN ?? '/usr/bin/etcd';

/** Why the etcd tests cannot run here, or null when they can. */
export function etcdMissing(): string | null {
  return existsSync(ETCD_BIN) ? null : `${ETCD_BIN} is missing: apt-get install -y etcd-server`;
}

interface Member {
  name: string;
  clientPort: number;
  peerPort: number;
  proc: ChildProcess | null;
  /** The end of its output, for the error when it does not come up. */
  output: string;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export class EtcdCluster {
  private constructor(
    readonly dir: string,
    private readonly members: Member[],
  ) {}

  /** The running members' process ids (a bench counts their CPU). */
  pids(): number[] {
    return this.members.flatMap((m) => (m.proc?.pid === undefined ? [] : [m.proc.pid]));
  }

  /** Starts `size` members and resolves once the cluster has a leader and answers. */
  static async start(size = 1): Promise<EtcdCluster> {
    const missing = etcdMissing();
    if (missing) throw new Error(missing);
    const dir = await mkdtemp(join(tmpdir(), 'quarry-etcd-'));
    const members: Member[] = [];
    for (let i = 0; i < size; i++)
      members.push({ name: `m${i}`, clientPort: await freePort(), peerPort: await freePort(), proc: null, output: '' });
    const cluster = new EtcdCluster(dir, members);
    try {
      for (let i = 0; i < size; i++) cluster.spawn(i, 'new');
      await Promise.all(members.map((_, i) => cluster.waitHealthy(i)));
    } catch (err) {
      await cluster.stop();
      throw err;
    }
    return cluster;
  }

  endpoints(): string[] {
    return this.members.map((m) => `http://127.0.0.1:${m.clientPort}`);
  }

  /** The index of the member Raft elected leader, from the members' own status; undefined
   * while none says it leads (an election under way). */
  async raftLeader(): Promise<number | undefined> {
    for (const [i, m] of this.members.entries()) {
      if (!m.proc) continue;
      try {
        const res = await fetch(`http://127.0.0.1:${m.clientPort}/v3/maintenance/status`, {
          method: 'POST',
          body: '{}',
          signal: AbortSignal.timeout(2_000),
        });
        const s = (await res.json()) as { leader?: string; header?: { member_id?: string } };
        if (s.leader !== undefined && s.leader === s.header?.member_id) return i;
      } catch {
        // not answering: not the leader we can talk to
      }
    }
    return undefined;
  }

  /** Kills one member (SIGKILL: as a crash) and waits until it is gone. */
  async kill(i: number): Promise<void> {
    const m = this.member(i);
    const proc = m.proc;
    if (!proc) return;
    m.proc = null;
    if (proc.exitCode === null && proc.signalCode === null) {
      const gone = new Promise((resolve) => proc.once('exit', resolve));
      proc.kill('SIGKILL');
      await gone;
    }
  }

  /** Freezes one member (SIGSTOP): alive to the kernel, silent to the others, as behind a
   * partition; resume() thaws it. stop() kills a frozen member as any other. */
  pause(i: number): void {
    this.member(i).proc?.kill('SIGSTOP');
  }

  resume(i: number): void {
    this.member(i).proc?.kill('SIGCONT');
  }

  /** Starts a killed member again on its data directory and waits until it is healthy. */
  async restart(i: number): Promise<void> {
    this.spawn(i, 'existing');
    await this.waitHealthy(i);
  }

  async stop(): Promise<void> {
    await Promise.all(this.members.map((_, i) => this.kill(i)));
    await rm(this.dir, { recursive: true, force: true });
  }

  private member(i: number): Member {
    const m = this.members[i];
    if (!m) throw new Error(`no etcd member ${i}`);
    return m;
  }

  private spawn(i: number, state: 'new' | 'existing'): void {
    const m = this.member(i);
    const client = `http://127.0.0.1:${m.clientPort}`;
    const peer = `http://127.0.0.1:${m.peerPort}`;
    const initial = this.members.map((o) => `${o.name}=http://127.0.0.1:${o.peerPort}`).join(',');
    const proc = spawn(
      ETCD_BIN,
      [
        `--name=${m.name}`,
        `--data-dir=${join(this.dir, m.name)}`,
        `--listen-client-urls=${client}`,
        `--advertise-client-urls=${client}`,
        `--listen-peer-urls=${peer}`,
        `--initial-advertise-peer-urls=${peer}`,
        `--initial-cluster=${initial}`,
        `--initial-cluster-state=${state}`,
        `--initial-cluster-token=quarry-test`,
        // A loaded 2-core machine: elections must not flap while the tests run.
        '--heartbeat-interval=100',
        '--election-timeout=1000',
        '--log-level=error',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    const keep = (chunk: Buffer): void => {
      m.output = (m.output + chunk.toString()).slice(-4000);
    };
    proc.stdout.on('data', keep);
    proc.stderr.on('data', keep);
    m.proc = proc;
    // A test process that dies without its teardown must not leave etcd running.
    const reap = (): void => {
      proc.kill('SIGKILL');
    };
    process.once('exit', reap);
    proc.once('exit', () => process.off('exit', reap));
  }

  /** Polls the member's /health until it reports a leader; fails if it exits or takes 60 s. */
  private async waitHealthy(i: number): Promise<void> {
    const m = this.member(i);
    const deadline = Date.now() + 60_000;
    for (let delay = 20; ; delay = Math.min(delay * 2, 250)) {
      const proc = m.proc;
      if (!proc || proc.exitCode !== null || proc.signalCode !== null) throw new Error(`etcd ${m.name} exited:\n${m.output}`);
      try {
        const res = await fetch(`http://127.0.0.1:${m.clientPort}/health`, { signal: AbortSignal.timeout(2_000) });
        const body = (await res.json()) as { health?: string };
        if (body.health === 'true') return;
      } catch {
        // not listening yet
      }
      if (Date.now() > deadline) throw new Error(`etcd ${m.name} did not become healthy within 60 s:\n${m.output}`);
      await new Promise((resolve) => setTimeout(resolve, delay));
    }
  }
}
