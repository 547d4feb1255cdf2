// A node's desired power, and the requests that carry it out. `power` is the state the writes
// keep true; the counters are the requests (the node loop acts once per bump). Both the API's
// operations (src/services/invocations.ts) and a specs file's apply (src/gitops/resolve-node.ts)
// go through these, so a shutdown and a power-on mean the same whoever asks.
import type { NodeSpec } from './kinds.js';

/** A shutdown request: it holds the node off until a later power-on (each bump passes the other
 * counter). `keepPower`: the declared power is a file's, which the request leaves as it is. */
export function requestShutdown(spec: NodeSpec, keepPower = false): NodeSpec {
  const powerOn = spec.powerOnGeneration ?? 0;
  return { ...spec, ...(keepPower ? {} : { power: 'off' }), shutdownGeneration: Math.max(spec.shutdownGeneration, powerOn) + 1 };
}

/** A power-on request: it undoes every shutdown request up to now. */
export function requestPowerOn(spec: NodeSpec): NodeSpec {
  const powerOn = spec.powerOnGeneration ?? 0;
  return { ...spec, power: 'on', powerOnGeneration: Math.max(powerOn + 1, spec.shutdownGeneration) };
}

/**
 * `next` declares `power` (a spec file's apply): a change against the stored power is a request,
 * the same value again is none. So a file re-applied never powers a node on or off by itself,
 * and a file that turns `power` to `off` shuts the node down like `node.shutdown` (through the
 * disruption budget), to `on` powers it on like `node.power-on`.
 */
export function declarePower(stored: NodeSpec, next: NodeSpec): NodeSpec {
  if (next.power === stored.power) return next;
  return next.power === 'off' ? requestShutdown(next) : requestPowerOn(next);
}
