// Three (or n) real nodes on one machine for the real-Ceph tests and the system bench: network
// namespaces on a bridge (netns.ts), each with loop devices over sparse files as its whole
// disks, its own hostname (a UTS namespace: Ceph puts each node's OSDs under its own CRUSH
// host) and Quarry's agent program running inside it; Quarry itself in-process with
// DRIVER=real, listening on the bridge's address. The nodes network-boot through Quarry's
// gateway, which hands each its first credential as an install would. `stop()` tears it all
// down, also after a failure, and `leftovers()` says whether anything survived.
// A node's reboot and power-off are simulated: its agent's AGENT_REBOOT_COMMAND /
// AGENT_POWEROFF_COMMAND only touch a marker file in the node's dir, and the harness, watching the
// dir, does to the node what the machine would (powerDown): see there.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { openSync, closeSync, watch, type FSWatcher } from 'node:fs';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
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
import { loopDevice, stopAll, TEST_CONF, unmountUnder } from './node-sandbox.js';

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
  /** Each simulated reboot or power-off, in order: when the agent asked for it, when the node
   * was down (agent and daemons gone) and when its agent started again (a power-off: never, until
   * powerOn). The harness's own record of what happened to the machine. */
  power: PowerEvent[];
}

export interface PowerEvent {
  action: PowerAction;
  askedAt: number;
  downAt?: number;
  upAt?: number;
}

type PowerAction = 'reboot' | 'poweroff';
const POWER_ACTIONS: readonly PowerAction[] = ['reboot', 'poweroff'];
/** The simulated firmware and kernel boot between a node going down and its agent starting. */
const BOOT_MS = 1_000;

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
  private readonly watchers: FSWatcher[] = [];
  /** Each node's power action under way (one at a time, as on a machine). */
  private readonly powering = new Map<string, Promise<void>>();

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
        // Each simulated boot its own id (the namespaces share the host's /proc), and power
        // commands that only tell the harness (powerDown).
        AGENT_BOOT_ID_FILE: join(d, 'boot_id'),
        AGENT_REBOOT_COMMAND: JSON.stringify(['touch', join(d, markerOf('reboot'))]),
        AGENT_POWEROFF_COMMAND: JSON.stringify(['touch', join(d, markerOf('poweroff'))]),
      };
      await writeFile(env.AGENT_BOOT_ID_FILE, `${randomUUID()}\n`);
      // Listed before its loop devices exist, so that stop() detaches whatever was made.
      this.nodes.push({
        ...n,
        id: '',
        devices,
        agent: null,
        power: [],
        env,
        host: new CephHost({ runner: this.runner, ...paths, stopGraceMs: 10_000 }),
      });
      for (let k = 0; k < (opts.disksPerNode ?? 2); k++) devices.push(await loopDevice(this.runner, join(d, `disk${k}.img`), 6));
      Object.assign(env, { DISKS: devices.join(',') });
      this.watchPower(this.nodes.at(-1)!, d);
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

  /** The agent's power command touched a marker in the node's dir: the machine goes down. */
  private watchPower(node: ClusterNode, dir: string): void {
    const w = watch(dir, (_event, file) => {
      const action = POWER_ACTIONS.find((a) => markerOf(a) === String(file));
      if (!action || this.stopped || this.powering.has(node.ns)) return;
      const asked = join(dir, markerOf(action));
      const p = readdir(dir)
        .then((fs) => (fs.includes(markerOf(action)) ? rm(asked).then(() => this.powerDown(node, action)) : undefined))
        .catch((err: unknown) => void process.stderr.write(`netns-cluster: ${action} of ${node.ns} failed: ${String(err)}\n`))
        .finally(() => this.powering.delete(node.ns));
      this.powering.set(node.ns, p);
    });
    this.watchers.push(w);
  }

  /**
   * What a reboot (or power-off) does to the node, in the order systemd's shutdown does it: the
   * agent stopped (SIGTERM), then its Ceph daemons with SIGTERM and SIGKILL after a grace, as
   * their units would be: a clean reboot, not a power cut (a killed node is cluster-faults.ts's),
   * so Ceph sees the OSDs mark themselves down at once instead of waiting for its heartbeat
   * grace. The disks and the node's state dir stay; /run's files (pid files, admin sockets: a
   * tmpfs) are gone, as after a boot. The monitor's disk was mounted in the agent's own mount
   * namespace (`ip netns exec` makes one), which ends with its last process, the monitor: the
   * new agent's start mounts it again, as after a boot (unmountUnder is for a mount made here). A reboot then writes
   * a new boot id and starts the agent again after a short boot; whatever runs the daemons again
   * is Quarry's (the agent's start mounts the monitor's disk, the loops restart the daemons).
   */
  private async powerDown(node: ClusterNode, action: PowerAction): Promise<void> {
    const ev: PowerEvent = { action, askedAt: Date.now() };
    node.power.push(ev);
    await this.stopAgent(node);
    await stopAll([node.host]);
    await unmountUnder(this.runner, node.host.opts.dataDir);
    const run = node.host.opts.runDir;
    for (const f of await readdir(run).catch(() => [] as string[])) await rm(join(run, f), { recursive: true, force: true });
    ev.downAt = Date.now();
    if (action === 'reboot') await this.boot1(node, ev);
  }

  /** A node powered off (node.shutdown) is switched on again, as by hand: it boots. */
  async powerOn(node: ClusterNode): Promise<void> {
    const ev = node.power.at(-1);
    if (!ev || ev.action !== 'poweroff' || ev.upAt !== undefined) throw new Error(`${node.ns} is not powered off`);
    await this.powering.get(node.ns);
    await this.boot1(node, ev);
  }

  private async boot1(node: ClusterNode, ev: PowerEvent): Promise<void> {
    await writeFile(node.env.AGENT_BOOT_ID_FILE!, `${randomUUID()}\n`);
    await new Promise((r) => setTimeout(r, BOOT_MS));
    if (this.stopped) return;
    this.startAgent(node);
    ev.upAt = Date.now();
  }

  /** Everything, in reverse: agents, Quarry, daemons (layer by layer, by pid file), loop
   * devices, namespaces and links, the dir. Safe to call twice and after a failed start. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.watchers.forEach((w) => w.close());
    await Promise.all([...this.powering.values()]);
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

const markerOf = (action: PowerAction): string => `${action}-requested`;
