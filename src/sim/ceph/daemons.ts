// The mgr map and the filesystem map. One mgr is active and the others wait as standbys; an
// MDS without a rank waits as a standby until a filesystem needs one. Failover is instant.
import type { SimDaemon, SimFs, SimMds } from './model.js';

type NewGid = () => number;

export class MgrMap {
  epoch = 1;
  active: string | null = null;
  readonly daemons = new Map<string, SimDaemon>();

  constructor(
    private readonly gid: NewGid,
    private readonly now: () => number,
  ) {}

  get available(): boolean {
    return this.active !== null;
  }

  standbys(): SimDaemon[] {
    return [...this.daemons.values()].filter((d) => d.running && d.name !== this.active);
  }

  start(name: string, host?: string): void {
    const known = this.daemons.get(name);
    if (known?.running) return;
    this.daemons.set(name, { name, gid: this.gid(), running: true, startedAt: this.now(), ...hostOf(known, host) });
    if (this.active === null) this.active = name;
    this.epoch += 1;
  }

  stop(name: string): void {
    const d = this.daemons.get(name);
    if (!d?.running) return;
    d.running = false;
    if (this.active === name) this.active = this.standbys()[0]?.name ?? null;
    this.epoch += 1;
  }
}

export class FsMap {
  epoch = 1;
  readonly filesystems: SimFs[] = [];
  readonly mds = new Map<string, SimMds>();
  private nextFsId = 1;

  constructor(
    private readonly gid: NewGid,
    private readonly now: () => number,
  ) {}

  get(name: string): SimFs | undefined {
    return this.filesystems.find((f) => f.name === name);
  }

  /** The MDS holding rank 0 of `fs`, if one does. */
  activeFor(fs: SimFs): SimMds | undefined {
    return [...this.mds.values()].find((m) => m.running && m.fsId === fs.id);
  }

  standbys(): SimMds[] {
    return [...this.mds.values()].filter((m) => m.running && m.fsId === undefined);
  }

  create(name: string, metadataPool: number, dataPool: number): SimFs {
    const fs: SimFs = {
      id: this.nextFsId++,
      name,
      metadataPool,
      dataPools: [dataPool],
      maxMds: 1,
      everActive: false,
      createdAt: this.now(),
    };
    this.filesystems.push(fs);
    this.epoch += 1;
    this.assign();
    return fs;
  }

  startMds(name: string, host?: string, ip?: string): void {
    const known = this.mds.get(name);
    if (known?.running) return;
    this.mds.set(name, { name, gid: this.gid(), running: true, startedAt: this.now(), ...hostOf(known, host, ip) });
    this.epoch += 1;
    this.assign();
  }

  stopMds(name: string): void {
    const d = this.mds.get(name);
    if (!d?.running) return;
    d.running = false;
    delete d.fsId;
    this.epoch += 1;
    this.assign();
  }

  /** `fs fail`: not joinable, its active MDS back to standby. */
  fail(fs: SimFs): void {
    fs.joinable = false;
    for (const m of this.mds.values()) if (m.fsId === fs.id) delete m.fsId;
    this.epoch += 1;
    this.assign();
  }

  /** `fs rm`: gone from the map (its pools stay). */
  remove(fs: SimFs): void {
    this.filesystems.splice(this.filesystems.indexOf(fs), 1);
    this.epoch += 1;
  }

  /** Every filesystem without an active MDS takes a standby, in the order they were made. */
  private assign(): void {
    for (const fs of this.filesystems) {
      if (this.activeFor(fs) || fs.joinable === false) continue;
      const standby = this.standbys()[0];
      if (!standby) return;
      standby.fsId = fs.id;
      fs.everActive = true;
      this.epoch += 1;
    }
  }
}

/** A restarted daemon stays on its host (and address) unless a new one is named. */
function hostOf(known: SimDaemon | undefined, host: string | undefined, ip?: string): { host?: string; ip?: string } {
  const h = host ?? known?.host;
  const i = ip ?? (host === undefined ? known?.ip : undefined);
  return { ...(h === undefined ? {} : { host: h }), ...(i === undefined ? {} : { ip: i }) };
}
