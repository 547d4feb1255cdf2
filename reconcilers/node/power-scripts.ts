// The node loop's master-level steps through a node's BMC (IPMI over LAN): power-on, the power
// check after a soft power-off (forced when the grace runs out), status and power-cycle (the
// seam fencing will use). Each logs what the BMC said and did; the password is in no line and no
// error (src/clients/bmc.ts keeps it in the environment and scrubs what ipmitool says).
import { setTimeout as sleep } from 'node:timers/promises';
import { BmcError, DEFAULT_BMC_PORT, scrub, type BmcApi, type BmcCall, type BmcTarget, type PowerState } from '../../src/clients/bmc.js';
import type { BmcSpec } from '../../src/model/kinds.js';
import type { RunContext, Script } from '../../src/tasks/types.js';

export const bmcTarget = (b: BmcSpec): BmcTarget => ({
  address: b.address,
  port: b.port ?? DEFAULT_BMC_PORT,
  username: b.username,
  password: b.password,
});

const where = (t: BmcTarget): string => `BMC ${t.address}:${t.port}`;

function callOf(ctx: RunContext): BmcCall {
  return { signal: ctx.signal, runner: ctx.runner, log: (level, message) => ctx.log(level, message) };
}

/** Runs `work`; a failure is logged and rethrown naming the BMC, never with the password. */
async function guarded<R>(ctx: RunContext, t: BmcTarget, work: () => Promise<R>): Promise<R> {
  try {
    return await work();
  } catch (err) {
    const message = scrub(err instanceof Error ? err.message : String(err), t.password);
    const named = err instanceof BmcError ? message : `${where(t)} (user ${t.username}): ${message}`;
    ctx.log('error', named);
    throw new Error(named);
  }
}

/** Powers the machine on unless it is on already (then says so: a hung machine is fencing's). */
export function powerOnScript(bmc: BmcApi, t: BmcTarget): Script {
  return (ctx) =>
    guarded(ctx, t, async () => {
      const call = callOf(ctx);
      const was = await bmc.powerStatus(t, call);
      if (was === 'on') {
        ctx.log('warn', `${where(t)}: the chassis power is on already; nothing was sent`);
        return { was };
      }
      await bmc.powerOn(t, call);
      ctx.log('info', `${where(t)}: chassis power on sent; the machine boots from the network`);
      return { was };
    });
}

/** After the agent's soft power-off: waits up to graceMs for the BMC to read the power off,
 * then cuts it, and checks it is off. Both outcomes are in the run's log. */
export function powerOffScript(bmc: BmcApi, t: BmcTarget, graceMs: number, pollMs: number): Script {
  return (ctx) =>
    guarded(ctx, t, async () => {
      const call = callOf(ctx);
      const started = Date.now();
      ctx.log('info', `${where(t)}: waiting up to ${graceMs} ms for the soft power-off to end`);
      const off = await waitFor(bmc, t, call, graceMs, pollMs, ctx.signal);
      if (off) {
        ctx.log('info', `${where(t)}: the chassis power is off (soft power-off ended after ${Date.now() - started} ms)`);
        return { was: 'off', forced: false };
      }
      ctx.log('warn', `${where(t)}: the power is still on after ${graceMs} ms; hard power-off`);
      await bmc.powerOff(t, call);
      if (!(await waitFor(bmc, t, call, Math.max(pollMs * 10, 10_000), pollMs, ctx.signal)))
        throw new BmcError(t, 'chassis power off was sent but the power still reads on');
      ctx.log('info', `${where(t)}: the chassis power is off (forced)`);
      return { was: 'on', forced: true };
    });
}

export function powerStatusScript(bmc: BmcApi, t: BmcTarget): Script {
  return (ctx) =>
    guarded(ctx, t, async () => {
      const was = await bmc.powerStatus(t, callOf(ctx));
      ctx.log('info', `${where(t)}: the chassis power is ${was}`);
      return { was };
    });
}

/** Fencing's step (`fencing: bmc`), for the disruption budget to start: not started by the loop yet. */
export function powerCycleScript(bmc: BmcApi, t: BmcTarget): Script {
  return (ctx) =>
    guarded(ctx, t, async () => {
      const call = callOf(ctx);
      const was = await bmc.powerStatus(t, call);
      await (was === 'on' ? bmc.powerCycle(t, call) : bmc.powerOn(t, call));
      ctx.log('warn', `${where(t)}: power ${was === 'on' ? 'cycled' : 'was off; powered on'}`);
      return { was };
    });
}

async function waitFor(bmc: BmcApi, t: BmcTarget, call: BmcCall, ms: number, pollMs: number, signal: AbortSignal): Promise<boolean> {
  const until = Date.now() + ms;
  for (;;) {
    const state: PowerState = await bmc.powerStatus(t, call);
    if (state === 'off') return true;
    if (Date.now() >= until) return false;
    await sleep(Math.min(pollMs, Math.max(until - Date.now(), 1)), undefined, { signal });
  }
}
