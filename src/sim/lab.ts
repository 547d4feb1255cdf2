// The simulated datacenter: LAB_NODES machines that network-boot against the master, run
// agents, and carry out node-level steps with configurable latency and injected faults.
import { setMaxListeners } from 'node:events';
import type { MasterLink } from '../fleet/protocol.js';
import { MachineDisk } from './disk.js';
import { HttpAgentLink } from './http-link.js';
import { buildMachines, type MachineSpec, type SimDisk } from './machines.js';
import { SimMachine, type Timing } from './machine.js';
import { seeded } from './random.js';
import { builtinSteps, type Step } from './steps.js';
import { SimCephCluster } from './ceph/cluster.js';
import { cephSteps } from './ceph/steps.js';
import { SimBmcs, labBmcTarget } from './bmc.js';
import type { BmcTarget } from '../clients/bmc.js';
import type { BootLogEntry, StepLogEntry } from './lab-protocol.js';

export interface LabOptions extends Partial<Timing> {
  nodes: number;
  seed?: number;
  disksPerMachine?: number;
  /** Probability that any node-level step fails. */
  failRate?: number;
  /** How agents reach the master: its HTTP agent protocol (the default, what real agents
   * do), or direct calls in this process (cheaper, for benchmarks of a thousand nodes). */
  link?: 'http' | 'inprocess';
  /** The master's base URL, for the http link. */
  masterUrl?: string;
  /** Several controllers instead (the lab in its own process, src/sim/serve.ts): each machine
   * speaks to the first and moves on to the next when one refuses connections. */
  masterUrls?: readonly string[];
  /** Where the machines' disks are kept between runs of the lab; in memory when absent. */
  diskDir?: string | null;
  /** The simulated cluster, when the master's loops must reach it before the lab exists. */
  ceph?: SimCephCluster;
  /** With the http link, each machine speaks from its own loopback address (labMachineAddress;
   * Linux routes all of 127/8 to lo); default: on Linux when the master is on loopback. */
  machineAddresses?: boolean;
  /** The lab master's DHCP: told of each machine's address at its network boot (its lease). */
  dhcp?: { dhcpRequest(mac: string, address: string): void } | null;
  /** The machines' BMCs, when the master's loops must reach them before the lab exists. */
  bmcs?: SimBmcs;
}

/** The lab machine with this 1-based index gets its own address in 127/8, never 127.0.0.1
 * (the address everything else on the host speaks from) and never a .0 or .255 octet. */
export function labMachineAddress(index: number): string {
  const c = 1 + (index % 254);
  const b = 1 + (Math.floor(index / 254) % 254);
  const a = 16 + Math.floor(index / (254 * 254));
  return `127.${a}.${b}.${c}`;
}

const onLoopback = (url: string): boolean => /^https?:\/\/(127\.|localhost[:/])/.test(url);

/** What Lab.insertDisk may be told about the new disk; the rest has defaults. */
export interface NewDisk {
  serial?: string;
  sizeBytes?: number;
  rotational?: boolean;
  /** sata (default), sas or nvme; a SATA SSD is `rotational: false`. */
  interface?: string;
  devicePath?: string;
}

/** What a wipe that missed a BlueStore label copy leaves (the signature the read-back finds). */
export const STICKY_LABEL = 'a BlueStore label ("bluestore block device") at offset 1073741824 (1 GiB)';

export const defaultTiming: Timing = { bootMs: 400, stepMs: 200, heartbeatMs: 2_000, claimWaitMs: 10_000 };

export class Lab {
  readonly machines: SimMachine[];
  /** The storage cluster the machines' daemons form, as the lab simulates it. */
  readonly ceph: SimCephCluster;
  /** Each machine's BMC (IPMI over LAN, simulated): power follows the machine. */
  readonly bmcs: SimBmcs;
  /** Every node-level step a machine carried out, in order: a step done twice shows here. */
  readonly stepLog: StepLogEntry[] = [];
  /** Every boot that reached its agent, in order: when each machine was back. */
  readonly bootLog: BootLogEntry[] = [];
  private readonly stopper = new AbortController();
  private readonly steps = builtinSteps();
  private inserted = 0;

  /** `master` answers network boots in-process, and everything else too with the in-process link. */
  constructor(master: MasterLink, opts: LabOptions) {
    // Every machine listens for the lab's stop: a thousand listeners on one signal is by design.
    setMaxListeners(0, this.stopper.signal);
    const timing: Timing = { ...defaultTiming, ...definedOnly(opts) };
    const random = seeded((opts.seed ?? 42) + 1);
    const http = (opts.link ?? 'http') === 'http';
    const urls = opts.masterUrls ?? (opts.masterUrl ? [opts.masterUrl] : []);
    if (http && urls.length === 0) throw new Error("the lab's http link needs the master's URL (masterUrl)");
    const ownAddresses = http && (opts.machineAddresses ?? (process.platform === 'linux' && urls.every(onLoopback)));
    this.machines = buildMachines(opts.nodes, opts.seed ?? 42, opts.disksPerMachine).map((spec) => {
      const disk = new MachineDisk(spec.mac, opts.diskDir ?? null);
      const address = ownAddresses ? labMachineAddress(spec.index) : null;
      const dhcp = opts.dhcp ? (mac: string, a: string) => opts.dhcp?.dhcpRequest(mac, a) : null;
      const link = http ? new HttpAgentLink(master, urls, disk, address, dhcp) : master;
      const m = new SimMachine(spec, link, this.steps, timing, random, this.stopper.signal, disk);
      m.stepLog = this.stepLog;
      m.bootLog = this.bootLog;
      return m;
    });
    for (const m of this.machines) m.faults.failRate = opts.failRate ?? 0;
    this.ceph = opts.ceph ?? new SimCephCluster({ random: seeded((opts.seed ?? 42) + 2) });
    for (const m of this.machines) m.host = this.ceph.hosts;
    this.bmcs = opts.bmcs ?? new SimBmcs();
    this.bmcs.attach(() => this.machines);
    const hooks = {
      hostnameOf: (spec: MachineSpec) => this.machine(spec.index).hostname,
      daemonsOf: (spec: MachineSpec) => this.machine(spec.index).daemons,
    };
    for (const [name, step] of cephSteps(this.ceph, hooks)) this.defineStep(name, step);
  }

  /** Later loops teach the agents their node-level steps. */
  defineStep(taskName: string, step: Step): void {
    this.steps.set(taskName, step);
  }

  /** Powers every machine on; each network-boots at once. */
  start(): void {
    for (const m of this.machines) m.powerOn();
  }

  stop(): void {
    this.stopper.abort();
  }

  /** By 1-based index, MAC or node id. */
  machine(ref: number | string): SimMachine {
    const m = this.machines.find((x) => (typeof ref === 'number' ? x.spec.index === ref : x.spec.mac === ref || x.nodeId === ref));
    if (!m) throw new Error(`no lab machine ${ref}`);
    return m;
  }

  /** The machine's BMC as a spec declares it (address, port, user, password). */
  bmc(ref: number | string): BmcTarget {
    return labBmcTarget(this.machine(ref).spec.index);
  }

  specs(): MachineSpec[] {
    return this.machines.map((m) => m.spec);
  }

  failNext(ref: number | string, taskName: string, count = 1): void {
    this.machine(ref).faults.failNext.set(taskName, count);
  }

  /** The agent falls silent in the middle of the node's next `taskName` run. */
  offlineDuringNext(ref: number | string, taskName: string, silentForMs: number): void {
    this.machine(ref).faults.offlineDuring.set(taskName, silentForMs);
  }

  /** The disk dies: it vanishes from the machine's next report, and the OSD on it crashes
   * (down in the cluster, still in until the mon marks it out or Quarry does). */
  killDisk(ref: number | string, serial: string): void {
    const m = this.machine(ref);
    const disk = this.diskOf(ref, serial);
    disk.dead = true;
    const osd = [...this.ceph.osdmap.osds.values()].find((o) => o.host === m.hostname && o.devicePath === disk.devicePath && o.up);
    if (osd) this.ceph.killOsd(osd.id);
    // A monitor whose store was on it dies on the I/O errors and is not started again.
    for (const [name, d] of this.ceph.monDisks) {
      if (d.host !== m.hostname || d.serial !== disk.serial) continue;
      d.gone = true;
      if (this.ceph.mons.get(name)?.running) this.ceph.stopMon(name);
    }
  }

  /** A new blank disk is plugged in: it appears in the machine's next report. Defaults: a
   * 4 TB SATA hdd (an nvme is not rotational) at the first free /dev/sdX (/dev/nvmeNn1 for
   * nvme), a fresh serial. */
  insertDisk(ref: number | string, d: NewDisk = {}): SimDisk {
    const m = this.machine(ref);
    const disks = m.spec.disks;
    const iface = d.interface ?? 'sata';
    const nvme = iface === 'nvme';
    const live = new Set(disks.filter((x) => !x.dead).map((x) => x.devicePath));
    const free = (n: number) => (nvme ? `/dev/nvme${n}n1` : `/dev/sd${String.fromCharCode(97 + n)}`);
    let n = 0;
    while (live.has(free(n))) n += 1;
    const devicePath = d.devicePath ?? free(n);
    if (live.has(devicePath)) throw new Error(`lab machine ${ref} has a disk at ${devicePath} already`);
    const serial = d.serial ?? `SIM${String(m.spec.index).padStart(5, '0')}N${disks.length}${this.inserted++}`;
    if (disks.some((x) => x.serial === serial)) throw new Error(`lab machine ${ref} has a disk ${serial} already`);
    const disk: SimDisk = {
      serial,
      devicePath,
      sizeBytes: d.sizeBytes ?? 4_000_000_000_000,
      rotational: d.rotational ?? !nvme,
      model: nvme ? 'PM1725b' : 'ST4000NM0035',
      vendor: nvme ? 'Samsung' : 'Seagate',
      interface: iface,
      isSystem: false,
      hasFilesystem: false,
      dead: false,
    };
    disks.push(disk);
    return disk;
  }

  /** A fault: wiping this disk leaves `signature` behind (a BlueStore label copy the wipe
   * missed, by default), so the verified wipe (`disk.wipe`, `ceph.osd.zap`) fails naming it.
   * `clear` ends the fault. */
  stickySignature(ref: number | string, serial: string, signature: string | null = STICKY_LABEL): void {
    const disk = this.diskOf(ref, serial);
    if (signature === null) delete disk.stickySignature;
    else disk.stickySignature = signature;
  }

  private diskOf(ref: number | string, serial: string): SimDisk {
    const disk = this.machine(ref).spec.disks.find((d) => d.serial === serial);
    if (!disk) throw new Error(`no disk ${serial} on lab machine ${ref}`);
    return disk;
  }
}

function definedOnly(opts: Partial<Timing>): Partial<Timing> {
  const out: Partial<Timing> = {};
  for (const k of ['bootMs', 'stepMs', 'heartbeatMs', 'claimWaitMs'] as const) {
    if (opts[k] !== undefined) out[k] = opts[k];
  }
  return out;
}
