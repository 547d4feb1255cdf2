// The lab's master: two NICs and DHCP servers that only pretend to run. Nothing here touches
// the machine's network; tests unplug NICs, occupy the DHCP port and kill servers through it.
import {
  DhcpFailureReason,
  DhcpServerBook,
  DhcpStartError,
  type DhcpServerState,
  type DhcpServers,
  type DhcpStartRequest,
  type MasterHost,
} from '../clients/dhcp.js';
import { masterNicId, type MasterInterface } from '../model/network-kinds.js';

/** The lab's machines live in 10.0.0.0/16 (sim/machines.ts); the master sits at its top. */
export const SIM_MASTER_NICS: ReadonlyArray<Omit<MasterInterface, 'id'>> = [
  { name: 'eno1', mac: '52:54:ff:00:00:01', ip: '10.0.255.254', prefix: 16, connected: true, mtu: 1500 },
  { name: 'eno2', mac: '52:54:ff:00:00:02', ip: '', prefix: 0, connected: true, mtu: 9000 },
];

export interface SimDhcpServer extends DhcpServerState {
  config: string;
}

export class SimMaster extends DhcpServerBook<SimDhcpServer> implements MasterHost, DhcpServers {
  readonly dhcp: DhcpServers = this;
  private readonly nics = new Map<string, MasterInterface>();
  /** NICs whose DHCP port something else holds. */
  private readonly busy = new Set<string>();
  private nextPid = 4000;
  /** The simulated DHCP leases: MAC → the lab machine's own loopback address and the network
   * whose server handed it out. */
  private readonly leases = new Map<string, { address: string; networkId: string }>();
  /** Every start, in order: tests see restarts. */
  readonly starts: Array<{ networkId: string; pid: number; configHash: string }> = [];

  constructor(
    dir: string,
    private readonly now: () => number = Date.now,
  ) {
    super(dir);
    for (const n of SIM_MASTER_NICS) this.plug(n);
  }

  interfaces(): Promise<MasterInterface[]> {
    return Promise.resolve([...this.nics.values()].map((n) => ({ ...n })));
  }

  plug(nic: Omit<MasterInterface, 'id'>): void {
    this.nics.set(nic.name, { ...nic, id: masterNicId(nic.mac) });
  }

  /** The NIC disappears; a server bound to it dies, as dnsmasq does when its link goes. */
  unplug(name: string): void {
    this.nics.delete(name);
    for (const [id, s] of this.servers) if (s.nic === name) this.kill(id, `interface ${name} went away`);
  }

  occupyPort(nic: string, taken = true): void {
    if (taken) this.busy.add(nic);
    else this.busy.delete(nic);
  }

  /** The server of a network dies on its own. */
  kill(networkId: string, why = 'killed'): void {
    const s = this.servers.get(networkId);
    if (!s) return;
    this.servers.delete(networkId);
    this.ended(networkId, {
      at: this.now(),
      configHash: s.configHash,
      reason: DhcpFailureReason.Exited,
      message: `dnsmasq pid ${s.pid} exited: ${why}`,
    });
  }

  /** A lab machine asks for an address at boot (DHCP): a running server of Quarry's leases it
   * the machine's own address; with none running, Quarry serves no lease. */
  dhcpRequest(mac: string, address: string): void {
    const networkId = this.servers.keys().next().value;
    if (networkId === undefined) return;
    this.leases.set(mac.toLowerCase(), { address, networkId });
  }

  /** As dnsmasq's lease file says it, while the server that leased it runs. */
  override leaseFor(mac: string): Promise<string | null> {
    const l = this.leases.get(mac.toLowerCase());
    return Promise.resolve(l && this.servers.has(l.networkId) ? l.address : null);
  }

  server(networkId: string): SimDhcpServer | null {
    return this.servers.get(networkId) ?? null;
  }

  running(networkId: string): DhcpServerState | null {
    const s = this.servers.get(networkId);
    return s ? { pid: s.pid, configHash: s.configHash, nic: s.nic, startedAt: s.startedAt } : null;
  }

  start(networkId: string, req: DhcpStartRequest, log: (line: string) => void): Promise<DhcpServerState> {
    this.servers.delete(networkId);
    this.exits.delete(networkId);
    const fail = (reason: DhcpFailureReason, message: string): Promise<never> => {
      this.exits.set(networkId, { at: this.now(), configHash: req.configHash, reason, message });
      log(`dnsmasq: ${message}`);
      return Promise.reject(new DhcpStartError(reason, message));
    };
    if (!this.nics.has(req.nic)) return fail(DhcpFailureReason.NicMissing, `interface ${req.nic} does not exist`);
    if (this.busy.has(req.nic))
      return fail(
        DhcpFailureReason.PortBusy,
        'the DHCP port is taken by another server: failed to bind DHCP server socket: Address in use',
      );
    const s: SimDhcpServer = { pid: this.nextPid++, configHash: req.configHash, nic: req.nic, startedAt: this.now(), config: req.config };
    this.servers.set(networkId, s);
    this.starts.push({ networkId, pid: s.pid, configHash: s.configHash });
    log(`dnsmasq pid ${s.pid} on ${req.nic} (simulated)`);
    return Promise.resolve(this.running(networkId)!);
  }

  stop(networkId: string): Promise<void> {
    this.servers.delete(networkId);
    return Promise.resolve();
  }

  stopAll(): Promise<void> {
    this.servers.clear();
    return Promise.resolve();
  }
}
