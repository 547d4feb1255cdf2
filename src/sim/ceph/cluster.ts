// One simulated Ceph cluster: the maps a real one keeps (mon, mgr, OSD, FS, auth) and the
// mutations the lab's node steps and the tests make, named after what happens on a node
// ("ceph-mon --mkfs + start", "the OSD process dies"). Queries derive placement, usage and
// health from that state on demand, so every answer is consistent with every other.
import { seeded } from '../random.js';
import { Accounts, OSD_CAPS } from './accounts.js';
import { Backfill } from './backfill.js';
import { FsMap, MgrMap } from './daemons.js';
import { CephRefusal } from './errors.js';
import { Hosts, type SimProcess } from './hosts.js';
import type { DaemonType } from '../../catalogue/index.js';
import { healthOf, type SimHealth } from './health.js';
import type { DeviceClass, SimAuthEntity, SimCephOptions, SimFs, SimPool, SimRgw } from './model.js';
import { MonMap } from './mons.js';
import { OsdMap } from './osdmap.js';
import { osdFlagLines } from './osd-flags.js';
import { Placement, type SimPg } from './placement.js';
import { usageOf, type Usage } from './usage.js';
import { Workloads } from './workloads.js';
import { SimBuckets } from '../s3/buckets.js';

export const defaultCephOptions = (): SimCephOptions => ({
  poolDefaultSize: 3,
  poolDefaultPgNum: 32,
  maxPgPerOsd: 250,
  failureDomain: 'host',
  nearfullRatio: 0.85,
  backfillfullRatio: 0.9,
  fullRatio: 0.95,
  downOutIntervalMs: 600_000,
  backfillPgsPerSec: 1_000,
  now: Date.now,
  random: seeded(7),
});

export interface SimMonDisk {
  host: string;
  serial: string;
  devicePath: string;
  gone: boolean;
}

/** Why a monitor is not started: its disk is gone (the agent's words). */
export const monDiskGone = (name: string, d: SimMonDisk): string =>
  `the monitor's disk ${d.devicePath} (serial ${d.serial}) is gone: mon.${name} is not started on an empty directory`;

export class SimCephCluster {
  readonly options: SimCephOptions;
  readonly mons: MonMap;
  readonly mgrs: MgrMap;
  readonly fsmap: FsMap;
  readonly osdmap: OsdMap;
  readonly accounts: Accounts;
  readonly rgws = new Map<string, SimRgw>();
  /** The monitors' config database (`ceph config set WHO KEY VALUE`), keyed `WHO KEY`. */
  readonly config = new Map<string, string>();
  /** What the RADOS gateways store (buckets and objects): RGW keeps it in RADOS, so
   * `radosgw-admin` sees it without a running gateway. */
  readonly buckets: SimBuckets;
  /** Daemons no Ceph map lists (an NFS gateway without cephadm): only their node knows they run. */
  readonly processes = new Map<string, SimProcess>();
  /** Pools and filesystems as the mgr, MDS and RGW create them. */
  readonly workloads: Workloads;
  /** Daemons by host: what an agent reports, power loss and systemd restarts. */
  readonly hosts: Hosts;
  /** Monitor stores on disk (`/var/lib/ceph/mon/ceph-NAME`), by monitor name: the host that
   * holds it. mkfs makes one; removing the monitor from the map leaves it behind. */
  readonly monStores = new Map<string, string>();
  /** The disk each monitor's store is on (the agent mounts it at the data dir): made by its
   * mkfs, gone when the disk dies; a monitor whose disk is gone is never started. */
  readonly monDisks = new Map<string, SimMonDisk>();
  /** PGs still moving off OSDs marked out while up. */
  readonly backfill: Backfill;
  private gids = 4100;
  private placed: { epoch: number; pgs: SimPg[]; byId: Map<string, SimPg> } | null = null;
  private readonly placement = new Placement();

  constructor(opts: Partial<SimCephOptions> = {}) {
    this.options = { ...defaultCephOptions(), ...opts };
    const now = () => this.options.now();
    const gid = () => this.nextGid();
    this.mons = new MonMap(now);
    this.mgrs = new MgrMap(gid, now);
    this.fsmap = new FsMap(gid, now);
    this.osdmap = new OsdMap(now, this.options.failureDomain);
    this.accounts = new Accounts(this.options.random, now);
    this.buckets = new SimBuckets(now);
    this.workloads = new Workloads(this);
    this.hosts = new Hosts(this);
    this.backfill = new Backfill(now, () => this.options.backfillPgsPerSec);
  }

  get fsid(): string {
    return this.mons.fsid;
  }

  /** Global ids as the mons hand them out: every daemon start gets a new one. */
  nextGid(): number {
    return (this.gids += 1);
  }

  // ---- monitors -------------------------------------------------------------------------------
  /** A first monitor's mkfs: the first one makes monmap epoch 1 (naming `members`, by default
   * itself alone) and the initial keys; the others named there make their stores from that
   * map. It is not started. `keyring` is the mkfs keyring (`--keyring`): it must hold the
   * `mon.` key, and its entities go into the auth database as they are; without it (the lab's
   * in-process link carries no keys) the monitor's key is taken unseen. */
  bootstrap(
    fsid: string,
    mon: { name: string; addr: string; host?: string },
    members?: Array<{ name: string; addr: string }>,
    keyring?: SimAuthEntity[],
  ): void {
    if (keyring) this.checkMonKey(mon.name, keyring);
    const fresh = !this.mons.bootstrapped;
    this.mons.bootstrap(fsid, mon.name, mon.addr, mon.host, members);
    if (mon.host !== undefined) this.monStores.set(mon.name, mon.host);
    if (fresh) this.accounts.createInitial(keyring);
  }

  /** A monitor's mkfs needs the `mon.` key; once the cluster exists it must be the cluster's,
   * or the new monitor could never authenticate to the others. */
  checkMonKey(name: string, keyring: SimAuthEntity[]): void {
    const mon = keyring.find((e) => e.entity === 'mon.');
    if (!mon) throw new Error(`ceph-mon: mon.${name}: the mkfs keyring holds no mon. key`);
    if (this.mons.bootstrapped && !this.accounts.authenticates('mon.', mon.key)) {
      throw new Error(`mon.${name}: its mon. key is not the cluster's: it cannot authenticate to the other monitors`);
    }
  }

  /** `ceph-mon --mkfs` with the cluster's monmap for a new monitor: a new monmap epoch. */
  addMonToMap(name: string, addr: string, host?: string): void {
    this.requireBootstrapped();
    this.mons.add(name, addr, host);
    if (host !== undefined) this.monStores.set(name, host);
  }

  /** `ceph mon remove NAME` (the map only; the store stays on its host). The last monitor is
   * refused, as Ceph does; quorum is the caller's business, as it is with Ceph. */
  removeMonFromMap(name: string): { removed: boolean } {
    this.requireBootstrapped();
    if (!this.mons.get(name)) return { removed: false };
    if (this.mons.mons.length === 1) throw new CephRefusal('EINVAL', `error: refusing removal of last monitor ${name}`);
    this.mons.remove(name);
    return { removed: true };
  }

  /** Starts a monitor of the map; with an address, one that is not in it yet joins first. */
  startMon(name: string, addr?: string, host?: string): void {
    if (addr !== undefined && !this.mons.get(name)) this.addMonToMap(name, addr, host);
    this.mons.setRunning(name, true);
  }

  stopMon(name: string): void {
    this.mons.setRunning(name, false);
  }

  /** The process dies; it stays down until something starts it again. */
  killMon(name: string): void {
    this.stopMon(name);
  }

  hasQuorum(): boolean {
    return this.mons.quorum() !== null;
  }

  // ---- mgr, MDS, RGW --------------------------------------------------------------------------
  startMgr(name: string, host?: string): void {
    this.mgrs.start(name, host);
    this.workloads.mgrActive();
  }
  stopMgr(name: string): void {
    this.mgrs.stop(name);
  }
  killMgr(name: string): void {
    this.stopMgr(name);
  }

  startMds(name: string, host?: string, ip?: string): void {
    this.fsmap.startMds(name, host, ip);
    this.workloads.mdsChanged();
  }
  stopMds(name: string): void {
    this.fsmap.stopMds(name);
  }
  killMds(name: string): void {
    this.stopMds(name);
  }

  /** radosgw creates its pools on first start; it fails to start when it cannot (ERANGE). */
  startRgw(name: string, port: number, host?: string): void {
    const known = this.rgws.get(name);
    if (known?.running && known.port === port) return;
    this.workloads.rgwPools();
    const h = host ?? known?.host;
    this.rgws.set(name, {
      name,
      port,
      gid: this.nextGid(),
      running: true,
      startedAt: this.options.now(),
      ...(h === undefined ? {} : { host: h }),
    });
  }
  stopRgw(name: string): void {
    const r = this.rgws.get(name);
    if (r) r.running = false;
  }
  killRgw(name: string): void {
    this.stopRgw(name);
  }

  startProcess(type: DaemonType, name: string, host?: string): void {
    const known = this.processes.get(`${type}.${name}`);
    const h = host ?? known?.host;
    this.processes.set(`${type}.${name}`, { type, name, running: true, ...(h === undefined ? {} : { host: h }) });
  }
  stopProcess(type: DaemonType, name: string): void {
    const p = this.processes.get(`${type}.${name}`);
    if (p) p.running = false;
  }

  // ---- OSDs -----------------------------------------------------------------------------------
  /** `ceph osd new UUID [ID]`: the id (the same for a known uuid; ID a destroyed one to reuse).
   * With a cephx secret the OSD's key is registered too, as `osd new -i` does; `deviceClass` is
   * its crush_device_class. */
  createOsd(uuid: string, opts: { id?: number; cephxSecret?: string; deviceClass?: DeviceClass } = {}): number {
    const { id } = this.osdmap.create(uuid, opts.id, opts.deviceClass);
    if (opts.cephxSecret !== undefined && !this.accounts.entities.has(`osd.${id}`)) {
      this.accounts.put(`osd.${id}`, OSD_CAPS, opts.cephxSecret);
    }
    return id;
  }

  /** The OSD process starts on `host` with a device of `sizeBytes`: up, and placed in CRUSH. */
  startOsd(id: number, host: string, sizeBytes: number, deviceClass: DeviceClass, where: { ip?: string; devicePath?: string } = {}): void {
    this.osdmap.boot(id, { host, sizeBytes, deviceClass, ...where });
  }

  /** The process stops or dies: the OSD is marked down (still in: its PGs degrade). */
  stopOsd(id: number): void {
    this.osdmap.down(id);
  }
  killOsd(id: number): void {
    this.stopOsd(id);
  }

  /** `ceph osd out`: CRUSH maps its PGs elsewhere. An OSD that is up keeps serving them until
   * they have moved (backfill, at options.backfillPgsPerSec); a down one has nothing to send
   * and its PGs recover from their other copies at once. */
  markOut(id: number): void {
    const o = this.osdmap.require(id);
    if (!o.in) return;
    const before = o.up ? this.pgs() : [];
    this.osdmap.setIn(o, false);
    if (o.up) this.backfill.start(id, before, this.pgs());
  }
  markIn(id: number): void {
    this.osdmap.setIn(this.osdmap.require(id), true);
    this.backfill.drop(id);
  }

  /** `osd set/unset nobackfill`: data stops moving (and moves on again). */
  pauseBackfill(paused = true): void {
    this.pgs();
    this.backfill.paused = paused;
  }

  /** `ceph osd purge`: out of the OSD map, CRUSH and auth. The OSD must be down. */
  purgeOsd(id: number): void {
    this.osdmap.purge(id);
    this.backfill.drop(id);
    this.accounts.remove(`osd.${id}`);
  }

  /** Named before `osd destroy` existed: it purges. New code says purgeOsd or destroyOsdKeepingId. */
  destroyOsd(id: number): void {
    this.purgeOsd(id);
  }

  /** `ceph osd destroy`: the key is gone, the id and CRUSH position stay, marked destroyed, for
   * the disk that replaces it (`osd new UUID ID`). The OSD must be down. */
  destroyOsdKeepingId(id: number): void {
    this.osdmap.destroy(id);
    this.backfill.drop(id);
    this.accounts.remove(`osd.${id}`);
  }

  // ---- pools and filesystems ------------------------------------------------------------------
  createPool(name: string, pgNum = this.options.poolDefaultPgNum): { created: boolean; pool: SimPool } {
    return this.workloads.createPool(name, pgNum);
  }

  newFs(name: string, metadataPool: string, dataPool: string): { created: boolean; fs: SimFs } {
    return this.workloads.newFs(name, metadataPool, dataPool);
  }

  /** `osd pool application enable POOL APP`: clients may now write without POOL_APP_NOT_ENABLED. */
  enableApplication(pool: string, app: string): void {
    const p = this.osdmap.poolByName(pool);
    if (!p) throw new CephRefusal('ENOENT', `pool '${pool}' does not exist`);
    this.osdmap.tagPool(p, app, {});
  }

  /** Clients wrote `bytes` (in `objects` objects, 4 MiB each by default) into a pool. */
  writeData(pool: string, bytes: number, objects = Math.ceil(bytes / (4 * 1024 * 1024))): void {
    const p = this.osdmap.poolByName(pool);
    if (!p) throw new CephRefusal('ENOENT', `pool '${pool}' does not exist`);
    p.storedBytes = Math.max(0, p.storedBytes + bytes);
    p.objects = Math.max(0, p.objects + objects);
  }

  // ---- derived state --------------------------------------------------------------------------
  /** Time passes for the mon too: OSDs down for mon_osd_down_out_interval are marked out. */
  tick(): void {
    this.osdmap.autoOut(this.options.downOutIntervalMs);
  }

  pgs(): SimPg[] {
    this.tick();
    if (this.placed?.epoch !== this.osdmap.epoch) {
      const pgs = this.placement.map(this.osdmap.osds.values(), this.osdmap.pools.values(), this.options.failureDomain, this.osdmap.crush);
      this.placed = { epoch: this.osdmap.epoch, pgs, byId: new Map(pgs.map((pg) => [pg.pgid, pg])) };
    }
    const { byId } = this.placed;
    // A PG moves once CRUSH has a full set of OSDs for it.
    this.backfill.advance((pgid) => {
      const pg = byId.get(pgid);
      return pg !== undefined && pg.mapped.length >= pg.pool.size;
    });
    return this.backfill.overlay(this.placed.pgs, this.osdmap.osds);
  }

  usage(): Usage {
    return usageOf([...this.osdmap.osds.values()], [...this.osdmap.pools.values()], this.pgs(), this.options.fullRatio);
  }

  health(): SimHealth {
    const pgs = this.pgs();
    return healthOf({
      mons: this.mons,
      mgrAvailable: this.mgrs.available,
      osds: [...this.osdmap.osds.values()],
      pools: [...this.osdmap.pools.values()],
      pgs,
      usage: this.usage(),
      filesystems: this.fsmap.filesystems.map((fs) => ({ fs, active: this.fsmap.activeFor(fs) !== undefined })),
      options: this.options,
      flagLines: osdFlagLines(this.osdmap),
    });
  }

  private requireBootstrapped(): void {
    if (!this.mons.bootstrapped) throw new Error('the cluster has not been bootstrapped: no monmap yet');
  }
}
