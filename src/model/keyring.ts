// The keyring file format that Ceph daemons and clients read (`ceph auth get` prints it):
//
//   [client.node1]
//   	key = AQ...==
//   	caps mon = "allow r"
//
// Rendered here rather than fetched as text, so a key only ever crosses the runner inside JSON
// that Quarry parses itself.
/** A cephx identity as Ceph lists it; the clients' AuthEntity has this shape. */
export interface AuthEntity {
  entity: string;
  /** The cephx secret: never log it. */
  key: string;
  caps: Record<string, string>;
}

export interface KeyringOptions {
  /** Include the `caps` lines (default true). Daemons need only the key; `ceph auth import`
   * needs the caps too. */
  withCaps?: boolean;
}

export function keyringText(entity: AuthEntity, opts: KeyringOptions = {}): string {
  const lines = [`[${entity.entity}]`, `\tkey = ${entity.key}`];
  if (opts.withCaps ?? true) {
    // Ceph prints caps sorted by service (mds, mgr, mon, osd).
    for (const service of Object.keys(entity.caps).sort()) {
      lines.push(`\tcaps ${service} = ${JSON.stringify(entity.caps[service])}`);
    }
  }
  return `${lines.join('\n')}\n`;
}

/** Several entities in one file, as `ceph auth export` writes them. */
export const keyringFile = (entities: AuthEntity[], opts: KeyringOptions = {}): string =>
  entities.map((e) => keyringText(e, opts)).join('');

/**
 * A new cephx secret, as `ceph-authtool --gen-print-key` makes one: base64 of
 * [u16 type = 1 (AES)][u32 seconds][u32 nanoseconds][u16 length = 16][16 random bytes],
 * little-endian. Generated here so the master can create the monitor and admin keys before
 * any Ceph tool or daemon exists, in the lab and on real machines alike.
 */
const CEPHX_KEY_BYTES = 28;

export function newCephxKey(now: number, random: (n: number) => Buffer): string {
  const b = Buffer.alloc(CEPHX_KEY_BYTES);
  b.writeUInt16LE(1, 0);
  b.writeUInt32LE(Math.floor(now / 1000), 2);
  b.writeUInt32LE((Math.floor(now) % 1000) * 1_000_000, 6);
  b.writeUInt16LE(16, 10);
  random(16).copy(b, 12);
  return b.toString('base64');
}

/** Whether `key` decodes as a cephx AES key: what the monitor checks in `osd new -i`. */
export function isCephxKey(key: string): boolean {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(key)) return false;
  const buf = Buffer.from(key, 'base64');
  return buf.length === CEPHX_KEY_BYTES && buf.readUInt16LE(0) === 1 && buf.readUInt16LE(10) === 16;
}
