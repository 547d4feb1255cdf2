// Name-based ids (UUID v5 layout over SHA-1): the same hardware always maps to the same id,
// so two concurrent discoveries of one MAC or one disk serial cannot create two objects.
import { createHash } from 'node:crypto';

export function nameUuid(namespace: string, name: string): string {
  const h = createHash('sha1').update(`${namespace}\0${name}`).digest();
  h[6] = ((h[6] ?? 0) & 0x0f) | 0x50;
  h[8] = ((h[8] ?? 0) & 0x3f) | 0x80;
  const x = h.subarray(0, 16).toString('hex');
  return `${x.slice(0, 8)}-${x.slice(8, 12)}-${x.slice(12, 16)}-${x.slice(16, 20)}-${x.slice(20, 32)}`;
}

export const nodeIdForMac = (mac: string): string => nameUuid('quarry/node', mac.toLowerCase());
export const diskIdFor = (nodeId: string, serial: string): string => nameUuid('quarry/disk', `${nodeId}/${serial}`);

/** The id of the Keyring document of a cephx entity: every loop, the API and the master's CLI
 * files find the same document. */
export const keyringIdFor = (entity: string): string => nameUuid('keyring', entity);
