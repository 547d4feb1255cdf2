// What the agents on the nodes tell the master. This is observed state: kept in memory,
// re-sent by every agent after a master restart, and projected into status by the node loop.
import type { NodeDaemonType } from '../catalogue/index.js';

export interface DiskReport {
  serial: string;
  devicePath: string;
  sizeBytes: number;
  rotational: boolean;
  model: string;
  vendor: string;
  interface: string;
  isSystem: boolean;
  hasFilesystem: boolean;
  /** The BlueStore label found at the head of the disk (agent-report.ts). */
  bluestore?: { fsid: string; osdUuid: string; osdId: number };
}

export interface NicReport {
  name: string;
  mac: string;
  ip: string;
  connected: boolean;
  mtu: number;
}

/** Whether each node daemon (src/catalogue/daemons.ts) runs, and the OSDs that run. */
/** A daemon kind the agent does not name is not running there: an agent older than a kind of the
 * catalogue still reports (absent means false). */
export type DaemonReport = { [T in NodeDaemonType]?: boolean } & { osds: number[] };

/** Checked against src/model/agent-report.ts's schema at the door (the HTTP route and
 * AgentGateway.report): addresses are IPs, names and paths have their patterns. */
export interface AgentReport {
  /** Changes on every boot of the machine; how a restart is confirmed. */
  bootId: string;
  hostname: string;
  ip: string;
  disks: DiskReport[];
  nics: NicReport[];
  daemons: DaemonReport;
}

export interface Observation {
  /** Epoch ms of the last agent report, null when none since Quarry started. */
  lastReportAt: number | null;
  report: AgentReport | null;
  /** The source address of the connection that carried the last report, as the master saw it
   * (a valid IP), or null (the in-process lab link, or none yet). Unlike `report.ip`, which is
   * only what the agent says, this is the master's own observation: where the S3 proxy may send
   * a caller's signed requests. */
  address?: string | null;
  /** The most recent network-boot stages seen (newest last, bounded). */
  boots: BootStage[];
  /** Epoch ms of the last boot request of the machine, counted or not. */
  seenAt?: number;
  /** The source address of its last boot request that was noted, and when (the latest of
   * several controllers' wins). */
  bootAddress?: string;
  bootAddressAt?: number;
}

/** `pxe`: the machine asked for its iPXE script; `image`: it fetched its OS image or
 * rendered templates, so the installer or OS is on its way up. */
export interface BootStage {
  at: number;
  stage: 'pxe' | 'image';
}
