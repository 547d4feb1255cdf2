// The master's memory of what agents and boots said. Heartbeats are frequent and carry
// nothing new most of the time, so they update memory only; the node loop is woken when
// something changed, and when a node's last report goes stale: a sweep over this memory finds
// the few nodes that crossed the heartbeat timeout since the last sweep. (The loop used to set a
// timer per node for its staleness instead: at 10,000 nodes reporting every 5 s, that woke it
// ~600 times a second to find each node still fresh.) With several controllers, the leader's
// memory also takes the boots the others answered, from the store (boot-records.ts).
import { isDeepStrictEqual } from 'node:util';
import type { Clock } from '../model/clock.js';
import { MAX_BOOTS_KEPT } from '../model/boot-kinds.js';
import type { HeardBoot, HeardBoots } from './boot-record.js';
import type { AgentReport, BootStage, Observation } from './types.js';

/** How often the staleness sweep runs, as a fraction of the heartbeat timeout (at most once a
 * second, at least every 50 ms): a node is found stale this much after its deadline at worst. */
export const STALE_SWEEP_FRACTION = 0.05;

export function staleSweepEveryMs(heartbeatTimeoutMs: number): number {
  return Math.min(1_000, Math.max(50, Math.floor(heartbeatTimeoutMs * STALE_SWEEP_FRACTION)));
}

/** Told of every report and of every node forgotten: the heartbeat records (heartbeat-records.ts)
 * keep the store up to date from it. */
export interface FleetListener {
  /** `changed`: the report differs from the last one kept. */
  reported(nodeId: string, o: Observation, changed: boolean): void;
  forget(nodeId: string): void;
}

/** Told of every boot request this controller answered, counted or not: the boot records
 * (boot-records.ts) carry them to the leader through the store. */
export interface BootListener {
  heard(nodeId: string, boot: HeardBoot): void;
}

export class Fleet {
  private readonly obs = new Map<string, Observation>();
  /** The nodes whose last report the sweep found stale (told to the loop once per silence). */
  private readonly stale = new Set<string>();
  /** Nodes known only from the store (restore) since: no report heard live yet. */
  private readonly restoredOnly = new Set<string>();
  private wake: (nodeId: string) => void = () => {};
  private listener: FleetListener | null = null;
  private bootListener: BootListener | null = null;

  constructor(
    private readonly clock: Clock,
    private readonly heartbeatTimeoutMs: number,
  ) {}

  /** Called with a node id whenever its observation changed in a way a loop must see. */
  onChange(fn: (nodeId: string) => void): void {
    this.wake = fn;
  }

  listen(l: FleetListener): void {
    this.listener = l;
  }

  listenBoots(l: BootListener): void {
    this.bootListener = l;
  }

  /** What a previous leader heard (its heartbeat record and inventory in the store), loaded at the
   * election before the loops start; ignored when this Fleet has heard the node since. Wakes
   * nothing: the loops look at every node when they start. Answers whether it was taken. */
  restore(nodeId: string, heard: { lastReportAt: number; report: AgentReport | null; address: string | null }): boolean {
    const o = this.entry(nodeId);
    if (o.lastReportAt !== null && o.lastReportAt >= heard.lastReportAt) return false;
    o.lastReportAt = heard.lastReportAt;
    if (heard.report) o.report = heard.report;
    o.address = heard.address;
    this.restoredOnly.add(nodeId);
    return true;
  }

  observe(nodeId: string): Observation {
    return this.obs.get(nodeId) ?? { lastReportAt: null, report: null, address: null, boots: [] };
  }

  /** A network boot (`pxe`) counts toward a boot loop only while the node's agent is silent:
   * a boot request for a node whose agent reported within the heartbeat timeout is not the
   * machine looping (anyone can ask /boot/config with its MAC), so it is not recorded. Answers
   * whether it was recorded. */
  recordBoot(nodeId: string, stage: BootStage['stage'], address?: string): boolean {
    const o = this.entry(nodeId);
    const now = this.clock.now();
    o.seenAt = now;
    if (address !== undefined) this.noteAddress(nodeId, o, address, now);
    // Every request, counted here or not: the leader's memory judges it again on hearing it.
    this.bootListener?.heard(nodeId, { at: now, stage, ...(address !== undefined ? { address } : {}) });
    const boot = { at: now, stage };
    if (!this.counts(o, boot)) return false;
    o.boots.push(boot);
    if (o.boots.length > MAX_BOOTS_KEPT) o.boots.splice(0, o.boots.length - MAX_BOOTS_KEPT);
    this.wake(nodeId);
    return true;
  }

  /** Boots another controller answered, or a previous leader's (the node's boot record): taken
   * as if heard here, each boot judged by recordBoot's rule at its own time; what memory holds
   * already is not taken twice. `wake: false` at the election, as restore. */
  heardBoots(nodeId: string, heard: HeardBoots, wake = true): void {
    const o = this.entry(nodeId);
    const known = new Set(o.boots.map((b) => `${b.at}/${b.stage}`));
    const fresh = heard.boots.filter((b) => !known.has(`${b.at}/${b.stage}`) && this.counts(o, b));
    if (fresh.length > 0) {
      o.boots = [...o.boots, ...fresh].sort((a, b) => a.at - b.at).slice(-MAX_BOOTS_KEPT);
    }
    o.seenAt = Math.max(o.seenAt ?? heard.seenAt, heard.seenAt);
    const a = heard.bootAddress;
    let moved = false;
    if (a !== undefined && a.at > (o.bootAddressAt ?? Number.NEGATIVE_INFINITY)) {
      moved = a.address !== o.bootAddress;
      o.bootAddress = a.address;
      o.bootAddressAt = a.at;
    }
    if (wake && (fresh.length > 0 || moved)) this.wake(nodeId);
  }

  /** recordBoot's rule, at the boot's own time. */
  private counts(o: Observation, b: BootStage): boolean {
    return !(b.stage === 'pxe' && o.lastReportAt !== null && b.at - o.lastReportAt <= this.heartbeatTimeoutMs);
  }

  /** A machine asked for its boot script without it counting as a boot (an unapproved node
   * polling): the node loop forgets unapproved nodes not seen for long. */
  seen(nodeId: string, address?: string): void {
    const o = this.entry(nodeId);
    const now = this.clock.now();
    o.seenAt = now;
    if (address !== undefined) this.noteAddress(nodeId, o, address, now);
    this.bootListener?.heard(nodeId, { at: now, ...(address !== undefined ? { address } : {}) });
  }

  /** The address its boot requests come from, for the admin who decides on approval. */
  private noteAddress(nodeId: string, o: Observation, address: string, at: number): void {
    o.bootAddressAt = at;
    if (o.bootAddress === address) return;
    o.bootAddress = address;
    this.wake(nodeId);
  }

  /** `address`: where the report came from, as the master saw it (already a valid IP or null). */
  report(nodeId: string, report: AgentReport, address: string | null = null): void {
    const o = this.entry(nodeId);
    o.address = address;
    const now = this.clock.now();
    const wasStale = o.lastReportAt === null || now - o.lastReportAt > this.heartbeatTimeoutMs;
    const changed = !isDeepStrictEqual(o.report, report);
    o.lastReportAt = now;
    this.stale.delete(nodeId);
    // The first report heard live after a restore wakes the loop even if it says nothing new:
    // what waited for a report since the election (a restart's lease) goes on now.
    const firstLive = this.restoredOnly.delete(nodeId);
    if (changed) o.report = report;
    if (changed || wasStale || firstLive) this.wake(nodeId);
    this.listener?.reported(nodeId, o, changed);
  }

  forget(nodeId: string): void {
    this.obs.delete(nodeId);
    this.restoredOnly.delete(nodeId);
    this.stale.delete(nodeId);
    this.listener?.forget(nodeId);
  }

  /** Wakes the loop for each node whose last report went stale since the last sweep; answers
   * how many. A scan of the memory (10,000 nodes: well under a millisecond) rather than a timer
   * per node: reports move every deadline all the time. */
  sweep(): number {
    const now = this.clock.now();
    let woken = 0;
    for (const [nodeId, o] of this.obs) {
      if (o.lastReportAt === null || now - o.lastReportAt <= this.heartbeatTimeoutMs || this.stale.has(nodeId)) continue;
      this.stale.add(nodeId);
      this.wake(nodeId);
      woken++;
    }
    return woken;
  }

  /** Sweeps every staleSweepEveryMs until the returned function is called. */
  startSweeping(): () => void {
    const timer = setInterval(() => this.sweep(), staleSweepEveryMs(this.heartbeatTimeoutMs));
    timer.unref();
    return () => clearInterval(timer);
  }

  private entry(nodeId: string): Observation {
    let o = this.obs.get(nodeId);
    if (!o) {
      o = { lastReportAt: null, report: null, address: null, boots: [] };
      this.obs.set(nodeId, o);
    }
    return o;
  }
}
