// One process per store directory: two writers appending to the same journal would interleave
// records and corrupt it. The lock is a file holding the owner's pid; a lock whose process is
// gone (a crash, a SIGKILL) is taken over, as postgres does with postmaster.pid.
import { open, readFile, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { FILE_MODE } from './journal.js';

export const LOCK_FILE = 'LOCK';

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the directory's lock and returns its release. */
export async function lockDir(dir: string): Promise<() => Promise<void>> {
  const path = join(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fh = await open(path, 'wx', FILE_MODE);
      await fh.writeFile(`${process.pid}\n`);
      await fh.close();
      return () => unlink(path).catch(() => undefined);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const pid = Number.parseInt(await readFile(path, 'utf8').catch(() => ''), 10);
    // Our own pid in a lock we do not hold is a previous incarnation (pid reuse in a container).
    if (Number.isInteger(pid) && pid !== process.pid && alive(pid)) {
      throw new Error(`store ${dir} is in use by process ${pid}; if that process is not Quarry, remove ${path}`);
    }
    await unlink(path).catch(() => undefined);
  }
  throw new Error(`could not take the lock ${path}`);
}
