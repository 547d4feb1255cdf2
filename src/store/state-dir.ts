// STATE_DIR is Quarry's alone: the store, run logs, keys, images and dnsmasq files. Files are
// created owner-only (umask 077, and explicit modes where Quarry creates them), and a STATE_DIR
// that others may read or write is refused at start rather than silently used: fixing it is one
// command, and an operator should know it was open.
import { chmod, lstat, mkdir, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { isMainThread } from 'node:worker_threads';
import type { Logger } from '../log.js';

export const STATE_FILE_MODE = 0o600;
export const STATE_DIR_MODE = 0o700;

export class StateDirError extends Error {
  readonly code = 'STATE_DIR_OPEN';
  constructor(message: string) {
    super(message);
    this.name = 'StateDirError';
  }
}

const octal = (mode: number): string => `0${(mode & 0o777).toString(8).padStart(3, '0')}`;

/** Everything the process creates from now on is its owner's only (worker threads share the
 * process's umask and may not set it). */
export function ownerOnlyUmask(): void {
  if (isMainThread) process.umask(0o077);
}

/**
 * Creates STATE_DIR 0700, or checks an existing one is not open to group or others (refused,
 * naming the fix), then takes group and other rights off anything inside it that has them (a
 * state written before these modes, a file copied in). Returns how many entries it tightened.
 */
export async function prepareStateDir(dir: string, log: Logger): Promise<number> {
  ownerOnlyUmask();
  let st;
  try {
    st = await stat(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    await mkdir(dir, { recursive: true, mode: STATE_DIR_MODE });
    await chmod(dir, STATE_DIR_MODE);
    return 0;
  }
  if (!st.isDirectory()) throw new StateDirError(`STATE_DIR ${dir} is not a directory`);
  if ((st.mode & 0o077) !== 0) {
    // A fresh checkout's state/ holds only its README and nothing to protect yet: first start
    // makes it private instead of asking the operator for a chmod before Quarry ever ran.
    if (await holdsOnlyReadme(dir)) {
      await chmod(dir, STATE_DIR_MODE);
      log('info', 'made the new STATE_DIR private (0700)', { dir });
      return tighten(dir);
    }
    throw new StateDirError(
      `STATE_DIR ${dir} is mode ${octal(st.mode)}: other users could read Quarry's store, keys and logs. Run: chmod 700 ${dir}`,
    );
  }
  const tightened = await tighten(dir);
  if (tightened > 0) log('warn', 'took group and other rights off files in STATE_DIR', { dir, entries: tightened });
  return tightened;
}

async function holdsOnlyReadme(dir: string): Promise<boolean> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries.length === 1 && entries[0]?.name === 'README.md' && entries[0].isFile();
}

/** Symbolic links are left alone: their target is not ours to change. */
async function tighten(dir: string): Promise<number> {
  let count = 0;
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isSymbolicLink()) continue;
    if (entry.isDirectory()) count += await tighten(path);
    const { mode } = await lstat(path).catch(() => ({ mode: 0 }));
    if ((mode & 0o077) !== 0) {
      await chmod(path, mode & 0o700).catch(() => undefined);
      count++;
    }
  }
  return count;
}
