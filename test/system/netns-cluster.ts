// Three (or n) real nodes on one machine for the real-Ceph tests and the system bench: network
// namespaces on a bridge (netns.ts), each with loop devices over sparse files as its whole
// disks, its own hostname (a UTS namespace: Ceph puts each node's OSDs under its own CRUSH
// host) and Quarry's agent program running inside it; Quarry itself in-process with
// DRIVER=real, listening on the bridge's address. The nodes network-boot through Quarry's
// gateway, which hands each its first credential as an install would. `stop()` tears it all
// down, also after a failure, and `leftovers()` says whether anything survived.
import { spawn, type ChildProcess } from 'node:child_process';
import { openSync, closeSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CephHost } from '../../src/agent/ceph-host.js';
import { CephClient } from '../../src/clients/ceph.js';
import { loadConfig } from '../../src/config.js';
import { ZxRunner } from '../../src/exec/zx-runner.js';
import { CredentialFile } from '../../src/fleet/credential-file.js';
import { silentLogger } from '../../src/log.js';
import { startQuarry, type Quarry } from '../../src/main.js';
import type { Doc } from '../../src/model/document.js';
import { createMemoryStore } from '../../src/store/index.js';
import { MemoryLogStore } from '../../src/tasks/logs.js';
import { Client } from '../http/client.js';
import { claimDir, leftovers, makeNetLab, removeNetLab, sweepStale, TAG, type NetLab, type NetNode } from './netns.js';
import { loopDevice, stopAll, TEST_CONF } from './node-sandbox.js';

export const ADMIN_PASSWORD = 'system-cluster-admin-password';
const AGENT_MAIN = fileURLToPath(new URL('../../src/agent/main.js', import.meta.url));

export interface ClusterNode extends NetNode {
  /** Quarry's id of the node, known once it booted. */
  id: string;
  devices: string[];
  /** The node's daemons as the agent sees them (same dirs), to find and stop them by pid file. */
  host: CephHost;
  env: Record<string, string>;
  agent: ChildProcess | null;
}

export interface ClusterOptions {
  nodes?: number;
  disksPerNode?: number;
  /** A node whose agent is silent this long is offline. */
  heartbeatTimeoutMs?: number;
  /** How often the Ceph loops ask Ceph. Each poll is five `ceph` CLI runs (~0.3 s of CPU each):
   * at 1 s on a 2-core machine they slow the daemons' start more than the quicker look gains. */
  pollMs?: number;
  /** An OSD disk missing this long from its active node is dead (DISK_GONE_GRACE_MS). */
  diskGoneGraceMs?: number;
}

export class NetnsCluster {
  readonly runner = new ZxRunner();
  q!: Quarry;
  admin!: Client;
  /** The master's own CLI, with the files Quarry writes from its store. */
  ceph!: CephClient;
  /** The conf that CLI reads: STATE_DIR/ceph/ceph.conf. */
  cephConf = '';
  readonly nodes: ClusterNode[] = [];
  private stopped = false;

  private constructor(
    readonly net: NetLab,
    readonly dir: string,
  ) {}

  static async start(opts: ClusterOptions = {}): Promise<NetnsCluster> {
    if (process.getuid?.() !== 0) throw new Error('the real-cluster test needs root (namespaces, loop devices); CI runs as root');
    await sweepStale();
    const dir = await mkdtemp(join(tmpdir(), TAG));
    let net: NetLab;
    try {
      net = makeNetLab(opts.nodes ?? 3);
      await claimDir(dir, net);
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      throw err;
    }
    const c = new NetnsCluster(net, dir);
    try {
      await c.boot(opts);
    } catch (err) {
      await c.stop();
      throw err;
    }
    return c;
  }

  private async boot(opts: ClusterOptions): Promise<void> {
    const extraConf = join(this.dir, 'extra.conf');
    await writeFile(extraConf, TEST_CONF);
    for (const n of this.net.nodes) {
      const d = join(this.dir, n.ns);
      await mkdir(d, { recursive: true });
      const paths = {
        dataDir: join(d, 'data'),
        runDir: join(d, 'run'),
        logDir: join(d, 'log'),
        publicAddr: n.addr,
        portRange: null,
        extraConf: TEST_CONF,
      };
      const devices: string[] = [];
      const env = {
        CREDENTIAL_FILE: join(d, 'credential.json'),
        CEPH_DATA_DIR: paths.dataDir,
        CEPH_RUN_DIR: paths.runDir,
        CEPH_LOG_DIR: paths.logDir,
        PUBLIC_ADDR: n.addr,
        NODE_HOSTNAME: n.ns,
        CEPH_EXTRA_CONF: extraConf,
        HEARTBEAT_MS: '1000',
        CLAIM_WAIT_MS: '5000',
      };
      // Listed before its loop devices exist, so that stop() detaches whatever was made.
      this.nodes.push({
        ...n,
        id: '',
        devices,
        agent: null,
        env,
        host: new CephHost({ runner: this.runner, ...paths, stopGraceMs: 10_000 }),
      });
      for (let k = 0; k < (opts.disksPerNode ?? 2); k++) devices.push(await loopDevice(this.runner, join(d, `disk${k}.img`), 6));
      Object.assign(env, { DISKS: devices.join(',') });
    }
    this.q = await startQuarry({
      config: loadConfig({
        DRIVER: 'real',
        LAB_NODES: '0',
        PORT: '0',
        HOST: this.net.masterAddr,
        STATE_DIR: join(this.dir, 'master'),
        ADMIN_PASSWORD,
        HEARTBEAT_TIMEOUT_MS: String(opts.heartbeatTimeoutMs ?? 8_000),
        RESYNC_MS: '5000',
        // The watched specs folder is the run's own, never the working directory's.
        SPECS_DIR: this.specsDir,
        ...(opts.diskGoneGraceMs === undefined ? {} : { DISK_GONE_GRACE_MS: String(opts.diskGoneGraceMs) }),
      }),
      log: silentLogger,
      store: await createMemoryStore(),
      logs: new MemoryLogStore(),
      print: () => undefined,
      auth: { scrypt: { N: 2 ** 10, r: 8, p: 1 } },
      retryBaseMs: 1_000,
      runTimeoutMs: 180_000,
      cephTiming: {
        pollMs: opts.pollMs ?? 2_000,
        queryTimeoutMs: 15_000,
        startGraceMs: 20_000,
        blockedRecheckMs: 1_000,
        monGatherMs: 1_000,
      },
    });
    const state = join(this.dir, 'master', 'ceph');
    this.cephConf = join(state, 'ceph.conf');
    this.ceph = new CephClient({
      runner: this.runner,
      conf: this.cephConf,
      name: 'client.admin',
      keyring: join(state, 'ceph.client.admin.keyring'),
    });
    for (const node of this.nodes) {
      // Network boot and install, as the gateway answers a machine: the node's first credential.
      const boot = await this.q.gateway.pxeBoot(node.mac);
      await this.q.gateway.fetchImage(boot.nodeId);
      node.id = boot.nodeId;
      new CredentialFile(node.env.CREDENTIAL_FILE!).saveAgentSecret({ ...boot.credential!, rotated: false });
      this.startAgent(node);
    }
    this.admin = new Client(this.q.url);
    const login = await this.admin.post('/user/login', { username: 'admin', password: ADMIN_PASSWORD });
    if (login.status !== 200) throw new Error(`admin login: ${login.status} ${login.text}`);
  }

  /** Quarry's watched specs folder (SPECS_DIR): a file written here is applied as desired state. */
  get specsDir(): string {
    return join(this.dir, 'specs');
  }

  /** A new disk in the node: a loop device over a new sparse file. Its agent reports it once
   * DISKS names it (the agent reads DISKS at start: set node.env.DISKS and restart it). */
  async addDisk(node: ClusterNode, gib = 6): Promise<string> {
    const device = await loopDevice(this.runner, join(this.dir, node.ns, `disk-added-${Date.now()}.img`), gib);
    node.devices.push(device);
    return device;
  }

  /** The disk pulled out: its loop device detached (once nothing holds it open), and no longer
   * the node's, so that stop() does not detach a number the kernel gave to another. */
  async detachDisk(node: ClusterNode, device: string): Promise<void> {
    await this.runner.run('losetup', ['-d', device], { timeoutMs: 10_000 });
    node.devices.splice(node.devices.indexOf(device), 1);
  }

  /** The agent program inside the node's namespace, with the node's hostname (`ip netns exec`
   * and `unshare` exec in place, so the child's pid is the agent's). */
  startAgent(node: ClusterNode): void {
    const out = openSync(join(this.dir, node.ns, 'agent.log'), 'a');
    node.agent = spawn(
      'ip',
      ['netns', 'exec', node.ns, 'unshare', '--uts', '--', 'sh', '-c', 'hostname "$0" && exec "$@"', node.ns, process.execPath, AGENT_MAIN],
      {
        env: { ...process.env, ...node.env, MASTER_URL: this.q.url },
        stdio: ['ignore', out, out],
      },
    );
    closeSync(out);
  }

  /** SIGTERM, as a service manager would stop it; its daemons keep running. */
  async stopAgent(node: ClusterNode): Promise<void> {
    const child = node.agent;
    node.agent = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }

  /** Everything, in reverse: agents, Quarry, daemons (layer by layer, by pid file), loop
   * devices, namespaces and links, the dir. Safe to call twice and after a failed start. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await Promise.all(this.nodes.map((n) => this.stopAgent(n)));
    // After a failed start, q was never assigned.
    await (this.q as Quarry | undefined)?.stop().catch(() => undefined);
    await stopAll(this.nodes.map((n) => n.host)).catch(() => undefined);
    for (const d of this.nodes.flatMap((n) => n.devices))
      await this.runner.run('losetup', ['-d', d], { timeoutMs: 10_000 }).catch(() => undefined);
    removeNetLab(this.net);
    await rm(this.dir, { recursive: true, force: true });
  }

  /** Every value `pick` gives a document from now on, in order, deduplicated: the store's
   * watch misses no write, so a state that lasted a moment (a daemon down until its restart)
   * is still seen. */
  record<T>(kind: string, id: string, pick: (doc: Doc<unknown, unknown>) => T): { values: T[]; stop: () => void } {
    const values: T[] = [];
    const stop = this.q.store.watch(this.q.store.revision(), (e) => {
      if (e.type === 'relist' || e.doc.kind !== kind || e.doc.id !== id) return;
      const v = pick(e.doc);
      if (JSON.stringify(values.at(-1)) !== JSON.stringify(v)) values.push(v);
    });
    return { values, stop };
  }

  leftovers(): Promise<string[]> {
    return leftovers(this.net.id, this.dir);
  }

  /** The last lines of each node's agent log and daemon logs: what a failed CI run needs. */
  async logTails(lines = 6): Promise<string[]> {
    const out: string[] = [];
    for (const n of this.nodes) {
      const daemons = await n.host.daemons().catch(() => []);
      const files = [
        join(this.dir, n.ns, 'agent.log'),
        ...daemons.filter((d) => d.type !== 'rgw').map((d) => join(n.host.opts.logDir, `ceph-${d.type}.${d.id}.log`)),
      ];
      for (const f of files) {
        const tail = (await readFile(f, 'utf8').catch(() => '')).trim().split('\n').slice(-lines).join('\n');
        if (tail) out.push(`${f}:\n${tail}`);
      }
    }
    return out;
  }
}
