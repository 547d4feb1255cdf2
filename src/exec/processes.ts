// Whether a process is still there: for the agent, which finds its daemons by pid file, and for
// tests that check a killed command is really gone.
import { readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';

/** A killed orphan stays a zombie until PID 1 reaps it (containers may never): that counts as gone. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Whether any process of process group `pgid` is still there (zombies count as gone, as above).
 * A group outlives its leader: a command's children stay in it after the command has exited. */
export async function groupAlive(pgid: number): Promise<boolean> {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    // EPERM: a member we may not signal is still a member.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  // Some member is there; only /proc tells a running one from a zombie nobody reaps.
  let pids: string[];
  try {
    pids = (await readdir('/proc')).filter((p) => /^\d+$/.test(p));
  } catch {
    return true;
  }
  const states = await Promise.all(pids.map((p) => readFile(`/proc/${p}/stat`, 'utf8').catch(() => '')));
  return states.some((stat) => {
    // After the command name: state, ppid, pgrp.
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
    return Number(pgrp) === pgid && state !== 'Z';
  });
}
