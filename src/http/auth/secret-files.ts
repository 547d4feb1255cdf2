// Secrets kept in STATE_DIR: the token signing key and the generated first admin password.
// Both are readable by the owner only; a file found with looser rights is tightened.
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '../../log.js';

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

/**
 * The HS256 key: 256 random bits made on first start and reused after, so tokens issued
 * before a restart stay valid. Two processes starting at once agree on the first file written.
 */
export async function loadSigningKey(stateDir: string, logger: Logger): Promise<Uint8Array> {
  await mkdir(stateDir, { recursive: true, mode: 0o700 });
  const path = join(stateDir, SIGNING_KEY_FILE);
  try {
    await writeSecret(path, `${randomBytes(32).toString('base64url')}\n`, true);
    logger('info', 'created token signing key', { file: path });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    await tighten(path, logger);
  }
  const key = Buffer.from((await readFile(path, 'utf8')).trim(), 'base64url');
  if (key.length < 32) throw new Error(`signing key in ${SIGNING_KEY_FILE} is shorter than 256 bits`);
  return new Uint8Array(key);
}
