// The OSD map: OSDs with their up/in state and CRUSH position, and the pools. Every change
// is a new epoch, as on a real cluster; placement is recomputed only when the epoch moves.
import { SimCrush } from './crush.js';
import { CephRefusal } from './errors.js';
import { crushWeightOf, defaultMinSize, type DeviceClass, type SimCephOptions, type SimOsd, type SimPool } from './model.js';

export const ZERO_UUID = '00000000-0000-0000-0000-000000000000';
/** The CRUSH root every host hangs under. */
export const CRUSH_ROOT = 'default';

export interface OsdBoot {
  host: string;
  sizeBytes: number;
  deviceClass: DeviceClass;
  ip?: string;
  devicePath?: string;
}

export class OsdMap {
  epoch = 1;
  created: number;
  modified: number;
  lastUpChange = 0;
  lastInChange = 0;
  poolMax = 0;
  readonly osds = new Map<number, SimOsd>();
  readonly pools = new Map<number, SimPool>();
  /** `osd set-group noout|noin|noup|nodown WHO`: per-OSD flags (osd dump's state), per-CRUSH-node
   * flags (crush_node_flags, by name) and per-device-class flags. */
  readonly osdFlags = new Map<number, Set<string>>();
  readonly crushNodeFlags = new Map<string, Set<string>>();
  readonly deviceClassFlags = new Map<string, Set<string>>();
  /** The CRUSH buckets above the OSDs and the rules: a change there is a new epoch too. Bucket
   * ids: -1 is the root, and every bucket also gets a device-class shadow bucket, so the first
   * hosts are -3, -5, ... as on a real cluster with one class. */
  readonly crush: SimCrush;

  constructor(
    private readonly now: () => number,
    defaultRuleType: SimCephOptions['failureDomain'] = 'host',
  ) {
    this.created = this.modified = now();
    this.crush = new SimCrush(defaultRuleType, () => this.bump());
  }

  get maxOsd(): number {
    return Math.max(0, ...[...this.osds.keys()].map((id) => id + 1));
  }

  private bump(): void {
    this.epoch += 1;
    this.modified = this.now();
  }

  require(id: number): SimOsd {
    const o = this.osds.get(id);
    if (!o) throw new CephRefusal('ENOENT', `osd.${id} does not exist`);
    return o;
  }

  /** `osd new UUID [ID] [-i {crush_device_class}]`: the id for this uuid, the same one again if
   * it is known. ID reuses a destroyed OSD's id with its CRUSH position and class: Ceph keeps
   * the class it has and ignores the one given (recorded: a non-fatal "already bound" note in
   * the mon's log). A fresh OSD gets the class given, and keeps it when it boots. */
  create(uuid: string, wantId?: number, deviceClass?: DeviceClass): { id: number; created: boolean } {
    const known = [...this.osds.values()].find((o) => o.uuid === uuid && !o.destroyed);
    if (known) {
      if (wantId !== undefined && wantId !== known.id) {
        throw new CephRefusal('EEXIST', `uuid ${uuid} already in use for different id ${known.id}`);
      }
      return { id: known.id, created: false };
    }
    if (wantId !== undefined) {
      const held = this.osds.get(wantId);
      if (held && !held.destroyed) throw new CephRefusal('EINVAL', `id ${wantId} already in use and does not match uuid ${uuid}`);
      if (held) {
        // Out and down until it boots, as recorded; then it is marked in like any new OSD.
        Object.assign(held, { uuid, destroyed: false, booted: false });
        this.bump();
        return { id: wantId, created: true };
      }
    }
    let id = wantId ?? 0;
    while (wantId === undefined && this.osds.has(id)) id += 1;
    // Ceph marks a new OSD in at once; it stays down (and outside CRUSH) until it boots.
    this.osds.set(id, {
      id,
      uuid,
      sizeBytes: 0,
      deviceClass: deviceClass ?? 'hdd',
      crushClass: deviceClass !== undefined,
      crushWeight: 0,
      up: false,
      in: true,
      autoOut: false,
      booted: false,
      destroyed: false,
      upFrom: 0,
      downAt: 0,
    });
    this.bump();
    this.lastInChange = this.modified;
    return { id, created: true };
  }

  /** The OSD process starts: it places itself under its host in CRUSH with a weight from its
   * size (osd_crush_update_on_start: create-or-move, so an entry it has keeps its weight) and
   * the device's class unless CRUSH has one (osd_class_update_on_start), and is marked up. A
   * new OSD that is not in yet (a reused id) is marked in (mon_osd_auto_mark_new_in). */
  boot(id: number, b: OsdBoot): void {
    const o = this.require(id);
    if (o.destroyed) throw new Error(`osd.${id} is destroyed: it cannot boot until \`osd new\` gives its id out again`);
    this.crush.hostBoot(b.host);
    if (o.host === undefined || o.crushWeight === 0) o.crushWeight = crushWeightOf(b.sizeBytes);
    if (!o.crushClass) o.deviceClass = b.deviceClass;
    Object.assign(o, { host: b.host, sizeBytes: b.sizeBytes, crushClass: true });
    if (b.ip !== undefined) o.ip = b.ip;
    if (b.devicePath !== undefined) o.devicePath = b.devicePath;
    if (o.up) return;
    if (!o.booted && !o.in) this.setIn(o, true);
    o.up = true;
    o.booted = true;
    delete o.downSince;
    if (o.autoOut) this.setIn(o, true);
    this.bump();
    o.upFrom = this.epoch;
    this.lastUpChange = this.modified;
  }

  down(id: number): void {
    const o = this.require(id);
    if (!o.up) return;
    o.up = false;
    o.downSince = this.now();
    this.bump();
    o.downAt = this.epoch;
    this.lastUpChange = this.modified;
  }

  setIn(o: SimOsd, isIn: boolean, auto = false): void {
    if (o.in === isIn) return;
    o.in = isIn;
    o.autoOut = !isIn && auto;
    this.bump();
    this.lastInChange = this.modified;
  }

  /** mon_osd_down_out_interval: OSDs down for that long are marked out (their data moves),
   * unless noout holds them (their own flag, their host's or root's, or their class's). */
  autoOut(intervalMs: number): void {
    const now = this.now();
    for (const o of this.osds.values()) {
      if (!o.up && o.in && o.booted && o.downSince !== undefined && now - o.downSince >= intervalMs && !this.hasFlag(o, 'noout')) {
        this.setIn(o, false, true);
      }
    }
  }

  /** Whether `flag` applies to the OSD, set on it or on a CRUSH node or class it belongs to. */
  hasFlag(o: SimOsd, flag: string): boolean {
    const on = (set: Set<string> | undefined) => set?.has(flag) ?? false;
    return (
      on(this.osdFlags.get(o.id)) ||
      on(this.crushNodeFlags.get(CRUSH_ROOT)) ||
      // A flag on any bucket above the OSD's host (its rack, its row) or on the host itself.
      (o.host !== undefined &&
        [...this.crushNodeFlags].some(([node, flags]) => flags.has(flag) && this.crush.isUnder(o.host as string, node))) ||
      on(this.deviceClassFlags.get(o.deviceClass))
    );
  }

  /** A CRUSH node by name: any bucket (the root, a rack, a host). */
  crushNodeExists(name: string): boolean {
    return this.crush.buckets.has(name);
  }

  /** Sets or clears flags on an OSD, CRUSH node or device class; a new epoch only on a change. */
  setGroupFlags(target: { id: number } | { node: string } | { deviceClass: string }, flags: string[], on: boolean): void {
    const [map, key] =
      'id' in target
        ? [this.osdFlags as Map<number | string, Set<string>>, target.id]
        : 'node' in target
          ? [this.crushNodeFlags as Map<number | string, Set<string>>, target.node]
          : [this.deviceClassFlags as Map<number | string, Set<string>>, target.deviceClass];
    const set = map.get(key) ?? new Set<string>();
    const before = set.size;
    for (const f of flags) {
      if (on) set.add(f);
      else set.delete(f);
    }
    if (set.size === 0) map.delete(key);
    else map.set(key, set);
    if (set.size !== before) this.bump();
  }

  /** `osd destroy`: the OSD stays in the map and CRUSH (id, position, weight, class) marked
   * destroyed, out, with a zero uuid; refused while it is up, as recorded. */
  destroy(id: number): void {
    const o = this.require(id);
    if (o.up) throw new CephRefusal('EBUSY', `osd.${id} is not \`down\`.`);
    this.setIn(o, false);
    if (o.destroyed) return;
    Object.assign(o, { destroyed: true, uuid: ZERO_UUID });
    this.bump();
  }

  /** `osd purge`: gone from the OSD map and CRUSH; its id is free again. */
  purge(id: number): void {
    const o = this.osds.get(id);
    if (!o) return;
    if (o.up) throw new CephRefusal('EBUSY', `osd.${id} is not \`down\`.`);
    this.osds.delete(id);
    this.osdFlags.delete(id);
    this.bump();
  }

  poolByName(name: string): SimPool | undefined {
    return [...this.pools.values()].find((p) => p.name === name);
  }

  createPool(name: string, pgNum: number, size: number, applications: SimPool['applications'] = {}): SimPool {
    const now = this.now();
    const pool: SimPool = {
      id: ++this.poolMax,
      name,
      pgNum,
      size,
      minSize: defaultMinSize(size),
      applications,
      options: {},
      storedBytes: 0,
      objects: 0,
      createdAt: now,
      lastChange: 0,
    };
    this.pools.set(pool.id, pool);
    this.bump();
    pool.lastChange = this.epoch;
    return pool;
  }

  /** `osd pool rm`: the pool and its objects go; its PGs with it (a new epoch). */
  removePool(pool: SimPool): void {
    this.pools.delete(pool.id);
    this.bump();
  }

  /** `osd pool set POOL crush_rule RULE`: its PGs are placed by that rule from this epoch on. */
  setPoolRule(pool: SimPool, ruleId: number): void {
    if ((pool.crushRule ?? 0) === ruleId) return;
    pool.crushRule = ruleId;
    this.bump();
    pool.lastChange = this.epoch;
  }

  /** An application tag on a pool (`osd pool application enable`), a new epoch. */
  tagPool(pool: SimPool, app: string, meta: Record<string, string>): void {
    pool.applications[app] = meta;
    this.bump();
    pool.lastChange = this.epoch;
  }
}
