// The lab's CRUSH map above the OSDs: buckets of every type of Ceph's default map with their
// parents, and the replicated rules. It answers the verbs as recorded from Ceph 16.2.15
// (test/fixtures/ceph/crush-*.json): add-bucket makes a parentless bucket and is success when
// the name exists (whatever its type); move creates the missing buckets of the location and
// stops at the first one that exists; an OSD's boot puts its host under the root only when the
// host bucket is new (create-or-move), so a host moved under a rack stays there.
import { CephRefusal } from './errors.js';
import type { SimPool } from './model.js';
import type { CrushView } from './placement.js';

export const CRUSH_TYPE_IDS: Readonly<Record<string, number>> = {
  osd: 0,
  host: 1,
  chassis: 2,
  rack: 3,
  row: 4,
  pdu: 5,
  pod: 6,
  room: 7,
  datacenter: 8,
  zone: 9,
  region: 10,
  root: 11,
};

export interface SimBucket {
  id: number;
  name: string;
  type: string;
  /** The bucket it is in; null for a root (`default`, or one added and not moved yet). */
  parent: string | null;
}

export interface SimRule {
  id: number;
  name: string;
  /** The bucket it takes. */
  root: string;
  /** The type it chooses leaves across. */
  type: string;
  deviceClass?: string;
}

const NAME = /^[A-Za-z0-9_.-]+$/;

export class SimCrush implements CrushView {
  readonly buckets = new Map<string, SimBucket>();
  readonly rules: SimRule[] = [];
  /** -1 is the root, -2 its class shadow; every bucket takes two ids, as on a cluster with one class. */
  private nextId = -3;
  /** crush_version: one more at every change. */
  version = 1;

  constructor(
    defaultType: 'host' | 'osd',
    private readonly bump: () => void,
  ) {
    this.buckets.set('default', { id: -1, name: 'default', type: 'root', parent: null });
    this.rules.push({ id: 0, name: 'replicated_rule', root: 'default', type: defaultType });
  }

  /** An OSD boots on `host` (create-or-move root=default host=NAME): a new host bucket goes under
   * the root; one that exists stays where it is. */
  hostBoot(host: string): void {
    if (this.buckets.has(host)) return;
    this.add(host, 'host', 'default');
  }

  idOf(name: string): number | undefined {
    return this.buckets.get(name)?.id;
  }

  /** `osd crush add-bucket NAME TYPE`. */
  addBucket(name: string, type: string): { created: boolean } {
    if (!NAME.test(name)) throw new CephRefusal('EINVAL', 'invalid command');
    if (this.buckets.has(name)) return { created: false };
    if (CRUSH_TYPE_IDS[type] === undefined || type === 'osd') throw new CephRefusal('EINVAL', `type '${type}' does not exist`);
    this.add(name, type, null);
    return { created: true };
  }

  /** `osd crush move NAME TYPE=NAME...`: under the location's lowest bucket, the missing ones
   * made on the way up until one exists. */
  move(name: string, location: Array<[string, string]>): { moved: boolean; id: number } {
    const item = this.buckets.get(name);
    if (!item) throw new CephRefusal('ENOENT', `item ${name} does not exist`);
    for (const [type] of location)
      if (CRUSH_TYPE_IDS[type] === undefined || type === 'osd') throw new CephRefusal('EINVAL', `unknown type ${type}`);
    const levels = [...location].sort((a, b) => (CRUSH_TYPE_IDS[a[0]] as number) - (CRUSH_TYPE_IDS[b[0]] as number));
    const first = levels[0];
    if (!first) throw new CephRefusal('EINVAL', 'no location given');
    if (item.parent === first[1]) return { moved: false, id: item.id };
    if (this.isUnder(first[1], name)) throw new CephRefusal('EINVAL', `cannot move ${name} under its own descendant ${first[1]}`);
    // Walk up the location: a missing bucket is made and hung under the next level.
    for (let i = 0; i < levels.length; i++) {
      const [type, bucket] = levels[i] as [string, string];
      if (this.buckets.has(bucket)) break;
      const up = levels[i + 1];
      this.add(bucket, type, up ? up[1] : null);
    }
    item.parent = first[1];
    this.changed();
    return { moved: true, id: item.id };
  }

  /** `osd crush rule create-replicated NAME ROOT TYPE [CLASS]`. */
  createRule(name: string, root: string, type: string, deviceClass?: string): { created: boolean } {
    if (this.rules.some((r) => r.name === name)) return { created: false };
    if (!this.buckets.has(root)) throw new CephRefusal('ENOENT', `root item ${root} does not exist`);
    if (CRUSH_TYPE_IDS[type] === undefined) throw new CephRefusal('EINVAL', `unknown type ${type}`);
    const id = Math.max(...this.rules.map((r) => r.id)) + 1;
    this.rules.push({ id, name, root, type, ...(deviceClass === undefined ? {} : { deviceClass }) });
    this.changed();
    return { created: true };
  }

  rule(name: string): SimRule | undefined {
    return this.rules.find((r) => r.name === name);
  }

  // ---- what placement reads -------------------------------------------------------------------
  ruleOf(pool: SimPool): { type: string; deviceClass?: string } | undefined {
    if (pool.crushRule === undefined || pool.crushRule === 0) return undefined;
    const r = this.rules.find((x) => x.id === pool.crushRule);
    return r ? { type: r.type, ...(r.deviceClass === undefined ? {} : { deviceClass: r.deviceClass }) } : undefined;
  }

  domainOf(host: string, type: string): string | undefined {
    let b = this.buckets.get(host);
    const seen = new Set<string>();
    while (b && !seen.has(b.name)) {
      if (b.type === type) return b.name;
      seen.add(b.name);
      b = b.parent === null ? undefined : this.buckets.get(b.parent);
    }
    return undefined;
  }

  /** Whether bucket `name` is `ancestor` or lies beneath it. */
  isUnder(name: string, ancestor: string): boolean {
    let b = this.buckets.get(name);
    const seen = new Set<string>();
    while (b && !seen.has(b.name)) {
      if (b.name === ancestor) return true;
      seen.add(b.name);
      b = b.parent === null ? undefined : this.buckets.get(b.parent);
    }
    return false;
  }

  private changed(): void {
    this.version += 1;
    this.bump();
  }

  private add(name: string, type: string, parent: string | null): void {
    this.buckets.set(name, { id: this.nextId, name, type, parent });
    this.nextId -= 2;
    this.changed();
  }
}
