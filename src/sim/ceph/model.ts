// The state of one simulated Ceph cluster, as plain records. The maps that own them
// (daemons.ts, osdmap.ts) change them; placement, usage and health only read them.
import type { Random } from '../random.js';

export type DeviceClass = 'hdd' | 'ssd' | 'nvme';

export interface SimMon {
  name: string;
  rank: number;
  ip: string;
  /** msgr2 port; msgr1 is always 6789 as in a stock deployment. */
  port: number;
  running: boolean;
  host?: string;
}

/** A mgr, MDS or RGW daemon: running or not, and a new gid every time it starts. */
export interface SimDaemon {
  name: string;
  gid: number;
  running: boolean;
  host?: string;
  /** Where it listens; rendered in the FSMap's addresses. */
  ip?: string;
  startedAt: number;
}

export interface SimMds extends SimDaemon {
  /** The filesystem (id) it holds rank 0 of; undefined while standby or stopped. */
  fsId?: number;
}

export interface SimRgw extends SimDaemon {
  port: number;
}

export interface SimOsd {
  id: number;
  uuid: string;
  /** CRUSH host bucket; unset until the OSD first boots (until then it is a "stray"). */
  host?: string;
  ip?: string;
  devicePath?: string;
  sizeBytes: number;
  deviceClass: DeviceClass;
  /** CRUSH holds a class for it (given to `osd new`, or set at its first boot): later boots
   * keep it (osd_class_update_on_start sets a missing class only). */
  crushClass: boolean;
  /** CRUSH weight in TiB, 16.16 fixed point as Ceph stores it. */
  crushWeight: number;
  up: boolean;
  in: boolean;
  /** Marked out by the mon after mon_osd_down_out_interval, not by an operator: booting
   * again marks it back in (mon_osd_auto_mark_auto_out_in). */
  autoOut: boolean;
  booted: boolean;
  /** `osd destroy`: id, CRUSH position and class kept for a replacement (`osd new UUID ID`);
   * uuid and key are gone, the OSD map shows it `destroyed`. */
  destroyed: boolean;
  downSince?: number;
  upFrom: number;
  downAt: number;
}

export interface SimPool {
  id: number;
  name: string;
  pgNum: number;
  size: number;
  minSize: number;
  /** application → its metadata, e.g. {cephfs: {data: 'cephfs'}}. */
  applications: Record<string, Record<string, string>>;
  options: Record<string, number>;
  /** Its CRUSH rule's id; unset: rule 0, the default replicated_rule. */
  crushRule?: number;
  storedBytes: number;
  objects: number;
  createdAt: number;
  lastChange: number;
}

export interface SimFs {
  id: number;
  name: string;
  metadataPool: number;
  dataPools: number[];
  maxMds: number;
  /** An MDS held rank 0 once: losing it makes the rank failed (FS_DEGRADED), not never-up. */
  everActive: boolean;
  /** false after `fs fail`: no MDS takes it on. */
  joinable?: boolean;
  createdAt: number;
}

export interface SimAuthEntity {
  entity: string;
  key: string;
  caps: Record<string, string>;
}

export interface SimRgwUser {
  uid: string;
  displayName: string;
  email: string;
  keys: { accessKey: string; secretKey: string }[];
}

export interface SimCephOptions {
  /** osd_pool_default_size; min_size follows Ceph's rule size - size/2. */
  poolDefaultSize: number;
  /** osd_pool_default_pg_num. */
  poolDefaultPgNum: number;
  /** mon_max_pg_per_osd: pool creation beyond it fails with ERANGE. */
  maxPgPerOsd: number;
  /** osd_crush_chooseleaf_type: replicas on distinct hosts (1, the default) or OSDs (0). */
  failureDomain: 'host' | 'osd';
  nearfullRatio: number;
  backfillfullRatio: number;
  fullRatio: number;
  /** mon_osd_down_out_interval: a down OSD is marked out after this long. */
  downOutIntervalMs: number;
  /** How fast PGs move off an OSD marked out while up (backfill), in PGs per second of `now`;
   * Infinity moves them at once. Pause it with SimCephCluster.pauseBackfill (nobackfill). */
  backfillPgsPerSec: number;
  now: () => number;
  random: Random;
}

export const CEPH_VERSION = 'ceph version 16.2.15 (618f440892089921c3e944a991122ddc44e60516) pacific (stable)';
export const GiB = 1024 ** 3;
export const TiB = 1024 ** 4;
export const MON_V1_PORT = 6789;
export const MON_V2_PORT = 3300;

export const defaultMinSize = (size: number): number => size - Math.floor(size / 2);

/** CRUSH weight of a device: its size in TiB, rounded to 16.16 fixed point. */
export const crushWeightOf = (sizeBytes: number): number => Math.max(1, Math.round((sizeBytes / TiB) * 0x10000)) / 0x10000;

/** "10.0.0.1" or "10.0.0.1:3300" → ip and msgr2 port. */
export function parseMonAddr(addr: string): { ip: string; port: number } {
  const m = /^\[?([0-9a-fA-F.:]+?)\]?(?::(\d+))?$/.exec(addr.trim());
  if (!m?.[1]) throw new Error(`not a monitor address: ${addr}`);
  return { ip: m[1], port: m[2] === undefined ? MON_V2_PORT : Number(m[2]) };
}

/** The msgr1 port that goes with a msgr2 port: 6789 for 3300, else the next port (as the
 * measured loopback clusters do, docs/real-components.md). */
export const v1PortOf = (port: number): number => (port === MON_V2_PORT ? MON_V1_PORT : port + 1);

/** Ceph's ISO stamps: "2026-11-22T05:33:25.715104+0000". */
export const stamp = (ms: number): string => new Date(ms).toISOString().replace('Z', '000+0000');
