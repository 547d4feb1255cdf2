// Secrets kept in STATE_DIR: the token signing key and the generated first admin password.
// Both are readable by the owner only; a file found with looser rights is tightened. With the
// secrets key (src/store/secret-box.ts) the signing key is also encrypted, so a copy of
// STATE_DIR cannot forge sessions or signed links.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../log.js';
import { isSealed, type SecretBox } from '../../store/secret-box.js';

export const SIGNING_KEY_FILE = 'jwt-hs256.key';
export const ADMIN_PASSWORD_FILE = 'admin-password';

const OWNER_ONLY = 0o600;

async function tighten(path: string, logger: Logger): Promise<void> {
  const { mode } = await stat(path);
  if ((mode & 0o077) !== 0) {
    logger('warn', 'secret file was readable by others; restricting it to its owner', { file: path });
    await chmod(path, OWNER_ONLY);
  }
}

/** Writes a secret, creating the file owner-only from the first byte (no window where a
 * default umask leaves it readable). `exclusive` fails with EEXIST instead of replacing. */
export async function writeSecret(path: string, content: string, exclusive: boolean): Promise<void> {
  await writeFile(path, content, { mode: OWNER_ONLY, flag: exclusive ? 'wx' : 'w' });
  await chmod(path, OWNER_ONLY);
}

/** Where the sealed signing key belongs (the additional data of its encryption). */
const SIGNING_KEY_AAD = `file:${SIGNING_KEY_FILE}`;

/**
 * The HS256 key: 256 random bits made on first start and reused after, so tokens issued
 * before a restart stay valid. Two processes starting at once agree on the first file written.
 * With `box` the file holds the key sealed; a plaintext file (written before encryption) is
 * read and replaced by its sealed form.
 */
export async function loadSigningKey(stateDir: string, logger: Logger, box?: SecretBox): Promise<Uint8Array> {
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const path = join(stateDir, SIGNING_KEY_FILE);
  const fresh = randomBytes(32).toString('base64url');
  try {
    await writeSecret(path, `${box ? box.seal(fresh, SIGNING_KEY_AAD) : fresh}\n`, true);
    logger('info', 'created token signing key', { file: path });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    await tighten(path, logger);
  }
  const text = (await readFile(path, 'utf8')).trim();
  let encoded = text;
  if (isSealed(text)) {
    if (!box) throw new Error(`the signing key in ${path} is encrypted: start Quarry with its secrets key`);
    encoded = box.open(text, SIGNING_KEY_AAD);
  } else if (box) {
    // Each process that finds it plaintext writes its own sealed copy; all decrypt the same.
    const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
    await writeSecret(tmp, `${box.seal(text, SIGNING_KEY_AAD)}\n`, true);
    await rename(tmp, path);
    logger('info', 'encrypted the token signing key at rest', { file: path });
  }
  const key = Buffer.from(encoded, 'base64url');
  if (key.length < 32) throw new Error(`signing key in ${SIGNING_KEY_FILE} is shorter than 256 bits`);
  return new Uint8Array(key);
}
