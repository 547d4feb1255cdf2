// The master as the network loop sees it: its interfaces and one DHCP server per network.
// Two implementations: dnsmasq on the real master (clients/dnsmasq.ts) and the lab's
// simulated master (sim/master.ts), which touches no network at all.
import { join } from 'node:path';
import type { InterfaceSource } from '../model/network-kinds.js';

export const DhcpFailureReason = { NicMissing: 'NicMissing', PortBusy: 'PortBusy', StartFailed: 'StartFailed', Exited: 'Exited' } as const;
export type DhcpFailureReason = (typeof DhcpFailureReason)[keyof typeof DhcpFailureReason];

export interface DhcpServerState {
  pid: number;
  configHash: string;
  nic: string;
  startedAt: number;
}

/** How a server ended without being asked to, or why it would not start. */
export interface DhcpExit {
  at: number;
  configHash: string;
  reason: DhcpFailureReason;
  message: string;
}

/** Where a network's server keeps its files; the configuration names them. */
export interface DhcpFiles {
  conf: string;
  pidFile: string;
  leaseFile: string;
}

export interface DhcpStartRequest {
  nic: string;
  config: string;
  configHash: string;
}

export class DhcpStartError extends Error {
  constructor(
    readonly reason: DhcpFailureReason,
    message: string,
  ) {
    super(message);
    this.name = 'DhcpStartError';
  }
}

export interface DhcpServers {
  files(networkId: string): DhcpFiles;
  running(networkId: string): DhcpServerState | null;
  /** The last unrequested end (or failed start) of a network's server; a start clears it. */
  lastExit(networkId: string): DhcpExit | null;
  /** Networks that have a server now. */
  networks(): string[];
  /** Writes the configuration, stops the running server if any, starts a new one and resolves
   * once it serves. Rejects with DhcpStartError. */
  start(networkId: string, req: DhcpStartRequest, log: (line: string) => void): Promise<DhcpServerState>;
  stop(networkId: string): Promise<void>;
  stopAll(): Promise<void>;
  /** Called when a server exits on its own (not through stop or start). */
  onExit(listener: (networkId: string) => void): void;
}

export interface MasterHost extends InterfaceSource {
  dhcp: DhcpServers;
}

/** The bookkeeping both implementations share: servers by network, how each last ended, who
 * to tell when one ends on its own, and where its files are. */
export abstract class DhcpServerBook<S> {
  protected readonly servers = new Map<string, S>();
  protected readonly exits = new Map<string, DhcpExit>();
  private readonly listeners: Array<(id: string) => void> = [];

  constructor(protected readonly dir: string) {}

  abstract running(networkId: string): DhcpServerState | null;

  files(networkId: string): DhcpFiles {
    const base = join(this.dir, networkId);
    return { conf: `${base}.conf`, pidFile: `${base}.pid`, leaseFile: `${base}.leases` };
  }

  lastExit(networkId: string): DhcpExit | null {
    return this.exits.get(networkId) ?? null;
  }

  networks(): string[] {
    return [...this.servers.keys()];
  }

  onExit(listener: (networkId: string) => void): void {
    this.listeners.push(listener);
  }

  /** A server ended without being asked to: remember why, and tell the listeners. */
  protected ended(networkId: string, exit: DhcpExit): void {
    this.exits.set(networkId, exit);
    for (const l of this.listeners) l(networkId);
  }
}

/** dnsmasq's own words for why it did not start, as a reason the status can carry. */
export function classifyDnsmasqError(lines: readonly string[]): { reason: DhcpFailureReason; message: string } {
  const text = lines.join('\n');
  const nic = /unknown interface (\S+)/.exec(text);
  if (nic) return { reason: DhcpFailureReason.NicMissing, message: `interface ${nic[1]} does not exist` };
  const busy = /^.*Address (?:already )?in use.*$/m.exec(text);
  if (busy) return { reason: DhcpFailureReason.PortBusy, message: `the DHCP port is taken by another server: ${busy[0].replace(/^dnsmasq(?:-dhcp)?(?:\[\d+\])?: /, '')}` };
  const last = [...lines].reverse().find((l) => l.trim() !== '') ?? 'no output';
  return { reason: DhcpFailureReason.StartFailed, message: last.replace(/^dnsmasq(?:-dhcp)?(?:\[\d+\])?: /, '') };
}
