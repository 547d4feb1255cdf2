// The daemons by host: what a machine's agent reports as running, what dies when the machine
// loses power, and what systemd starts again when it boots. Crashed daemons (kill*) are not
// restarted by a boot: they were not running when the power went.
import { DAEMON_TYPES, Daemon, DISK_DAEMON_TYPE as DISK_KIND, type DaemonType } from '../../catalogue/index.js';
import type { DaemonReport } from '../../fleet/types.js';
import type { FsMap, MgrMap } from './daemons.js';
import type { DeviceClass, SimRgw } from './model.js';
import type { MonMap } from './mons.js';
import type { OsdMap } from './osdmap.js';

export type DaemonKind = DaemonType;

type Listed = { name: string; host?: string; running: boolean };
/** A daemon outside Ceph's maps, known only to its node (SimCephCluster.processes). */
export type SimProcess = Listed & { type: DaemonType };

/** A kind that no Ceph map lists: the lab keeps it as a plain process of its node. */
const plainProcess = (type: DaemonType) => ({
  list: (c: HostedCluster) => [...c.processes.values()].filter((p) => p.type === type),
  start: (c: HostedCluster, name: string, host: string | undefined) => c.startProcess(type, name, host),
  stop: (c: HostedCluster, name: string) => c.stopProcess(type, name),
});

/** How the simulated cluster lists, starts and stops each daemon kind of the catalogue: a kind
 * without a line here is a type error. */
const SIM = {
  mon: {
    list: (c) => c.mons.mons,
    // Its store's disk is gone: the agent does not start it on an empty directory.
    start: (c, name) => (c.monDisks.get(name)?.gone === true ? undefined : c.startMon(name)),
    stop: (c, name) => c.stopMon(name),
  },
  mgr: { list: (c) => c.mgrs.daemons.values(), start: (c, name) => c.startMgr(name), stop: (c, name) => c.stopMgr(name) },
  mds: { list: (c) => c.fsmap.mds.values(), start: (c, name) => c.startMds(name), stop: (c, name) => c.stopMds(name) },
  rgw: {
    list: (c) => c.rgws.values(),
    start: (c, name) => c.startRgw(name, c.rgws.get(name)?.port ?? 7480),
    stop: (c, name) => c.stopRgw(name),
  },
  nfs: plainProcess(Daemon.nfs),
  osd: {
    list: (c) =>
      [...c.osdmap.osds.values()].map((o) => ({ name: String(o.id), running: o.up, ...(o.host === undefined ? {} : { host: o.host }) })),
    start: (c, name, host) => {
      const o = c.osdmap.require(Number(name));
      if (host === undefined) throw new Error(`osd.${name} has never run: create it on a disk first`);
      // Destroyed while its host was down: ceph-osd cannot authenticate (its key is gone) and exits.
      if (o.destroyed) return;
      c.startOsd(o.id, host, o.sizeBytes, o.deviceClass);
    },
    stop: (c, name) => c.stopOsd(Number(name)),
  },
} satisfies {
  [T in DaemonType]: {
    list(c: HostedCluster): Iterable<Listed>;
    start(c: HostedCluster, name: string, host: string | undefined): void;
    stop(c: HostedCluster, name: string): void;
  };
};

/** The parts of SimCephCluster this needs (an interface, not an import: no cycle). */
export interface HostedCluster {
  readonly mons: MonMap;
  readonly mgrs: MgrMap;
  readonly fsmap: FsMap;
  readonly osdmap: OsdMap;
  readonly rgws: Map<string, SimRgw>;
  readonly processes: Map<string, SimProcess>;
  readonly monDisks: Map<string, { gone: boolean }>;
  startProcess(type: DaemonType, name: string, host?: string): void;
  stopProcess(type: DaemonType, name: string): void;
  startMon(name: string): void;
  stopMon(name: string): void;
  startMgr(name: string): void;
  stopMgr(name: string): void;
  startMds(name: string): void;
  stopMds(name: string): void;
  startRgw(name: string, port: number): void;
  stopRgw(name: string): void;
  startOsd(id: number, host: string, sizeBytes: number, deviceClass: DeviceClass): void;
  stopOsd(id: number): void;
}

export class Hosts {
  /** Per host: the daemons ("osd.3") running when it lost power. */
  private readonly suspended = new Map<string, string[]>();

  constructor(private readonly c: HostedCluster) {}

  /** What runs on a host, as its agent reports it. */
  report(host: string): DaemonReport {
    const on = <T extends { host?: string; running: boolean }>(xs: Iterable<T>) => [...xs].some((d) => d.host === host && d.running);
    const flags = Object.fromEntries(DAEMON_TYPES.filter((t) => t !== DISK_KIND).map((t) => [t, on<Listed>(SIM[t].list(this.c))]));
    return { ...flags, osds: [...this.c.osdmap.osds.values()].filter((o) => o.host === host && o.up).map((o) => o.id) };
  }

  /** The host lost power: everything on it stops. */
  down(host: string): void {
    const running = this.all().filter((d) => d.host === host && d.running);
    for (const d of running) this.stop(d.kind, d.name);
    this.suspended.set(host, [...(this.suspended.get(host) ?? []), ...running.map((d) => `${d.kind}.${d.name}`)]);
  }

  /** The host booted: systemd starts again what was running when it went down. */
  up(host: string): void {
    for (const d of this.suspended.get(host) ?? []) {
      const dot = d.indexOf('.');
      const [kind, name] = [d.slice(0, dot) as DaemonKind, d.slice(dot + 1)];
      // A monitor removed from the map while its host was down has nothing to start.
      if (this.all().some((x) => x.kind === kind && x.name === name)) this.start(kind, name);
    }
    this.suspended.delete(host);
  }

  /** Per host: the daemons ("osd.3") its maintenance stopped, to start again when it ends. */
  private readonly held = new Map<string, string[]>();

  /** node.daemons-stop: every daemon of the host stopped, in `order` (a retry adds to the list). */
  stopForMaintenance(host: string, order: readonly DaemonKind[]): string[] {
    const rank = (k: DaemonKind) => order.indexOf(k);
    const running = this.all()
      .filter((d) => d.host === host && d.running)
      .sort((a, b) => rank(a.kind) - rank(b.kind));
    this.held.set(host, [...new Set([...(this.held.get(host) ?? []), ...running.map((d) => `${d.kind}.${d.name}`)])]);
    for (const d of running) this.stop(d.kind, d.name);
    return running.map((d) => `${d.kind}.${d.name}`);
  }

  /** node.daemons-start: what the maintenance stopped, started again in reverse order. */
  startAfterMaintenance(host: string, order: readonly DaemonKind[]): string[] {
    const rank = (k: string) => order.indexOf(k as DaemonKind);
    const names = [...(this.held.get(host) ?? [])].sort((a, b) => rank(b.slice(0, b.indexOf('.'))) - rank(a.slice(0, a.indexOf('.'))));
    for (const d of names) {
      const dot = d.indexOf('.');
      const [kind, name] = [d.slice(0, dot) as DaemonKind, d.slice(dot + 1)];
      if (this.all().some((x) => x.kind === kind && x.name === name && !x.running)) this.start(kind, name);
    }
    this.held.delete(host);
    return names;
  }

  /** Every daemon the cluster knows, wherever it runs: `osd` names are ids. */
  all(): { kind: DaemonKind; name: string; host?: string; running: boolean }[] {
    const of = (kind: DaemonKind, xs: Iterable<Listed>) =>
      [...xs].map((d) => ({ kind, name: d.name, running: d.running, ...(d.host === undefined ? {} : { host: d.host }) }));
    return DAEMON_TYPES.flatMap((t) => of(t, SIM[t].list(this.c)));
  }

  stop(kind: DaemonKind, name: string): void {
    this.known(kind, name);
    SIM[kind].stop(this.c, name);
  }

  /** Starts a known daemon again where it ran before ("systemctl start ceph-osd@3"). */
  start(kind: DaemonKind, name: string): void {
    const d = this.known(kind, name);
    SIM[kind].start(this.c, name, d.host);
  }

  restart(kind: DaemonKind, name: string): void {
    this.stop(kind, name);
    this.start(kind, name);
  }

  private known(kind: DaemonKind, name: string): { host?: string } {
    const d = this.all().find((x) => x.kind === kind && x.name === name);
    if (!d) throw new Error(`${kind}.${name} is not known to the cluster`);
    return d;
  }
}
