// One simulated machine: it network-boots, installs or boots its image, then runs an agent
// that reports inventory on a heartbeat and carries out node-level runs it claims. Faults are
// switches the lab flips: a partition silences the agent, a failing step reports an error.
import { NODE_DAEMON_TYPES } from '../catalogue/index.js';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import type { AgentReport, DaemonReport } from '../fleet/types.js';
import type { LogLine } from '../tasks/types.js';
import type { MachineSpec } from './machines.js';
import type { ClaimedRun, MasterLink } from '../fleet/protocol.js';
import type { Step } from './steps.js';
import { MachineDisk } from './disk.js';
import { AgentHttpError } from '../fleet/agent-session.js';
import { QuarryError } from '../errors.js';
import type { BootLogEntry, StepLogEntry } from './lab-protocol.js';

export interface Timing {
  bootMs: number;
  stepMs: number;
  heartbeatMs: number;
  claimWaitMs: number;
}

export interface MachineFaults {
  /** taskName → how many of its next runs fail. */
  failNext: Map<string, number>;
  /** taskName → the agent falls silent in the middle of its next run, for this many ms. */
  offlineDuring: Map<string, number>;
  /** Probability that any step fails. */
  failRate: number;
}

type AfterBoot = 'reboot' | 'poweroff';

export interface HostHooks {
  report(hostname: string): DaemonReport;
  up(hostname: string): void;
  down(hostname: string): void;
}

export class SimMachine {
  powered = false;
  partitioned = false;
  /** Hung (hang()): silent with its power on until the power is cut. */
  hung = false;
  bootId = '';
  nodeId: string | null = null;
  hostname = '';
  /** Daemons a later loop's steps have started; reported with the inventory. */
  readonly daemons = { ...Object.fromEntries(NODE_DAEMON_TYPES.map((t) => [t, false])), osds: [] as number[] } as DaemonReport;
  readonly faults: MachineFaults = { failNext: new Map(), offlineDuring: new Map(), failRate: 0 };
  /** The simulated cluster's view of this host, when the lab simulates Ceph: what runs here
   * comes from it, and a boot or power cut starts or stops the host's daemons in it. */
  host: HostHooks | null = null;
  /** Where the steps this machine carries out are recorded (the lab's step log). */
  stepLog: StepLogEntry[] | null = null;
  /** Where each boot's agent start is recorded (the lab's boot log): when a node was back. */
  bootLog: BootLogEntry[] | null = null;
  private boot: AbortController | null = null;
  private looping = false;
  private endBoot: ((a: AfterBoot) => void) | null = null;

  constructor(
    readonly spec: MachineSpec,
    private readonly link: MasterLink,
    private readonly steps: Map<string, Step>,
    private readonly timing: Timing,
    private readonly random: () => number,
    private readonly lab: AbortSignal,
    /** What survives a reboot: the agent's credential. */
    readonly disk: MachineDisk = new MachineDisk(spec.mac, null),
  ) {}

  powerOn(): void {
    if (this.powered || this.lab.aborted) return;
    this.powered = true;
    // A boot loop still winding down its last boot sees `powered` and boots again.
    if (!this.looping) void this.bootLoop();
  }

  /** Pulls the plug: no goodbye to the master. A hung machine is hung no more. */
  powerOff(): void {
    this.powered = false;
    if (this.hung) this.hung = this.partitioned = false;
    this.endBoot?.('poweroff');
  }

  report(): AgentReport {
    return {
      bootId: this.bootId,
      hostname: this.hostname,
      ip: this.spec.ip,
      disks: this.spec.disks.filter((d) => !d.dead).map(({ dead: _dead, stickySignature: _sticky, ...d }) => d),
      nics: this.spec.nics,
      daemons: this.host ? this.host.report(this.hostname) : { ...this.daemons, osds: [...this.daemons.osds] },
    };
  }

  // Every way a boot ends in 'poweroff' has cleared `powered` or stopped the lab already.
  private async bootLoop(): Promise<void> {
    this.looping = true;
    try {
      while (this.powered && !this.lab.aborted) {
        try {
          await this.bootOnce();
        } catch {
          // The master is unreachable or the lab is stopping: a real machine would retry PXE.
          if (!(await this.pause(this.timing.heartbeatMs, this.lab))) return;
        }
      }
    } finally {
      this.looping = false;
    }
  }

  private async bootOnce(): Promise<AfterBoot> {
    const answer = await this.link.pxeBoot(this.spec.mac);
    this.nodeId = answer.nodeId;
    this.hostname = answer.hostname;
    // iPXE's wait script sleeps, then asks again.
    if (answer.action === 'wait') return (await this.pause(this.timing.heartbeatMs, this.lab)) ? 'reboot' : 'poweroff';
    if (!(await this.pause(this.timing.bootMs / 2, this.lab))) return 'poweroff';
    if (answer.action === 'install') {
      await this.link.fetchImage(answer.nodeId);
      if (!(await this.pause(this.timing.bootMs / 2, this.lab))) return 'poweroff';
    }
    if (!this.powered) return 'poweroff';
    this.bootId = randomUUID();
    this.bootLog?.push({ index: this.spec.index, nodeId: answer.nodeId, bootId: this.bootId, at: Date.now() });
    this.host?.up(this.hostname);
    try {
      return await this.runAgent(answer.nodeId);
    } finally {
      // Rebooted, powered off or unplugged: whatever ran here stops with the machine.
      this.host?.down(this.hostname);
    }
  }

  private runAgent(nodeId: string): Promise<AfterBoot> {
    const boot = new AbortController();
    this.boot = boot;
    const onLabStop = () => this.endBoot?.('poweroff');
    const ended = new Promise<AfterBoot>((resolve) => {
      this.endBoot = (a) => {
        this.lab.removeEventListener('abort', onLabStop);
        boot.abort();
        resolve(a);
      };
    });
    this.lab.addEventListener('abort', onLabStop, { once: true });
    void this.heartbeats(nodeId, boot.signal);
    void this.claims(nodeId, boot.signal);
    return ended;
  }

  private async heartbeats(nodeId: string, signal: AbortSignal): Promise<void> {
    do {
      if (!this.partitioned && !signal.aborted) await this.link.report(nodeId, this.report()).catch(() => {});
    } while (await this.pause(this.timing.heartbeatMs, signal));
  }

  private async claims(nodeId: string, signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      if (this.partitioned) {
        if (!(await this.pause(this.timing.heartbeatMs, signal))) return;
        continue;
      }
      // One run at a time: claiming, the agent carries none (a run a dead leader handed out
      // that never got here is failed by the new one at this claim, and can start again).
      const run = await this.link.claim(nodeId, this.timing.claimWaitMs, signal, []).catch(() => undefined);
      // Partitioned while the long-poll was open: the answer never reached the machine, and
      // the claimed run is left to time out, as on a real network.
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- a partition may begin while the claim is awaited; TS keeps the narrowing from above
      if (run && !this.partitioned) await this.execute(nodeId, run, signal);
      // A failed claim (master unreachable, login refused) waits a heartbeat before the next.
      else if (!(await this.pause(run === undefined ? this.timing.heartbeatMs : 1, signal))) return;
    }
  }

  private async execute(nodeId: string, run: ClaimedRun, signal: AbortSignal): Promise<void> {
    const lines: LogLine[] = [];
    const log = (level: LogLine['level'], message: string) => lines.push({ timestamp: new Date().toISOString(), level, message });
    const next: { after: AfterBoot | null } = { after: null };
    log('info', `${this.hostname}: ${run.taskName} started`);
    if (!(await this.pause(this.timing.stepMs, signal))) return;
    const silentFor = this.faults.offlineDuring.get(run.taskName);
    if (silentFor !== undefined) {
      this.faults.offlineDuring.delete(run.taskName);
      this.partition(silentFor);
      return;
    }
    const result = await this.outcome(run, log, (a) => (next.after = a));
    // A step that reboots or powers off is under way once it ran: the agent's report is the
    // last thing this boot says (no heartbeat after it), and a powered-off machine is off by
    // the time the master may see the run completed.
    if (next.after) this.boot?.abort();
    if (next.after === 'poweroff') this.powered = false;
    // Delivered whatever happens to the controllers meanwhile: a result lost here would have
    // the run failed and its step carried out again.
    await this.deliver(() => this.link.log(nodeId, run.id, lines));
    await this.deliver(() => this.link.finish(nodeId, run.id, result));
    if (next.after) {
      this.endBoot?.(next.after);
      return;
    }
    // A step may have started or stopped a daemon: say so now, as a real agent does, rather
    // than on the next heartbeat.
    if (!this.partitioned) await this.link.report(nodeId, this.report()).catch(() => {});
  }

  private async outcome(run: ClaimedRun, log: (l: LogLine['level'], m: string) => void, after: (a: AfterBoot) => void) {
    const left = this.faults.failNext.get(run.taskName) ?? 0;
    if (left > 0 || this.random() < this.faults.failRate) {
      if (left > 0) this.faults.failNext.set(run.taskName, left - 1);
      log('error', 'simulated failure');
      return { ok: false, error: `${run.taskName} failed on ${this.hostname} (simulated fault)` };
    }
    const step = this.steps.get(run.taskName);
    if (!step) return { ok: false, error: `the agent has no step named ${run.taskName}` };
    const entry = { runId: run.id, taskName: run.taskName, nodeId: this.nodeId, hostname: this.hostname, args: run.args, at: Date.now() };
    this.stepLog?.push(entry);
    try {
      const link = this.link;
      const keyrings = link.keyrings && this.nodeId ? { keyrings: () => link.keyrings!(this.nodeId!) } : {};
      const result = await step({ machine: this.spec, args: run.args, log, after, ...keyrings });
      return { ok: true, ...(result ? { result } : {}) };
    } catch (err) {
      // As the real agent does: the reason is in the run's log too (a refused argument, ...).
      const error = err instanceof Error ? err.message : String(err);
      log('error', error);
      return { ok: false, error };
    }
  }

  /** Tries until the master takes it, or refuses it for good (a 4xx: the run is not this
   * node's, or no longer running), or the lab stops. Master unreachable, no leader (503), a
   * follower that cannot reach the leader (502): tried again a heartbeat later, at most a
   * minute's worth, as a real agent keeps a result until the master is back. */
  private async deliver(send: () => Promise<void>): Promise<void> {
    for (let tries = 0; tries * this.timing.heartbeatMs < 60_000; tries++) {
      try {
        await send();
        return;
      } catch (err) {
        // Over HTTP the refusal is an AgentHttpError; in-process, the master's own error.
        const status = err instanceof AgentHttpError || err instanceof QuarryError ? err.status : 0;
        if (status >= 400 && status < 500) return;
        if (!(await this.pause(Math.max(this.timing.heartbeatMs, 50), this.lab))) return;
      }
    }
  }

  /** The agent falls silent (network partition); it speaks again after ms, if given. */
  partition(ms?: number): void {
    this.partitioned = true;
    if (ms !== undefined) void this.pause(ms, this.lab).then(() => (this.partitioned = false));
  }

  /** The machine hangs (a wedged kernel), its power on: the agent falls silent and whatever
   * ran on it stops; only a power cut (its BMC) ends it. */
  hang(): void {
    this.hung = this.partitioned = true;
    if (this.hostname) this.host?.down(this.hostname);
  }

  heal(): void {
    this.partitioned = false;
  }

  /** Resolves true after ms, false when the signal aborts first. */
  private async pause(ms: number, signal: AbortSignal): Promise<boolean> {
    if (signal.aborted) return false;
    try {
      await sleep(ms, undefined, { signal, ref: false });
      return true;
    } catch {
      return false;
    }
  }
}
