// The simulated datacenter: LAB_NODES machines that network-boot against the master, run
// agents, and carry out node-level steps with configurable latency and injected faults.
import { setMaxListeners } from 'node:events';
import type { MasterLink } from '../fleet/protocol.js';
import { MachineDisk } from './disk.js';
import { HttpAgentLink } from './http-link.js';
import { buildMachines, type MachineSpec } from './machines.js';
import { SimMachine, type Timing } from './machine.js';
import { seeded } from './random.js';
import { builtinSteps, type Step } from './steps.js';
import { SimCephCluster } from './ceph/cluster.js';
import { cephSteps } from './ceph/steps.js';

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
  /** Where the machines' disks are kept between runs of the lab; in memory when absent. */
  diskDir?: string | null;
  /** The simulated cluster, when the master's loops must reach it before the lab exists. */
  ceph?: SimCephCluster;
  /** With the http link, each machine speaks from its own loopback address (labMachineAddress;
   * Linux routes all of 127/8 to lo); default: on Linux when the master is on loopback. */
  machineAddresses?: boolean;
  /** The lab master's DHCP: told of each machine's address at its network boot (its lease). */
  dhcp?: { dhcpRequest(mac: string, address: string): void } | null;
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

export const defaultTiming: Timing = { bootMs: 400, stepMs: 200, heartbeatMs: 2_000, claimWaitMs: 10_000 };

export class Lab {
  readonly machines: SimMachine[];
  /** The storage cluster the machines' daemons form, as the lab simulates it. */
  readonly ceph: SimCephCluster;
  private readonly stopper = new AbortController();
  private readonly steps = builtinSteps();

  /** `master` answers network boots in-process, and everything else too with the in-process link. */
  constructor(master: MasterLink, opts: LabOptions) {
    // Every machine listens for the lab's stop: a thousand listeners on one signal is by design.
    setMaxListeners(0, this.stopper.signal);
    const timing: Timing = { ...defaultTiming, ...definedOnly(opts) };
    const random = seeded((opts.seed ?? 42) + 1);
    const http = (opts.link ?? 'http') === 'http';
    if (http && !opts.masterUrl) throw new Error("the lab's http link needs the master's URL (masterUrl)");
    const ownAddresses = http && (opts.machineAddresses ?? (process.platform === 'linux' && onLoopback(opts.masterUrl ?? '')));
    this.machines = buildMachines(opts.nodes, opts.seed ?? 42, opts.disksPerMachine).map((spec) => {
      const disk = new MachineDisk(spec.mac, opts.diskDir ?? null);
      const address = ownAddresses ? labMachineAddress(spec.index) : null;
      const dhcp = opts.dhcp ? (mac: string, a: string) => opts.dhcp?.dhcpRequest(mac, a) : null;
      const link = http ? new HttpAgentLink(master, opts.masterUrl ?? '', disk, address, dhcp) : master;
      return new SimMachine(spec, link, this.steps, timing, random, this.stopper.signal, disk);
    });
    for (const m of this.machines) m.faults.failRate = opts.failRate ?? 0;
    this.ceph = opts.ceph ?? new SimCephCluster({ random: seeded((opts.seed ?? 42) + 2) });
    for (const m of this.machines) m.host = this.ceph.hosts;
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

  killDisk(ref: number | string, serial: string): void {
    const disk = this.machine(ref).spec.disks.find((d) => d.serial === serial);
    if (!disk) throw new Error(`no disk ${serial} on lab machine ${ref}`);
    disk.dead = true;
  }
}

function definedOnly(opts: Partial<Timing>): Partial<Timing> {
  const out: Partial<Timing> = {};
  for (const k of ['bootMs', 'stepMs', 'heartbeatMs', 'claimWaitMs'] as const) {
    if (opts[k] !== undefined) out[k] = opts[k];
  }
  return out;
}
