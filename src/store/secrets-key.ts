// The data-encryption key of secrets at rest (src/store/secret-box.ts), kept apart from the
// store: SECRETS_KEY in the environment, or SECRETS_KEY_FILE (by default STATE_DIR's sibling
// `<STATE_DIR>.key`), made on first start. A copy of STATE_DIR alone then holds no usable
// secret; the key belongs on another volume, or in a systemd credential.
import { randomBytes } from 'node:crypto';
import { link, mkdir, readFile, stat, unlink, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, relative } from 'node:path';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import { newKeyText, parseKey, SecretBox, SecretKeyError } from './secret-box.js';

const octal = (mode: number): string => `0${(mode & 0o777).toString(8).padStart(3, '0')}`;

const inside = (dir: string, path: string): boolean => {
  const rel = relative(dir, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
};

export async function loadSecretBox(config: Pick<Config, 'secretsKey' | 'secretsKeyFile' | 'stateDir'>, log: Logger): Promise<SecretBox> {
  if (config.secretsKey !== null) return new SecretBox(parseKey(config.secretsKey, 'SECRETS_KEY'), 'SECRETS_KEY');
  const path = config.secretsKeyFile;
  const source = `SECRETS_KEY_FILE ${path}`;
  if (inside(config.stateDir, path)) {
    throw new SecretKeyError(
      `${source} is inside STATE_DIR ${config.stateDir}: the key must be kept apart from the state it protects (another volume, or a systemd credential)`,
    );
  }
  if (await createKeyFile(path))
    log(
      'info',
      'created the key that encrypts secrets at rest; keep it apart from STATE_DIR and back it up: the state cannot be read without it',
      { file: path },
    );
  const st = await stat(path);
  if (!st.isFile()) throw new SecretKeyError(`${source} is not a file`);
  if ((st.mode & 0o077) !== 0) {
    throw new SecretKeyError(
      `${source} is mode ${octal(st.mode)}: group or others can read the key that encrypts Quarry's secrets. Run: chmod 600 ${path}`,
    );
  }
  return new SecretBox(parseKey(await readFile(path, 'utf8'), source), source);
}

/** Creates the key file whole or not at all: written to a temporary file, then hard-linked into
 * place, which fails when another process got there first. Returns whether it made one. */
async function createKeyFile(path: string): Promise<boolean> {
  try {
    await stat(path);
    return false;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  await writeFile(tmp, newKeyText(), { mode: 0o600, flag: 'wx', flush: true });
  try {
    await link(tmp, path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    await unlink(tmp).catch(() => undefined);
  }
}
