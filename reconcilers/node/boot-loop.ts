// A machine that keeps network-booting without its agent ever reporting is in a boot loop
// (an installer that fails and reboots, a kernel that panics): more than `maxBoots` network
// boots within `windowMs`, none followed by an agent report. The node then gets the BootLoop
// condition and GET /boot/config sends it no installer, until an operator resets it with a
// restart request (node.restart, offered in the `error` phase the loop shows meanwhile).
// Pure: the plan calls it with what observe gathered.
import type { Observation } from '../../src/fleet/types.js';
import { inBootLoop } from '../../src/fleet/boot-decision.js';
import type { NodeSpec, NodeStatusFields } from '../../src/model/kinds.js';

export interface BootLoopLimits {
  maxBoots: number;
  windowMs: number;
}

export const defaultBootLoopLimits: BootLoopLimits = { maxBoots: 5, windowMs: 10 * 60_000 };

export type BootLoopVerdict =
  | { state: 'none' }
  | { state: 'detected'; message: string }
  | { state: 'held'; message: string }
  /** The operator asked for a restart while the loop held: the request is the reset. */
  | { state: 'reset'; restartGeneration: number };

/** Network boots that count: inside the window, after the last agent report and after the
 * last reset. */
export function countedBoots(obs: Observation, status: NodeStatusFields, now: number, windowMs: number): number {
  const resetAt = status.bootLoopResetAt ? Date.parse(status.bootLoopResetAt) : -Infinity;
  const from = Math.max(now - windowMs, obs.lastReportAt ?? -Infinity, resetAt);
  return obs.boots.filter((b) => b.stage === 'pxe' && b.at > from).length;
}

export function bootLoop(spec: NodeSpec, status: NodeStatusFields, obs: Observation, now: number, limits: BootLoopLimits): BootLoopVerdict {
  if (inBootLoop(status)) {
    if (spec.restartGeneration > (status.observedRestartGeneration ?? 0))
      return { state: 'reset', restartGeneration: spec.restartGeneration };
    const held = status.conditions?.find((c) => c.type === 'BootLoop');
    return { state: 'held', message: held?.message ?? 'boot loop' };
  }
  const n = countedBoots(obs, status, now, limits.windowMs);
  if (n <= limits.maxBoots) return { state: 'none' };
  const minutes = Math.round(limits.windowMs / 60_000);
  return {
    state: 'detected',
    message: `${n} network boots within ${minutes >= 1 ? `${minutes} min` : `${limits.windowMs} ms`} without an agent report, so no installer is sent until node.restart resets it`,
  };
}
