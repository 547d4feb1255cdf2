// The heartbeats benchmark's fleet, shared by the controller (which stores it) and the load
// generator (whose agents report it): node i's id, credential and the report its agent sends.
import type { AgentReport } from '../src/fleet/types.js';
import { agentUsername } from '../src/fleet/credentials.js';
import { nodeIdForMac } from '../src/model/ids.js';
import { macFor } from '../src/sim/machines.js';

export const BENCH_ADMIN_PASSWORD = 'bench-admin-password';

/** The load generator's keep-alive connections (heartbeats-agents.ts says why not 10,000). */
export const CONNECTIONS = 64;

export interface BenchAgent {
  nodeId: string;
  mac: string;
  username: string;
  report: AgentReport;
}

/** Each agent's own secret, as its credential file holds it after the rotation. */
export const agentSecret = (i: number): string => `bench-heartbeat-agent-secret-${i}`;

/** A node with a system disk and three data disks, one NIC, no daemons: what a freshly
 * installed node reports every period until something changes. */
export function benchAgent(i: number): BenchAgent {
  const mac = macFor(i);
  const nodeId = nodeIdForMac(mac);
  const ip = `10.${(i >> 16) & 0xff}.${(i >> 8) & 0xff}.${i & 0xff}`;
  const hostname = `node-${i}`;
  const disks = ['SYS', 'D1', 'D2', 'D3'].map((s, d) => ({
    serial: `HB${i}-${s}`,
    devicePath: `/dev/sd${'abcd'[d]}`,
    sizeBytes: d === 0 ? 240e9 : 4e12,
    rotational: d > 0,
    model: 'BENCH-DISK',
    vendor: 'ATA',
    interface: 'sata',
    isSystem: d === 0,
    hasFilesystem: d === 0,
  }));
  return {
    nodeId,
    mac,
    username: agentUsername(nodeId),
    report: {
      bootId: `boot-${i}`,
      hostname,
      ip,
      disks,
      nics: [{ name: 'eth0', mac, ip, connected: true, mtu: 1500 }],
      daemons: { osds: [] },
    },
  };
}
