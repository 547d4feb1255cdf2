// Who may talk to the cluster: cephx entities with their keys and caps (the mon's auth
// database), and RGW users with their S3 keys. Semantics follow AuthMonitor and
// radosgw-admin: get-or-create only compares the caps asked for; a user is never created twice.
// A caller proves who it is with its key: an entity the database lacks, or a key that is not
// the database's, is refused, as cephx refuses it (recorded from Ceph 16: after a mkfs whose
// keyring held only `mon.`, client.admin exists with a key the monitor made up, and a client
// with Quarry's client.admin key gets "permission denied" until that key is imported).
import { CephRefusal } from './errors.js';
import { newCephxKey, rgwAccessKey, rgwSecretKey } from './keys.js';
import type { SimAuthEntity, SimRgwUser } from './model.js';
import type { Random } from '../random.js';

/** What the first mon's mkfs puts in the auth database (AuthMonitor::create_initial_keys). */
const INITIAL_CAPS: Record<string, Record<string, string>> = {
  'mon.': { mon: 'allow *' },
  'client.admin': { mds: 'allow *', mgr: 'allow *', mon: 'allow *', osd: 'allow *' },
  ...Object.fromEntries(
    ['mds', 'mgr', 'osd', 'rbd', 'rbd-mirror', 'rgw'].map((k) => [`client.bootstrap-${k}`, { mon: `allow profile bootstrap-${k}` }]),
  ),
};

/** The caps `osd new` gives an OSD's own key. */
export const OSD_CAPS = { mgr: 'allow profile osd', mon: 'allow profile osd', osd: 'allow *' };

export class Accounts {
  readonly entities = new Map<string, SimAuthEntity>();
  readonly rgwUsers = new Map<string, SimRgwUser>();

  /** Entities whose key the sim does not know: a mkfs given no keyring (the lab's in-process
   * link carries none) took the node's mon. key unseen, so any key presented for it counts. */
  private readonly unseen = new Set<string>();

  constructor(
    private readonly random: Random,
    private readonly now: () => number,
  ) {}

  /** The first monitor's mkfs (AuthMonitor::create_initial_keys): every entity of the mkfs
   * keyring with its key and caps, and the initial ones it lacks with keys the monitor makes
   * up, which no one holds. Without a keyring (the lab's in-process link), `mon.` is unseen. */
  createInitial(keyring?: SimAuthEntity[]): void {
    for (const [entity, caps] of Object.entries(INITIAL_CAPS)) if (!this.entities.has(entity)) this.put(entity, caps);
    if (!keyring) {
      this.unseen.add('mon.');
      return;
    }
    this.importKeyring(keyring);
  }

  /** `auth import`: each entity takes the given key and caps (existing ones are replaced). */
  importKeyring(keyring: SimAuthEntity[]): void {
    for (const e of keyring) validEntity(e.entity);
    for (const e of keyring) {
      this.put(e.entity, e.caps, e.key);
      this.unseen.delete(e.entity);
    }
  }

  /** Whether `entity` may connect with `key` (undefined: the caller showed no key the sim can
   * see, so only the entity's existence is checked). */
  authenticates(entity: string, key: string | undefined): boolean {
    const e = this.entities.get(entity);
    if (!e) return false;
    return key === undefined || this.unseen.has(entity) || e.key === key;
  }

  get(entity: string): SimAuthEntity {
    const e = this.entities.get(entity);
    if (!e) throw new CephRefusal('ENOENT', `failed to find ${entity} in keyring`);
    return e;
  }

  /** `auth get-or-create`: an existing entity must already have every cap asked for. */
  getOrCreate(entity: string, caps: Record<string, string>): SimAuthEntity {
    validEntity(entity);
    const known = this.entities.get(entity);
    if (!known) return this.put(entity, caps);
    for (const service of Object.keys(caps).sort()) {
      if (known.caps[service] !== caps[service]) {
        throw new CephRefusal('EINVAL', `key for ${entity} exists but cap ${service} does not match`);
      }
    }
    return known;
  }

  /** An entity with a given key (`osd new` with a cephx_secret) or a new one. */
  put(entity: string, caps: Record<string, string>, key?: string): SimAuthEntity {
    const e = { entity, key: key ?? newCephxKey(this.random, this.now()), caps: { ...caps } };
    this.entities.set(entity, e);
    return e;
  }

  remove(entity: string): void {
    this.entities.delete(entity);
  }

  /** `radosgw-admin user create`: EEXIST for a known uid, even with the same arguments. */
  createUser(u: { uid: string; displayName: string; email?: string; accessKey?: string; secretKey?: string }): SimRgwUser {
    if (this.rgwUsers.has(u.uid)) {
      throw new CephRefusal('EEXIST', `could not create user: unable to parse parameters, user: ${u.uid} exists`);
    }
    if (u.displayName === '')
      throw new CephRefusal('EINVAL', 'could not create user: unable to parse parameters, no display name specified');
    const accessKey = u.accessKey ?? rgwAccessKey(this.random);
    if ([...this.rgwUsers.values()].some((x) => x.keys.some((k) => k.accessKey === accessKey))) {
      throw new CephRefusal('EEXIST', 'could not create user: unable to parse parameters, access key exists');
    }
    const user: SimRgwUser = {
      uid: u.uid,
      displayName: u.displayName,
      email: u.email ?? '',
      keys: [{ accessKey, secretKey: u.secretKey ?? rgwSecretKey(this.random) }],
    };
    this.rgwUsers.set(u.uid, user);
    return user;
  }

  /** `radosgw-admin user rm`: false when there was no such user. */
  removeUser(uid: string): boolean {
    return this.rgwUsers.delete(uid);
  }

  /** Pacific answers a missing user with EINVAL, not ENOENT. */
  user(uid: string): SimRgwUser {
    const user = this.rgwUsers.get(uid);
    if (!user) throw new CephRefusal('EINVAL', 'could not fetch user info: no user info saved');
    return user;
  }
}

function validEntity(entity: string): void {
  if (!/^(client|osd|mds|mgr|mon)\.[^\s]*$/.test(entity)) {
    throw new CephRefusal('EINVAL', `bad entity name: ${entity}`);
  }
}
