// Every kind of object the store holds, with its spec and status types.
import type { FromSchema } from 'json-schema-to-ts';
import type { DAEMONS, DEVICE_CLASSES, NodeDaemonType } from '../catalogue/index.js';
import type { CommonStatus } from './conditions.js';
import type { ObjectNames } from './document.js';

export const Kind = {
  Node: 'Node',
  Disk: 'Disk',
  TaskRun: 'TaskRun',
  User: 'User',
  Session: 'Session',
  AgentCredential: 'AgentCredential',
} as const;
export type Kind = (typeof Kind)[keyof typeof Kind];

export const NodeStatus = {
  discovered: 'discovered',
  booting: 'booting',
  active: 'active',
  rebooting: 'rebooting',
  shuttingDown: 'shutting-down',
  /** In maintenance (spec.maintenance): noout set, its Ceph daemons stopped, a lease held. */
  maintenance: 'maintenance',
  offline: 'offline',
  error: 'error',
} as const;
export type NodeStatus = (typeof NodeStatus)[keyof typeof NodeStatus];

export interface NodeSpec {
  hostname: string;
  /** MAC addresses, lower case; the first is the boot NIC. */
  macs: string[];
  role: 'master' | 'worker';
  /** Image id to install; null = the default image. */
  image: string | null;
  power: 'on' | 'off';
  /** Counters: a request is a bump; the node loop acts once per bump. */
  restartGeneration: number;
  shutdownGeneration: number;
  /** Enrollment: false for a machine found by network boot until an admin approves it (or a
   * spec names its MAC and it boots from its Quarry-served lease). Absent on nodes stored
   * before enrollment existed: those whose agent has reported count as approved. */
  approved?: boolean;
  /** The daemons this node runs (src/catalogue/daemons.ts): `{ diskId }` for one whose
   * entry needsDisk, its params otherwise (none yet: `{}`). */
  daemons: NodeDaemons;
  /** An admin node: its agent is also handed client.admin (GET /ceph/nodes/{id}/keyrings).
   * Absent or false: the master alone holds that key. */
  adminKeyring?: boolean;
  /** The machine's BMC (IPMI over LAN): what powers it on after a shutdown. The whole field is
   * sealed at rest (src/model/secret-fields.ts); answers show `passwordSet`, never the password. */
  bmc?: BmcSpec;
  /** `bmc`: a hung node may be power-cycled through its BMC (inside the disruption budget).
   * Absent: `none`. */
  fencing?: 'none' | 'bmc';
  /** `node.power-on`: undoes every shutdown request up to this count (a request is a bump; the
   * node is held off while shutdownGeneration is higher). Absent: 0. */
  powerOnGeneration?: number;
  /** `node.maintenance` (or `maintenance: true` in a spec file): noout for its OSDs and its Ceph
   * daemons stopped, under a disruption lease; false again: started, noout cleared. Absent: false. */
  maintenance?: boolean;
}

/** IPMI over LAN's (RMCP+) port, when a BMC declares none. */
export const DEFAULT_BMC_PORT = 623;

export interface BmcSpec {
  address: string;
  /** UDP port of its RMCP+ (IPMI over LAN); absent: 623. */
  port?: number;
  username: string;
  password: string;
}

export type { NodeDaemonType };
/** The daemons a node's spec names; the catalogue's DaemonType adds the disk-placed OSDs. */
export type DaemonType = NodeDaemonType;

/** Each node daemon's spec entry: one whose catalogue entry needsDisk names its disk. */
export type NodeDaemons = {
  [T in NodeDaemonType]?: ((typeof DAEMONS)[T]['needsDisk'] extends true ? { diskId: string } : unknown) & DaemonParams<T>;
};
/** The further fields of a daemon's spec entry (its catalogue `params`; an NFS gateway's export). */
type DaemonParams<T extends NodeDaemonType> = FromSchema<{
  type: 'object';
  additionalProperties: false;
  properties: (typeof DAEMONS)[T]['params'];
  required: (typeof DAEMONS)[T] extends { required: readonly string[] } ? (typeof DAEMONS)[T]['required'] : [];
}>;

/** What a Ceph daemon loop last concluded about its daemon; each loop writes only its own. */
export interface DaemonState {
  phase: 'pending' | 'blocked' | 'starting' | 'running' | 'failed' | 'orphaned';
  reason: string;
  message: string;
}

export interface NodeStatusFields extends CommonStatus {
  ceph?: Partial<Record<DaemonType, DaemonState>>;
  phase?: NodeStatus;
  ip?: string;
  observedRestartGeneration?: number;
  observedShutdownGeneration?: number;
  /** The power-on request (spec.powerOnGeneration) last carried out. */
  observedPowerOnGeneration?: number;
  bootCount?: number;
  /** The source address of the machine's last boot request (enrollment: what an admin approves). */
  bootAddress?: string;
  /** When an operator last reset a boot loop: earlier network boots no longer count. */
  bootLoopResetAt?: string;
  /** The boot the agent last reported from; a restart is confirmed when it changes. */
  bootId?: string;
  /** Every disk the node has reported, present or not. */
  diskIds?: string[];
  /** The NICs as the agent last reported them. */
  nics?: Array<{ name: string; mac: string; ip: string; connected: boolean; mtu: number }>;
  /** Daemons the agent reports running. */
  daemons?: { [T in NodeDaemonType]?: boolean } & {
    osds?: number[];
  }; /** The disruption lease the node holds or waits for (reconcilers/shared/disruption-gate.ts). */
  disruption?: NodeDisruption;
  /** The restart-relevant config its daemons run with (reconcilers/shared/daemon-config.ts), per
   * daemon kind, and the boot it was recorded in (daemons started in a later boot read the new one). */
  daemonConfig?: { bootId: string; hashes: Record<string, string> };
}

/** A node's place in the disruption budget: `held` while its restart or shutdown holds a lease,
 * `waiting` while the budget or Ceph holds it back (`heldBy`: the leases in its way). */
export interface NodeDisruption {
  state: 'held' | 'waiting';
  kind: string;
  since: string;
  heldBy?: string[];
  reason?: string;
}

export interface DiskSpec {
  nodeId: string;
  serial: string;
  /** An OSD is wanted on this disk: created, or adopted when one of this cluster is there. */
  osd: boolean;
  wipeGeneration: number;
  /** The OSD on this disk is to go (`state: absent`, `ceph.remove-osd`, `ceph.replace-osd`):
   * `remove` drains, purges and wipes it, and the disk is eligible again; `replace` drains
   * and destroys it keeping its id and CRUSH position for the disk that takes its place.
   * Ignored while `osd` is true. Absent: an OSD nobody wants is left running (orphaned). */
  osdRemoval?: OsdRemoval;
  /** CRUSH device class for its OSD; absent: from the disk (nvme by interface, hdd when
   * rotational, else ssd). */
  deviceClass?: DeviceClass;
  /** The id of the Disk (same node) whose destroyed OSD this one takes over, id and all
   * (`replaces: <old serial>` in a spec file). Absent: any destroyed OSD of the node. */
  replaces?: string;
}

export const OsdRemoval = { remove: 'remove', replace: 'replace' } as const;
export type OsdRemoval = (typeof OsdRemoval)[keyof typeof OsdRemoval];
export type DeviceClass = (typeof DEVICE_CLASSES)[number];

/** Where a disk's OSD is in its life. The daemon phases, then the removal's and replacement's:
 * draining (out, PGs moving off) → stopping → purging | destroying → zapping → removed; a
 * destroyed OSD waits for the disk that replaces it, which then shows `replaced`. */
export const OSD_PHASES = [
  'pending',
  'blocked',
  'starting',
  'running',
  'failed',
  'orphaned',
  'draining',
  'stopping',
  'purging',
  'destroying',
  'destroyed',
  'zapping',
  'removed',
  'replaced',
] as const;
export type OsdPhase = (typeof OSD_PHASES)[number];

export interface OsdState {
  phase: OsdPhase;
  reason: string;
  message: string;
}

/** Data still on a draining OSD, from Ceph (`osd df`): what the operator watches go to zero. */
export interface DrainProgress {
  osdId: number;
  /** PGs and bytes on it when the drain began, and now. */
  startPgs: number;
  startBytes: number;
  pgs: number;
  bytes: number;
  /** When Ceph was last asked. */
  observedAt: string;
}

export const DISK_HISTORY_EVENTS = ['created', 'adopted', 'removed', 'destroyed', 'replaced-by', 'replaces', 'zapped'] as const;

/** One event in a disk's life, newest last (at most DISK_HISTORY_MAX kept). */
export interface DiskHistoryEntry {
  at: string;
  event: (typeof DISK_HISTORY_EVENTS)[number];
  osdId: number | null;
  /** The other disk of a replacement (old serial on the new disk, new serial on the old one). */
  otherSerial?: string;
  message: string;
}
export const DISK_HISTORY_MAX = 20;

/** What the BlueStore label at the head of a disk says (the agent reads it): whose OSD it is. */
export interface BlueStoreLabel {
  /** The cluster's fsid (`ceph_fsid`). */
  fsid: string;
  osdUuid: string;
  osdId: number;
}

export interface DiskStatusFields extends CommonStatus {
  devicePath?: string;
  capacityBytes?: number;
  rotational?: boolean;
  interface?: string;
  model?: string;
  vendor?: string;
  isSystem?: boolean;
  hasFilesystem?: boolean;
  present?: boolean;
  osdId?: number | null;
  /** The uuid `ceph osd new` was (or will be) called with: chosen once, so a retry gets the same id. */
  osdUuid?: string;
  eligible?: boolean;
  reasons?: string[];
  observedWipeGeneration?: number;
  osd?: OsdState;
  /** The BlueStore label the agent found on it (node loop); absent when none. */
  label?: BlueStoreLabel;
  /** A removal in progress: how much is still on the OSD. */
  drain?: DrainProgress;
  history?: DiskHistoryEntry[];
  /** The disk that took over this disk's destroyed OSD (its id). */
  replacedBy?: string;
}

export const RunState = {
  pending: 'pending',
  running: 'running',
  completed: 'completed',
  failed: 'failed',
  canceled: 'canceled',
} as const;
export type RunState = (typeof RunState)[keyof typeof RunState];

export const isFinished = (s: RunState): boolean => s === RunState.completed || s === RunState.failed || s === RunState.canceled;

export interface TaskRunSpec {
  taskName: string;
  /** The object this run acts for, and the generation it was planned from. */
  targetKind: string;
  targetId: string;
  /** The target's name when the run started (a YAML name, `host/serial` for a disk): for events
   * and logs an operator can read. Absent on runs stored before it existed. */
  targetName?: string | null;
  /** The target's other names when the run started (YAML name and file, hostname, a disk's
   * device path and serial), for the same readers. */
  targetNames?: ObjectNames;
  /** The HTTP request that wrote the generation this run acts on (X-Request-Id): its events
   * and log lines carry it. Null or absent when a file or Quarry itself made the change. */
  requestId?: string | null;
  generation: number;
  /** Set for node-level steps, which the node's agent carries out. */
  nodeId: string | null;
  nodeHostname: string | null;
  args: Record<string, unknown>;
  timeoutMs: number;
  attempt: number;
}

export interface Question {
  id: string;
  prompt: string;
  options: string[];
  createdAt: string;
  answer: string | null;
  /** Who answered (a username) and when: a loop that acts on the answer names them. */
  answeredBy?: string;
  answeredAt?: string;
}

export interface TaskRunStatus {
  state: RunState;
  startedAt: string | null;
  completedAt: string | null;
  error: string | null;
  question: Question | null;
  /** Free-form result reported by the step (an OSD id, a key, ...). */
  result: Record<string, unknown> | null;
}

export interface UserSpec {
  username: string;
  name: string;
  email: string;
  isAdmin: boolean;
  /** `scrypt$N$r$p$salt$hash` (base64url); never leaves the server. */
  passwordHash: string;
}

/** A login session: one refresh-token family. Revoking it deletes the document. */
export interface SessionSpec {
  /** A user's id, or `agent:<nodeId>` for a node agent's session. */
  userId: string;
  /** The only refresh token id of this family still accepted; an older one is a replay. */
  refreshJti: string;
  /** ISO time after which the refresh token, hence the session, is dead. */
  expiresAt: string;
}

/**
 * The credential a node's agent logs in with (username `agent:<nodeId>`, id = the node id).
 * The secret is 256 random bits, so a SHA-256 hash is enough to store it. `initialSecret` is
 * the plaintext of a credential no agent has used yet, kept only so the boot path can hand it
 * to the machine at install time; the first login deletes it (trust on first use).
 */
export interface AgentCredentialSpec {
  nodeId: string;
  /** Hex SHA-256 of the current secret. */
  secretHash: string;
  initialSecret: string | null;
  issuedAt: string;
  firstUsedAt: string | null;
  /** Set by the agent's first rotation; until then its session may only rotate. */
  rotatedAt: string | null;
  /** The address the install credential is bound to: the boot request's (the node's DHCP lease
   * where Quarry knows it). The cloud-init render and the first login must come from it. */
  boundAddress?: string | null;
  /** When an unclaimed install credential stops being valid (then it is deleted). */
  expiresAt?: string | null;
  /** The address of the first login with the install secret. */
  claimedBy?: string | null;
  /** Hex SHA-256 of the install secret, kept after rotation to recognise a replay of it. */
  installHash?: string | null;
  /** Set when a second party used or raced for the credential: it is revoked until an admin
   * approves the node again. A message without secrets. */
  conflict?: { at: string; message: string } | null;
}
