// The master as the network loop sees it: its interfaces and one DHCP server per network.
// Two implementations: dnsmasq on the real master (clients/dnsmasq.ts) and the lab's
// simulated master (sim/master.ts), which touches no network at all.
import { readFile } from 'node:fs/promises';
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
  /** The address a running server leased to `mac` (LeaseBook). */
  leaseFor(mac: string): Promise<string | null>;
}

/** Which address a DHCP server Quarry runs has leased to a MAC: a boot request claiming that
 * MAC must come from it (enrollment). Null when no server of Quarry's knows the MAC. */
export interface LeaseBook {
  leaseFor(mac: string): Promise<string | null>;
}

export interface DhcpLease {
  /** Epoch seconds; 0 for an infinite lease. */
  expires: number;
  mac: string;
  address: string;
}

/** dnsmasq's lease file: `<expiry> <mac> <ip> <hostname|*> <client-id|*>` per line (IPv6
 * leases follow a `duid` line and are not MAC-keyed: skipped). */
export function parseDnsmasqLeases(text: string): DhcpLease[] {
  const out: DhcpLease[] = [];
  for (const line of text.split('\n')) {
    const [exp, mac, address] = line.trim().split(/\s+/);
    if (
      !exp ||
      !mac ||
      !address ||
      !/^\d+$/.test(exp) ||
      !/^[0-9a-f]{2}(:[0-9a-f]{2}){5}$/i.test(mac) ||
      !/^\d{1,3}(\.\d{1,3}){3}$/.test(address)
    )
      continue;
    out.push({ expires: Number(exp), mac: mac.toLowerCase(), address });
  }
  return out;
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

  /** The address a running server of ours leased to `mac`, from its lease file; the newest
   * unexpired lease wins when two networks know the MAC. */
  async leaseFor(mac: string, nowMs: number = Date.now()): Promise<string | null> {
    const want = mac.toLowerCase();
    let best: DhcpLease | null = null;
    for (const id of this.networks()) {
      const text = await readFile(this.files(id).leaseFile, 'utf8').catch(() => '');
      for (const l of parseDnsmasqLeases(text)) {
        if (l.mac !== want || (l.expires !== 0 && l.expires * 1000 <= nowMs)) continue;
        if (!best || l.expires === 0 || (best.expires !== 0 && l.expires > best.expires)) best = l;
      }
    }
    return best?.address ?? null;
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
  if (busy)
    return {
      reason: DhcpFailureReason.PortBusy,
      message: `the DHCP port is taken by another server: ${busy[0].replace(/^dnsmasq(?:-dhcp)?(?:\[\d+\])?: /, '')}`,
    };
  const last = [...lines].reverse().find((l) => l.trim() !== '') ?? 'no output';
  return { reason: DhcpFailureReason.StartFailed, message: last.replace(/^dnsmasq(?:-dhcp)?(?:\[\d+\])?: /, '') };
}
