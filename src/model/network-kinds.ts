// DHCP networks, each bound to one interface of the master, and the master's interfaces as
// the API lists them. A network's status is what the network loop last saw of its dnsmasq.
import type { CommonStatus } from './conditions.js';
import { nameUuid } from './ids.js';

type JsonSchema = Record<string, unknown>;

export const NetworkKind = { Network: 'Network' } as const;

/** An interface of the master. `id` is stable across restarts: it is derived from the MAC. */
export interface MasterInterface {
  id: string;
  name: string;
  mac: string;
  /** The first IPv4 address, '' when it has none. */
  ip: string;
  /** Prefix length of `ip`; 0 when it has none. */
  prefix: number;
  connected: boolean;
  mtu: number;
}

/** Where the master's interfaces are read: the operating system, or the lab's simulated master. */
export interface InterfaceSource {
  interfaces(): Promise<MasterInterface[]>;
}

export const masterNicId = (mac: string): string => nameUuid('quarry/master-nic', mac.toLowerCase());
/** One network per CIDR: a second create of the same CIDR finds the first. */
export const networkId = (cidr: string): string => nameUuid('quarry/network', cidr);

export interface NetworkSpec {
  cidr: string;
  gateway: string;
  dnsServers: string[];
  rangeStart: string;
  rangeEnd: string;
  nicId: string;
}

export interface NetworkStatus extends CommonStatus {
  phase?: 'pending' | 'starting' | 'running' | 'degraded';
  /** The dnsmasq serving this network, null when none runs. */
  pid?: number | null;
  /** SHA-256 (hex) of the configuration the running dnsmasq was started with. */
  configHash?: string | null;
  /** The interface the network is bound to, as last seen ('' when it is missing). */
  nicName?: string;
  /** The URL iPXE clients are sent to. */
  bootUrl?: string;
  /** Restarts after dnsmasq died on its own, since the last configuration change. */
  crashes?: number;
}

const ipv4 = { type: 'string', format: 'ipv4' };

export const networkSchemas = {
  spec: {
    type: 'object',
    required: ['cidr', 'gateway', 'dnsServers', 'rangeStart', 'rangeEnd', 'nicId'],
    additionalProperties: false,
    properties: {
      cidr: { type: 'string', pattern: '^[0-9.]+/[0-9]{1,2}$' },
      gateway: ipv4,
      dnsServers: { type: 'array', items: ipv4, maxItems: 8 },
      rangeStart: ipv4,
      rangeEnd: ipv4,
      nicId: { type: 'string', format: 'uuid' },
    },
  },
  status: {
    type: 'object',
    additionalProperties: false,
    // phase, conditions and observedGeneration are added where the kinds are registered.
    properties: {
      pid: { type: ['integer', 'null'], minimum: 1 },
      configHash: { type: ['string', 'null'], pattern: '^[0-9a-f]{64}$' },
      nicName: { type: 'string' },
      bootUrl: { type: 'string' },
      crashes: { type: 'integer', minimum: 0 },
    },
  },
} satisfies { spec: JsonSchema; status: JsonSchema };
