// Secrets kept in STATE_DIR: the generated first admin password, owner-only; and the token
// signing key file of an older Quarry, read once to move it into the store (signing-key.ts).
import { chmod, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { isSealed, type SecretBox } from '../../store/secret-box.js';

export const SIGNING_KEY_FILE = 'jwt-hs256.key';
export const ADMIN_PASSWORD_FILE = 'admin-password';

const OWNER_ONLY = 0o600;

/** Writes a secret, creating the file owner-only from the first byte (no window where a
 * default umask leaves it readable). `exclusive` fails with EEXIST instead of replacing. */
export async function writeSecret(path: string, content: string, exclusive: boolean): Promise<void> {
  await writeFile(path, content, { mode: OWNER_ONLY, flag: exclusive ? 'wx' : 'w' });
  await chmod(path, OWNER_ONLY);
}

/** Where the sealed signing key belonged (the additional data of its encryption). */
const SIGNING_KEY_AAD = `file:${SIGNING_KEY_FILE}`;

/**
 * The HS256 key an older Quarry kept in STATE_DIR, as base64url, or null when there is none.
 * It is read only to move it into the store (signing-key.ts); a sealed file needs the box.
 */
export async function readLegacySigningKey(stateDir: string, box?: SecretBox): Promise<string | null> {
  const path = join(stateDir, SIGNING_KEY_FILE);
  let text: string;
  try {
    text = (await readFile(path, 'utf8')).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
  if (isSealed(text)) {
    if (!box) throw new Error(`the signing key in ${path} is encrypted: start Quarry with its secrets key`);
    text = box.open(text, SIGNING_KEY_AAD);
  }
  const key = Buffer.from(text, 'base64url');
  if (key.length < 32) throw new Error(`signing key in ${SIGNING_KEY_FILE} is shorter than 256 bits`);
  return key.toString('base64url');
}

/** Removes the old key file; true when there was one. */
export async function removeLegacySigningKey(stateDir: string): Promise<boolean> {
  try {
    await unlink(join(stateDir, SIGNING_KEY_FILE));
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw err;
  }
}
