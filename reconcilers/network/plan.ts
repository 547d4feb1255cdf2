// The network loop's pure half: from the network, the master's NIC, the DHCP server that runs
// (if any), how it last ended, and the configuration as it renders now, the next status and
// at most one step. A server runs exactly the rendered bytes: any difference is a restart.
import { Step } from '../../src/catalogue/index.js';
import type { DhcpExit, DhcpServerState } from '../../src/clients/dhcp.js';
import type { Doc } from '../../src/model/document.js';
import { contains, parseCidr } from '../../src/model/ipv4.js';
import type { MasterInterface, NetworkSpec, NetworkStatus } from '../../src/model/network-kinds.js';
import { setConditions } from '../../src/runtime/conditions.js';
import { RETRY_CAP_MS, isActive, nextAttempt, type RunInfo } from '../shared/runs.js';
import type { LoopPlan } from '../../src/runtime/loop-kit/index.js';

export const DHCP_START_TASK = Step.dhcpStart;

export interface Desired {
  config: string;
  hash: string;
  bootUrl: string;
}

export interface NetworkObserved {
  id: string;
  /** null: the network was deleted; its server must go. */
  network: Doc<NetworkSpec, NetworkStatus> | null;
  /** The NIC the network names; null when the master has no such interface. */
  nic: MasterInterface | null;
  interfacesError: string | null;
  /** The port Quarry answers on; null until it listens. */
  port: number | null;
  /** The configuration as it renders now; null when there is nothing to render it for. */
  desired: Desired | null;
  renderError: string | null;
  running: DhcpServerState | null;
  lastExit: DhcpExit | null;
  run: RunInfo | null;
  now: number;
  nowIso: string;
  retryBaseMs: number;
  pollMs: number;
}

export type NetworkStep = { kind: 'start'; attempt: number; crashes: number } | { kind: 'stop' };

/** The Network's status (null: the network is gone, nothing to write), the step, a wait (null:
 * nothing to look at until something changes; a server's exit wakes the loop); never a gate. */
export type NetworkPlan = LoopPlan<NetworkStatus | null, NetworkStep>;

type Phase = NonNullable<NetworkStatus['phase']>;
interface Outcome {
  phase: Phase;
  reason: string;
  message: string;
  step?: NetworkStep;
  requeueAfterMs: number | null;
  crashes?: number;
}

export function planNetwork(o: NetworkObserved): NetworkPlan {
  if (!o.network) return { status: null, step: o.running ? { kind: 'stop' } : null, requeueAfterMs: null, gate: null };
  const out = decide(o, o.network);
  return { status: statusOf(o, o.network, out), step: out.step ?? null, requeueAfterMs: out.requeueAfterMs, gate: null };
}

function decide(o: NetworkObserved, net: Doc<NetworkSpec, NetworkStatus>): Outcome {
  const stopIfRunning = o.running ? { step: { kind: 'stop' } as const } : {};
  const degraded = (reason: string, message: string, stop = true): Outcome => ({
    phase: 'degraded',
    reason,
    message,
    requeueAfterMs: o.pollMs,
    ...(stop ? stopIfRunning : {}),
  });
  if (o.port === null)
    return {
      phase: 'pending',
      reason: 'WaitingForApi',
      message: "waiting for Quarry's API to listen: machines are sent to it",
      requeueAfterMs: 100,
    };
  if (o.interfacesError !== null)
    return degraded('InterfacesUnreadable', `the master's interfaces could not be read: ${o.interfacesError}`, false);
  if (!o.nic) return degraded('NicMissing', `the master has no interface ${net.spec.nicId}`);
  if (o.nic.ip === '') return degraded('NicNoAddress', `interface ${o.nic.name} has no IPv4 address: machines could not reach Quarry`);
  const cidr = parseCidr(net.spec.cidr);
  if ('error' in cidr || !contains(cidr, o.nic.ip))
    return degraded('NicOutsideNetwork', `interface ${o.nic.name} has ${o.nic.ip}, outside ${net.spec.cidr}`);
  if (!o.desired) return degraded('RenderFailed', `templates/dnsmasq.conf.ejs did not render: ${o.renderError ?? 'unknown error'}`, false);
  const crashes = net.status.crashes ?? 0;
  if (o.running && o.running.configHash === o.desired.hash && o.running.nic === o.nic.name) {
    return {
      phase: 'running',
      reason: 'Serving',
      message: `dnsmasq pid ${o.running.pid} serves ${net.spec.rangeStart}-${net.spec.rangeEnd} on ${o.nic.name}`,
      requeueAfterMs: o.pollMs,
      crashes,
    };
  }
  const what = o.running ? `restarting dnsmasq on ${o.nic.name} with a new configuration` : `starting dnsmasq on ${o.nic.name}`;
  if (isActive(o.run)) return { phase: 'starting', reason: 'Starting', message: `${what} (run ${o.run!.id})`, requeueAfterMs: null };
  return restart(o, o.desired, what, crashes);
}

/** When to start again, and with which attempt: a failed start of these same bytes backs off
 * like every loop's runs; a server that died backs off by how often it has died. */
function restart(o: NetworkObserved, desired: Desired, what: string, crashes: number): Outcome {
  const exit = o.lastExit && o.lastExit.configHash === desired.hash && !o.running ? o.lastExit : null;
  const sameRun = o.run && o.run.args.configHash === desired.hash ? o.run : null;
  if (exit && exit.reason !== 'Exited' && sameRun && sameRun.state === 'failed') {
    const next = nextAttempt(sameRun, o.now, o.retryBaseMs, what);
    if (next.kind === 'wait')
      return {
        phase: 'degraded',
        reason: exit.reason,
        message: `${exit.message}; trying again in ${Math.ceil(next.waitMs / 1000)} s`,
        requeueAfterMs: next.waitMs,
        crashes,
      };
    if (next.kind === 'start')
      return {
        phase: 'degraded',
        reason: exit.reason,
        message: exit.message,
        step: { kind: 'start', attempt: next.attempt, crashes },
        requeueAfterMs: null,
        crashes,
      };
  }
  if (exit && exit.reason === 'Exited') {
    const due = exit.at + Math.min(RETRY_CAP_MS, o.retryBaseMs * 2 ** crashes);
    if (o.now < due)
      return {
        phase: 'degraded',
        reason: 'Exited',
        message: `${exit.message}; restarting in ${Math.ceil((due - o.now) / 1000)} s`,
        requeueAfterMs: due - o.now,
        crashes,
      };
    return {
      phase: 'degraded',
      reason: 'Exited',
      message: exit.message,
      step: { kind: 'start', attempt: 1, crashes: crashes + 1 },
      requeueAfterMs: null,
      crashes: crashes + 1,
    };
  }
  // A new configuration (or the first start): the count of deaths starts over.
  const fresh = o.running !== null || !exit ? 0 : crashes;
  return {
    phase: 'starting',
    reason: 'Starting',
    message: what,
    step: { kind: 'start', attempt: 1, crashes: fresh },
    requeueAfterMs: null,
    crashes: fresh,
  };
}

function statusOf(o: NetworkObserved, net: Doc<NetworkSpec, NetworkStatus>, out: Outcome): NetworkStatus {
  const gen = net.metadata.generation;
  const stopping = out.step?.kind === 'stop';
  const running = stopping ? null : o.running;
  const ready = out.phase === 'running';
  const bad = out.phase === 'degraded';
  return {
    ...net.status,
    phase: out.phase,
    pid: running?.pid ?? null,
    configHash: running?.configHash ?? null,
    nicName: o.nic?.name ?? '',
    bootUrl: o.desired?.bootUrl ?? net.status.bootUrl ?? '',
    crashes: out.crashes ?? net.status.crashes ?? 0,
    conditions: setConditions(
      net.status.conditions,
      [
        { type: 'Ready', status: ready ? 'True' : 'False', reason: out.reason, message: out.message },
        {
          type: 'Progressing',
          status: out.phase === 'starting' ? 'True' : 'False',
          reason: out.phase === 'starting' ? out.reason : 'Idle',
          message: out.phase === 'starting' ? out.message : '',
        },
        { type: 'Degraded', status: bad ? 'True' : 'False', reason: bad ? out.reason : 'NotDegraded', message: bad ? out.message : '' },
      ],
      gen,
      o.nowIso,
    ),
    observedGeneration: gen,
  };
}
