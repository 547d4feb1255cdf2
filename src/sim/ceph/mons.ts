// The monitor map and quorum. Quorum is a strict majority of the monmap's monitors running;
// without it the cluster answers nothing (the CLI cannot even authenticate). Ranks follow the
// order monitors joined, as Pacific keeps them.
import { parseMonAddr, v1PortOf, type SimMon } from './model.js';

export class MonMap {
  fsid = '';
  epoch = 0;
  created = 0;
  modified = 0;
  /** Odd numbers, +2 on every change of quorum: 3 once the first monitor has formed one. */
  electionEpoch = 1;
  quorumSince = 0;
  readonly mons: SimMon[] = [];
  private lastQuorum = '';
  /** The monitors the first monmap named: each makes its own store from it. */
  private readonly firstMonitors = new Set<string>();

  constructor(private readonly now: () => number) {}

  get bootstrapped(): boolean {
    return this.epoch > 0;
  }

  /** `monmaptool --create --fsid F --addv NAME ADDR ...` + `ceph-mon --mkfs`: epoch 1, naming
   * the first monitors (`members`, by default this one alone); none runs yet. Another of those
   * first monitors doing its own mkfs from the same map, or doing it again, is a no-op;
   * anything else is refused. */
  bootstrap(
    fsid: string,
    name: string,
    addr: string,
    host?: string,
    members: Array<{ name: string; addr: string }> = [{ name, addr }],
  ): void {
    if (this.bootstrapped) {
      const first = this.mons[0];
      if (this.fsid === fsid && this.firstMonitors.has(name)) {
        if (host !== undefined) this.require(name).host = host;
        return;
      }
      throw new Error(`the cluster is already bootstrapped (fsid ${this.fsid}, mon.${first?.name ?? '?'})`);
    }
    if (!members.some((m) => m.name === name)) throw new Error(`mon.${name} is not in the first monmap it was given`);
    this.fsid = fsid;
    this.created = this.now();
    for (const m of members) this.add(m.name, m.addr, m.name === name ? host : undefined);
    for (const m of members) this.firstMonitors.add(m.name);
    this.epoch = 1;
  }

  /** A new monitor in the map (a new epoch); the same name and address again is a no-op. */
  add(name: string, addr: string, host?: string): SimMon {
    const { ip, port } = parseMonAddr(addr);
    const known = this.get(name);
    if (known) {
      if (known.ip !== ip || known.port !== port) throw new Error(`mon.${name} is in the monmap with address ${monAddr(known)}`);
      if (host !== undefined) known.host = host;
      return known;
    }
    const taken = this.mons.find((m) => m.ip === ip && m.port === port);
    if (taken) throw new Error(`address ${ip}:${port} is already used by mon.${taken.name}`);
    const mon: SimMon = { name, rank: this.mons.length, ip, port, running: false, ...(host === undefined ? {} : { host }) };
    this.mons.push(mon);
    this.epoch += 1;
    this.modified = this.now();
    // A bigger map needs a bigger majority: adding a monitor that is not running yet can
    // cost the quorum, as on a real cluster.
    this.elect();
    return mon;
  }

  /** `ceph mon remove`: out of the map (a new epoch), the others re-ranked in order. A running
   * monitor that is removed shuts itself down, as a real one does. */
  remove(name: string): SimMon | undefined {
    const i = this.mons.findIndex((m) => m.name === name);
    if (i < 0) return undefined;
    const [gone] = this.mons.splice(i, 1);
    this.mons.forEach((m, rank) => (m.rank = rank));
    this.epoch += 1;
    this.modified = this.now();
    this.elect();
    return gone;
  }

  get(name: string): SimMon | undefined {
    return this.mons.find((m) => m.name === name);
  }

  require(name: string): SimMon {
    const mon = this.get(name);
    if (!mon) throw new Error(`mon.${name} is not in the monmap`);
    return mon;
  }

  setRunning(name: string, running: boolean): void {
    this.require(name).running = running;
    this.elect();
  }

  /** The monitors in quorum, by rank; null when no strict majority is running. */
  quorum(): SimMon[] | null {
    const running = this.mons.filter((m) => m.running);
    return running.length * 2 > this.mons.length ? running : null;
  }

  leader(): SimMon | undefined {
    return this.quorum()?.[0];
  }

  /** An election: only a changed quorum moves the epoch and resets quorum_age. */
  private elect(): void {
    const q = this.quorum();
    const key = q ? q.map((m) => m.rank).join(',') : '';
    if (key === this.lastQuorum) return;
    this.lastQuorum = key;
    this.electionEpoch += 2;
    this.quorumSince = this.now();
  }
}

/** A monitor's address vector as Ceph prints it in health details. */
export const monAddr = (m: SimMon): string => `[v2:${m.ip}:${m.port}/0,v1:${m.ip}:${v1PortOf(m.port)}/0]`;
