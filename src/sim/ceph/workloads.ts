// Pools and filesystems, with the checks the mons make before creating them and the pools
// the daemons create on their own: the mgr's device_health_metrics, radosgw's .rgw.root and
// default.rgw.*, and the few objects an active MDS writes into its metadata pool.
import type { FsMap, MgrMap } from './daemons.js';
import { CephRefusal } from './errors.js';
import type { SimCephOptions, SimFs, SimPool } from './model.js';
import type { OsdMap } from './osdmap.js';

/** The parts of SimCephCluster the workloads touch (an interface, not an import: no cycle). */
export interface WorkloadMaps {
  readonly options: SimCephOptions;
  readonly osdmap: OsdMap;
  readonly fsmap: FsMap;
  readonly mgrs: MgrMap;
}

const RGW_POOLS = ['.rgw.root', 'default.rgw.log', 'default.rgw.control', 'default.rgw.meta'];
/** What a fresh MDS journal and root directory take in the metadata pool (df.json). */
const MDS_FRESH = { objects: 22, bytes: 2306 };

export class Workloads {
  constructor(private readonly c: WorkloadMaps) {}

  /** `osd pool create NAME PG_NUM`: an existing name is success (Ceph does not compare). */
  createPool(name: string, pgNum: number, applications: SimPool['applications'] = {}): { created: boolean; pool: SimPool } {
    const known = this.c.osdmap.poolByName(name);
    if (known) return { created: false, pool: known };
    if (!Number.isInteger(pgNum) || pgNum < 1) throw new CephRefusal('EINVAL', `pg_num ${pgNum} must be a positive integer`);
    const size = this.c.options.poolDefaultSize;
    this.checkPgBudget(pgNum, size);
    return { created: true, pool: this.c.osdmap.createPool(name, pgNum, size, applications) };
  }

  /** OSDMonitor::check_pg_num: all PG replicas over mon_max_pg_per_osd × in OSDs (at least 3). */
  private checkPgBudget(pgNum: number, size: number): void {
    const o = this.c.options;
    const numIn = Math.max(3, [...this.c.osdmap.osds.values()].filter((x) => x.in).length);
    const existing = [...this.c.osdmap.pools.values()].reduce((n, p) => n + p.pgNum * p.size, 0);
    const projected = existing + pgNum * size;
    const max = o.maxPgPerOsd * numIn;
    if (projected > max) {
      throw new CephRefusal(
        'ERANGE',
        `pg_num ${pgNum} size ${size} would mean ${projected} total pgs, which exceeds max ${max} (mon_max_pg_per_osd ${o.maxPgPerOsd} * num_in_osds ${numIn})`,
      );
    }
  }

  /** `fs new NAME META DATA`: the same again is success; pools must exist, the metadata pool
   * must be empty, and neither may belong to another application. */
  newFs(name: string, metaName: string, dataName: string): { created: boolean; fs: SimFs } {
    const known = this.c.fsmap.get(name);
    const meta = this.c.osdmap.poolByName(metaName);
    const data = this.c.osdmap.poolByName(dataName);
    if (known) {
      if (known.metadataPool === meta?.id && known.dataPools.includes(data?.id ?? -1)) return { created: false, fs: known };
      throw new CephRefusal('EINVAL', `filesystem already exists with name '${name}'`);
    }
    if (!meta) throw new CephRefusal('ENOENT', `pool '${metaName}' does not exist`);
    if (!data) throw new CephRefusal('ENOENT', `pool '${dataName}' does not exist`);
    for (const p of [meta, data]) {
      const apps = Object.keys(p.applications);
      if (apps.length > 0 && !apps.includes('cephfs')) {
        throw new CephRefusal('EINVAL', `pool '${p.name}' (id '${p.id}') has a non-CephFS application enabled.`);
      }
    }
    if (meta.objects > 0) {
      throw new CephRefusal('EINVAL', `pool '${metaName}' already contains some objects. Use an empty pool instead.`);
    }
    this.c.osdmap.tagPool(meta, 'cephfs', { metadata: name });
    this.c.osdmap.tagPool(data, 'cephfs', { data: name });
    // What `fs new` sets on a metadata pool so it gets PGs and recovers first.
    Object.assign(meta.options, { pg_autoscale_bias: 4, pg_num_min: 16, recovery_priority: 5 });
    const fs = this.c.fsmap.create(name, meta.id, data.id);
    this.mdsChanged();
    return { created: true, fs };
  }

  /** An MDS that becomes active writes its journal and root into an empty metadata pool. */
  mdsChanged(): void {
    for (const fs of this.c.fsmap.filesystems) {
      const meta = this.c.osdmap.pools.get(fs.metadataPool);
      if (meta && meta.objects === 0 && this.c.fsmap.activeFor(fs)) {
        meta.objects = MDS_FRESH.objects;
        meta.storedBytes = MDS_FRESH.bytes;
      }
    }
  }

  /** The devicehealth module creates its pool (1 PG) when a mgr first becomes active. */
  mgrActive(): void {
    if (!this.c.mgrs.available || this.c.osdmap.poolByName('device_health_metrics')) return;
    try {
      this.createPool('device_health_metrics', 1, { mgr_devicehealth: {} });
    } catch (err) {
      // Over the PG budget the module only logs and tries again later; so does the sim.
      if (!(err instanceof CephRefusal)) throw err;
    }
  }

  /** radosgw's first start creates its zone pools; over the PG budget it fails to start. */
  rgwPools(): void {
    for (const name of RGW_POOLS) this.createPool(name, this.c.options.poolDefaultPgNum, { rgw: {} });
  }
}
