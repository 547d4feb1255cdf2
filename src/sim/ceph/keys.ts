// Secrets in the formats Ceph and RGW hand out, drawn from the lab's injected generator so a
// seeded lab gives the same keys every run. The cephx frame itself is model/keyring.ts's.
import { newCephxKey as frameKey } from '../../model/keyring.js';
import type { Random } from '../random.js';

export { isCephxKey } from '../../model/keyring.js';

/** The entities of a keyring file (`[name]`, `key = ...`, `caps svc = "..."`), as Ceph reads
 * one; a section without a key is refused. */
export function parseKeyring(text: string): Array<{ entity: string; key: string; caps: Record<string, string> }> {
  const out: Array<{ entity: string; key: string; caps: Record<string, string> }> = [];
  let cur: { entity: string; key: string; caps: Record<string, string> } | null = null;
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith(';')) continue;
    const section = /^\[(.+)\]$/.exec(line);
    if (section) {
      cur = { entity: section[1] as string, key: '', caps: {} };
      out.push(cur);
      continue;
    }
    const kv = /^(key|caps\s+(\S+))\s*=\s*(.*)$/.exec(line);
    if (!cur || !kv) throw new Error(`keyring: cannot read line '${line.split('=')[0]?.trim() ?? ''}'`);
    const value = (kv[3] as string).replace(/^"(.*)"$/, '$1');
    if (kv[2] !== undefined) cur.caps[kv[2]] = value;
    else cur.key = value;
  }
  for (const e of out) if (!isCephxKeyText(e.key)) throw new Error(`keyring: no valid key for ${e.entity}`);
  return out;
}

const isCephxKeyText = (key: string): boolean => /^[A-Za-z0-9+/]{38}==$/.test(key);

/** A cephx key like `ceph-authtool --gen-print-key` prints ("AQ...==", 40 characters). */
export const newCephxKey = (random: Random, nowMs: number): string =>
  frameKey(nowMs, (n) => Buffer.from(Array.from({ length: n }, () => Math.floor(random() * 256) & 0xff)));

const UPPER_DIGITS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

const draw = (random: Random, alphabet: string, length: number): string =>
  Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length) % alphabet.length]).join('');

/** RGW's generated S3 access key: 20 upper-case letters and digits. */
export const rgwAccessKey = (random: Random): string => draw(random, UPPER_DIGITS, 20);

/** RGW's generated S3 secret key: 40 characters. */
export const rgwSecretKey = (random: Random): string => draw(random, ALNUM, 40);

/** A random RFC 4122 v4 uuid from the injected generator (daemons' fsids, zone ids). */
export function uuidFrom(random: Random): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(random() * 16).toString(16));
  hex[12] = '4';
  hex[16] = ((parseInt(hex[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  const h = hex.join('');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}
