// A node's BMC over IPMI: chassis power status, on, off and cycle. The real one runs
// `ipmitool -I lanplus` on the master; the lab's (src/sim/bmc.ts) answers for its machines. The
// password travels only in the IPMI_PASSWORD environment variable (`-E`), never as an argument,
// and is scrubbed from anything ipmitool says before it reaches a log or an error.
import type { Runner } from '../exec/runner.js';

export type PowerState = 'on' | 'off';

/** Where a BMC is and how to log in; the password is a secret. */
export interface BmcTarget {
  address: string;
  port: number;
  username: string;
  password: string;
}

export { DEFAULT_BMC_PORT } from '../model/kinds.js';

/** What a call gets from the run it serves: its deadline, its log and its command runner. */
export interface BmcCall {
  signal?: AbortSignal;
  log?: (level: 'info' | 'warn' | 'error', message: string) => void;
  /** The run's Runner (its output streams into the run's log); the real client needs it. */
  runner?: Runner;
}

export interface BmcApi {
  powerStatus(t: BmcTarget, call: BmcCall): Promise<PowerState>;
  powerOn(t: BmcTarget, call: BmcCall): Promise<void>;
  /** Hard: the power is cut at once. */
  powerOff(t: BmcTarget, call: BmcCall): Promise<void>;
  powerCycle(t: BmcTarget, call: BmcCall): Promise<void>;
}

/** A BMC that did not do what it was asked; the message names the BMC, never the password. */
export class BmcError extends Error {
  constructor(
    readonly target: Pick<BmcTarget, 'address' | 'port' | 'username'>,
    why: string,
  ) {
    super(`BMC ${target.address}:${target.port} (user ${target.username}): ${why}`);
    this.name = 'BmcError';
  }
}

/** `text` with every occurrence of the password masked. */
export function scrub(text: string, password: string): string {
  return password ? text.split(password).join('***') : text;
}

export interface IpmitoolOptions {
  /** Deadline of one ipmitool call (its own retries included). */
  timeoutMs?: number;
  /** The binary (tests point it at a stand-in). */
  command?: string;
}

/** ipmitool over LAN (IPMI v2, RMCP+). */
export class IpmitoolBmc implements BmcApi {
  private readonly timeoutMs: number;
  private readonly command: string;

  constructor(
    private readonly runner: Runner,
    opts: IpmitoolOptions = {},
  ) {
    this.timeoutMs = opts.timeoutMs ?? 30_000;
    this.command = opts.command ?? 'ipmitool';
  }

  async powerStatus(t: BmcTarget, call: BmcCall): Promise<PowerState> {
    const out = await this.chassis(t, 'status', call);
    const m = /Chassis Power is (on|off)/i.exec(out);
    if (!m?.[1]) throw new BmcError(t, `unexpected answer to power status: ${scrub(out.trim(), t.password).slice(0, 200)}`);
    return m[1].toLowerCase() as PowerState;
  }

  async powerOn(t: BmcTarget, call: BmcCall): Promise<void> {
    await this.chassis(t, 'on', call);
  }

  async powerOff(t: BmcTarget, call: BmcCall): Promise<void> {
    await this.chassis(t, 'off', call);
  }

  async powerCycle(t: BmcTarget, call: BmcCall): Promise<void> {
    await this.chassis(t, 'cycle', call);
  }

  private async chassis(t: BmcTarget, verb: 'status' | 'on' | 'off' | 'cycle', call: BmcCall): Promise<string> {
    const runner = call.runner ?? this.runner;
    // -N/-R: a short wait per try and a few tries, so an unreachable BMC fails well inside the deadline.
    const args = ['-I', 'lanplus', '-H', t.address, '-p', String(t.port), '-U', t.username, '-E', '-N', '2', '-R', '2'];
    try {
      const out = await runner.run(this.command, [...args, 'chassis', 'power', verb], {
        timeoutMs: this.timeoutMs,
        env: { IPMI_PASSWORD: t.password },
        ...(call.signal ? { signal: call.signal } : {}),
      });
      return out.stdout;
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      throw new BmcError(t, `chassis power ${verb} failed: ${scrub(why, t.password)}`);
    }
  }
}
