// Whether a process is still there: for the agent, which finds its daemons by pid file, and for
// tests that check a killed command is really gone.
import { readFileSync } from 'node:fs';

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
