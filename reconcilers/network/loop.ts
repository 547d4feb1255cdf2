// The network loop's effectful half: reads the master's interfaces and its DHCP servers,
// renders templates/dnsmasq.conf.ejs for the network, and starts (or restarts) the server as a
// task run whenever the rendered bytes differ from the ones it runs.
import { createHash } from 'node:crypto';
import type { MasterHost } from '../../src/clients/dhcp.js';
import type { Clock } from '../../src/model/clock.js';
import { netmaskOf, parseCidr } from '../../src/model/ipv4.js';
import { NetworkKind, type MasterInterface, type NetworkSpec, type NetworkStatus } from '../../src/model/network-kinds.js';
import type { Doc } from '../../src/model/document.js';
import type { RenderTemplate } from '../../src/render/template-file.js';
import type { Store } from '../../src/store/types.js';
import type { Reconciler, Result } from '../../src/runtime/types.js';
import { applyPlan, writeOwned, type StatusOwner } from '../../src/runtime/loop-kit/index.js';
import type { StartRequest } from '../../src/tasks/types.js';
import type { LoopTasks } from '../shared/ceph-deps.js';
import { runInfo } from '../shared/runs.js';
import { DHCP_START_TASK, planNetwork, type Desired, type NetworkObserved, type NetworkPlan, type NetworkStep } from './plan.js';
import { runTarget } from '../../src/model/object-names.js';

export const DNSMASQ_TEMPLATE = 'dnsmasq.conf';
const LEASE_TIME = '1h';

export interface NetworkLoopDeps {
  store: Store;
  tasks: LoopTasks;
  host: MasterHost;
  render: RenderTemplate;
  clock: Clock;
  /** Quarry's listening port, once it listens: machines are sent to the NIC's IPv4 on it. */
  port(): number | null;
  /** Where plain PXE clients fetch iPXE (undionly.kpxe) over TFTP. */
  tftpRoot: string;
  retryBaseMs: number;
  runTimeoutMs: number;
  /** How often a network is looked at again: NICs come and go without telling anyone. */
  pollMs: number;
}

export function networkLoop(deps: NetworkLoopDeps): Reconciler<NetworkObserved, NetworkPlan> {
  return {
    name: 'network',
    kind: NetworkKind.Network,
    observe: (id) => observe(deps, id),
    plan: planNetwork,
    apply: (o, p) => apply(deps, o, p),
  };
}

export const bootUrlOf = (nic: MasterInterface, port: number): string => `http://${nic.ip}:${port}/boot/config?mac=\${net0/mac}`;

async function observe(deps: NetworkLoopDeps, id: string): Promise<NetworkObserved> {
  const network = (await deps.store.get<NetworkSpec, NetworkStatus>(NetworkKind.Network, id)) ?? null;
  const run = runInfo(await deps.tasks.latestFor(NetworkKind.Network, id, DHCP_START_TASK));
  let nic: MasterInterface | null = null;
  let interfacesError: string | null = null;
  if (network) {
    try {
      nic = (await deps.host.interfaces()).find((n) => n.id === network.spec.nicId) ?? null;
    } catch (err) {
      interfacesError = err instanceof Error ? err.message : String(err);
    }
  }
  const port = deps.port();
  let desired: Desired | null = null;
  let renderError: string | null = null;
  if (network && nic && nic.ip !== '' && port !== null) {
    try {
      desired = await render(deps, network, nic, port);
    } catch (err) {
      renderError = err instanceof Error ? err.message : String(err);
    }
  }
  return {
    id,
    network,
    nic,
    interfacesError,
    port,
    desired,
    renderError,
    run,
    running: deps.host.dhcp.running(id),
    lastExit: deps.host.dhcp.lastExit(id),
    now: deps.clock.now(),
    nowIso: deps.clock.iso(),
    retryBaseMs: deps.retryBaseMs,
    pollMs: deps.pollMs,
  };
}

async function render(
  deps: NetworkLoopDeps,
  network: Doc<NetworkSpec, NetworkStatus>,
  nic: MasterInterface,
  port: number,
): Promise<Desired> {
  const cidr = parseCidr(network.spec.cidr);
  if ('error' in cidr) throw new Error(`cidr ${network.spec.cidr} ${cidr.error}`);
  const bootUrl = bootUrlOf(nic, port);
  const config = await deps.render(DNSMASQ_TEMPLATE, {
    network: { id: network.id, ...network.spec },
    nic: { name: nic.name, ip: nic.ip, mac: nic.mac },
    netmask: netmaskOf(cidr),
    leaseTime: LEASE_TIME,
    bootUrl,
    files: deps.host.dhcp.files(network.id),
    tftpRoot: deps.tftpRoot,
  });
  return { config, hash: createHash('sha256').update(config).digest('hex'), bootUrl };
}

/** The whole status of a Network: this loop is its only writer. */
export const NETWORK_STATUS: StatusOwner = { loop: 'network', kind: NetworkKind.Network, fields: 'all' };

function apply(deps: NetworkLoopDeps, o: NetworkObserved, p: NetworkPlan): Promise<Result> {
  return applyPlan(
    {
      write: async (obs: NetworkObserved, status: NetworkStatus | null) => {
        if (status && obs.network) await writeOwned(deps.store, NETWORK_STATUS, obs.id, status);
        return undefined;
      },
      act: (obs, step) => act(deps, obs, step),
      start: (req) => deps.tasks.start(req),
      recheckMs: 0, // no gate in this loop
    },
    o,
    p,
  );
}

/** A stop is done here, at once (the server is this process's child); a start is a run. */
async function act(deps: NetworkLoopDeps, o: NetworkObserved, step: NetworkStep): Promise<StartRequest | null> {
  if (step.kind === 'stop') {
    await deps.host.dhcp.stop(o.id);
    return null;
  }
  if (!o.network || !o.nic || !o.desired) return null;
  const { nic, desired } = o;
  return {
    taskName: DHCP_START_TASK,
    target: runTarget(o.network),
    attempt: step.attempt,
    timeoutMs: deps.runTimeoutMs,
    args: { nic: nic.name, configHash: desired.hash, crashes: step.crashes },
    script: async (ctx) => {
      ctx.log(
        'info',
        `${o.running ? 'restarting' : 'starting'} dnsmasq for ${o.network!.spec.cidr} on ${nic.name}, configuration ${desired.hash.slice(0, 12)}`,
      );
      const state = await deps.host.dhcp.start(o.id, { nic: nic.name, config: desired.config, configHash: desired.hash }, (line) =>
        ctx.log('info', line),
      );
      return { pid: state.pid };
    },
  };
}
