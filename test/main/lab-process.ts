// The lab as its own process (dist/src/sim/serve.js), for tests whose controllers are killed:
// the datacenter outlives them. Stopped (SIGKILL) when the test ends, whatever happened.
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LabState } from '../../src/sim/lab-protocol.js';
import type { Scope } from './controllers.js';

const SERVE = fileURLToPath(new URL('../../src/sim/serve.js', import.meta.url));

export class LabProcess {
  readonly lines: string[] = [];
  url = '';

  private constructor(private readonly proc: ChildProcess) {}

  /** Starts the lab with these LAB_* variables; answers once it listens. */
  static async start(t: Scope, env: Record<string, string>): Promise<LabProcess> {
    // stdin a pipe: the lab stops when this process dies, teardown or not.
    const proc = spawn(process.execPath, [SERVE], {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', LAB_EXIT_WITH_STDIN: '1', ...env },
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    const lab = new LabProcess(proc);
    t.teardown(() => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
    });
    await new Promise<void>((resolve, reject) => {
      let rest = '';
      proc.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        const parts = (rest + chunk).split('\n');
        rest = parts.pop() ?? '';
        for (const line of parts) {
          lab.lines.push(line);
          const url = /"message":"lab started","url":"([^"]+)"/.exec(line)?.[1];
          if (url) {
            lab.url = url;
            resolve();
          }
        }
      });
      proc.once('exit', (code) => reject(new Error(`the lab exited (${code}) before it started:\n${lab.lines.join('\n')}`)));
    });
    t.log(`lab: pid ${proc.pid} at ${lab.url}`);
    return lab;
  }

  /** Powers the machines on; their agents speak to these controllers, the first one first. */
  async boot(controllers: string[]): Promise<void> {
    const res = await fetch(`${this.url}/lab/start`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ controllers }),
    });
    if (res.status !== 200) throw new Error(`lab start: ${res.status} ${await res.text()}`);
  }

  async state(): Promise<LabState> {
    return (await (await fetch(`${this.url}/lab/state`)).json()) as LabState;
  }
}
