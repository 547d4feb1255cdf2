// What CephClient returns: Quarry's names for the parts of Ceph 16 (Pacific) output the loops
// use. The raw shapes and their schemas live in ceph-schemas*.ts; anything Ceph adds beyond them
// is ignored.

import type { ClusterMetrics } from '../model/ceph-kinds.js';

export const HEALTH = { OK: 'HEALTH_OK', WARN: 'HEALTH_WARN', ERR: 'HEALTH_ERR' } as const;
export type HealthStatus = (typeof HEALTH)[keyof typeof HEALTH];

export interface HealthCheck {
  /** Ceph's check code, e.g. OSD_DOWN, MDS_ALL_DOWN. */
  code: string;
  severity: HealthStatus;
  message: string;
  count: number;
  /** One line per affected item; empty unless `health detail` was asked. */
  detail: string[];
  muted: boolean;
}

export interface CephHealth {
  status: HealthStatus;
  checks: HealthCheck[];
}

export interface PgStateCount {
  state: string;
  count: number;
}

/** `ceph status`: every number comes from that one call (Pacific's pgmap carries the byte
 * totals that `ceph df` reports too). */
export interface CephStatus extends ClusterMetrics {
  fsid: string;
  health: HealthStatus;
  healthChecks: HealthCheck[];
  quorumNames: string[];
  pgStates: PgStateCount[];
  mgrAvailable: boolean;
}

export interface PoolUsage {
  id: number;
  name: string;
  storedBytes: number;
  objects: number;
  usedBytes: number;
  percentUsed: number;
  maxAvailableBytes: number;
}

export interface CephDf {
  totalBytes: number;
  availableBytes: number;
  usedBytes: number;
  usedRawBytes: number;
  pools: PoolUsage[];
}

export interface OsdTreeNode {
  id: number;
  name: string;
  /** CRUSH bucket type (root, host, ...) or 'osd'. */
  type: string;
  children: number[];
  /** OSDs only: up, down or destroyed. */
  status?: string;
  /** OSDs only: the host bucket the OSD sits under; absent for a stray OSD (not in CRUSH). */
  host?: string;
  deviceClass?: string;
  crushWeight?: number;
  reweight?: number;
  /** True for an OSD that exists in the OSD map but not in the CRUSH map (e.g. never booted). */
  stray: boolean;
}

export interface OsdTree {
  nodes: OsdTreeNode[];
}

export interface OsdStat {
  epoch: number;
  numOsds: number;
  numUpOsds: number;
  numInOsds: number;
  numRemappedPgs: number;
}

export interface OsdDumpOsd {
  id: number;
  uuid: string;
  up: boolean;
  in: boolean;
  state: string[];
}

export interface Pool {
  id: number;
  name: string;
  size: number;
  minSize: number;
  pgNum: number;
  /** Present in `osd pool ls detail` only. */
  autoscaleMode?: string;
  applications: string[];
}

export interface OsdDump {
  epoch: number;
  fsid: string;
  flags: string[];
  maxOsd: number;
  osds: OsdDumpOsd[];
  pools: Pool[];
}

export interface MonAddr {
  type: string;
  addr: string;
}

export interface MonInfo {
  name: string;
  rank: number;
  /** The legacy (v1) address as Ceph prints it, "127.0.0.1:6789/0". */
  addr: string;
  addrs: MonAddr[];
}

export interface MonDump {
  epoch: number;
  fsid: string;
  mons: MonInfo[];
  /** Ranks in quorum; `mon dump` has it, the monmap inside `quorum_status` does not. */
  quorum?: number[];
}

export interface MonRemoved {
  /** false: the monitor was not in the monmap (already removed). */
  removed: boolean;
}

export interface MonStat {
  epoch: number;
  numMons: number;
  leader: string;
  quorum: { rank: number; name: string }[];
}

export interface QuorumStatus {
  electionEpoch: number;
  quorum: number[];
  quorumNames: string[];
  leader: string;
  monmap: MonDump;
}

export interface MgrStat {
  epoch: number;
  available: boolean;
  activeName: string;
  numStandby: number;
}

export interface MdsDaemon {
  name: string;
  gid: number;
  rank: number;
  /** up:active, up:standby, up:replay, ... */
  state: string;
}

export interface FsInfo {
  id: number;
  name: string;
  maxMds: number;
  metadataPoolId: number;
  dataPoolIds: number[];
  daemons: MdsDaemon[];
}

/** `ceph mds stat` (and `ceph fs dump`): the FSMap. */
export interface MdsStat {
  epoch: number;
  filesystems: FsInfo[];
  standbys: MdsDaemon[];
}

export interface FsListEntry {
  name: string;
  metadataPool: string;
  metadataPoolId: number;
  dataPools: string[];
  dataPoolIds: number[];
}

export interface PgStat {
  ready: boolean;
  numPgs: number;
  pgStates: PgStateCount[];
}

export interface CephVersions {
  /** Version string → number of daemons running it, over every daemon. */
  overall: Record<string, number>;
  /** Daemon type (mon, mgr, osd, mds, rgw) → version string → count. */
  byType: Record<string, Record<string, number>>;
}

export interface OsdNewOptions {
  cephxSecret?: string;
  /** A destroyed OSD's id to reuse. */
  id?: number;
  /** Its crush_device_class; Ceph guesses from the rotational flag otherwise. A reused id
   * keeps the class CRUSH has for it (Ceph 16 ignores this one then). */
  deviceClass?: string;
}

/** One OSD of `osd df`: what is on it. */
export interface OsdDf {
  id: number;
  /** Its CRUSH class; '' when CRUSH has none. */
  deviceClass: string;
  /** Placement groups it serves (acting): an out OSD keeps counting them until they moved. */
  pgs: number;
  /** Bytes of user data on it (kb_used_data), and all it uses (kb_used); zero once it is out. */
  dataBytes: number;
  usedBytes: number;
  totalBytes: number;
  status: string;
}

/** A removal that may find nothing to remove. */
export interface Removed {
  removed: boolean;
}

/** A safety gate's answer: "not ok" is a value, not an exception. */
export interface OkToStop {
  ok: boolean;
  /** Why not, in Ceph's words; absent when ok. */
  reason?: string;
  osds: number[];
}

export interface SafeToDestroy {
  safe: boolean;
  reason?: string;
  /** Filled from the JSON answer; empty when Ceph answered with an error instead. */
  safeIds: number[];
  activeIds: number[];
  missingStatsIds: number[];
  storedPgIds: number[];
}

export interface AuthEntity {
  entity: string;
  /** The cephx secret: never log it. */
  key: string;
  caps: Record<string, string>;
}

/** Whether a create call made something or found it already there. */
export interface Created {
  created: boolean;
}
