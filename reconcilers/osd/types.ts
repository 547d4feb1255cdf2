// The OSD plan's vocabulary: its tasks, what observe hands it, the steps it may take and the
// plan it returns. Here, apart from the plan's parts (keep, remove, replace, adopt), so they all
// name it without importing one another in a circle.
import { DAEMONS, Step, type Daemon } from '../../src/catalogue/index.js';
import type { OsdDf, SafeToDestroy } from '../../src/clients/ceph-types.js';
import type { DiskHistoryEntry, DrainProgress, OsdState } from '../../src/model/kinds.js';
import type { DiskDoc, NodeDoc } from '../../src/model/operations.js';
import type { LoopPlan } from '../../src/runtime/loop-kit/index.js';
import type { LeaseState } from '../shared/drain-lease.js';
import type { RunInfo } from '../shared/runs.js';

export const OsdTask = {
  new: Step.osdNew,
  create: Step.osdCreate,
  restart: Step.daemonRestart,
  out: Step.osdOut,
  in: Step.osdIn,
  stop: Step.osdStop,
  purge: Step.osdPurge,
  destroy: Step.osdDestroy,
  zap: Step.osdZap,
} as const;

/** The caps `ceph-volume` gives an OSD's key (the bootstrap-osd profile). */
export const OSD_CAPS: Readonly<Record<string, string>> = DAEMONS.osd.caps;

/** What observe read for a disk whose OSD is in a removal (or may be): read only then, so a
 * running OSD costs no Ceph call. */
export interface LifecycleObserved {
  /** The newest run of each removal task for this disk. */
  outRun: RunInfo | null;
  inRun: RunInfo | null;
  stopRun: RunInfo | null;
  purgeRun: RunInfo | null;
  destroyRun: RunInfo | null;
  zapRun: RunInfo | null;
  /** The drain lease as this disk sees it; null when not read. */
  lease: LeaseState | null;
  /** Holders of the lease whose disks are gone or no longer drain: their leases do not count. */
  staleHolders: string[];
  /** This OSD's line of `osd df` (or Ceph's failure); null when not asked this time. */
  df: OsdDf | { error: string } | null;
  /** `safe-to-destroy` for this OSD; null when not asked this time (asked once per recheck). */
  safe: SafeToDestroy | { error: string } | null;
  /** `osd dump` says the OSD is down: asked only while its stop waits for an inactive node. */
  down: boolean | null;
}

export interface OsdObserved {
  disk: DiskDoc;
  node: NodeDoc | undefined;
  quorum: boolean;
  /** The newest run of each OSD task for this disk. */
  newRun: RunInfo | null;
  createRun: RunInfo | null;
  restartRun: RunInfo | null;
  now: number;
  retryBaseMs: number;
  startGraceMs: number;
  /** The cluster's fsid: a BlueStore label with it is this cluster's OSD (adoption). */
  fsid?: string | null;
  /** A disk gone from its active node this long is dead (DISK_GONE_GRACE_MS). */
  diskGoneGraceMs?: number;
  /** The loop's recheck delay of a held gate (BLOCKED_RECHECK_MS); a drain's rechecks start
   * sooner (remove.ts, drainRecheckMs). Absent: a drain is looked at again after the recheck. */
  recheckMs?: number;
  /** The failure domain of the disk's node (the disruption budget counts it); null: no node. */
  domain?: string | null;
  lifecycle?: LifecycleObserved | null;
  /** The node's other disks: read only for a disk that still needs its OSD id (a replacement
   * claims a destroyed one), never for a running OSD. */
  peers?: DiskDoc[] | null;
  /** The disk named by status.replacedBy, read until its OSD runs. */
  replacer?: DiskDoc | null;
}

export interface CreateArgs {
  osdId: number;
  uuid: string;
  devicePath: string;
  sizeBytes: number;
  deviceClass: DeviceClass;
}

export interface NewArgs {
  uuid: string;
  /** A destroyed OSD's id this disk takes over (`osd new <uuid> <id>`). */
  id?: number;
  deviceClass?: DeviceClass;
}

export type OsdStep =
  /** Stores the uuid `osd new` will use: random, or the one of this cluster's BlueStore label. */
  | { kind: 'assign-uuid'; uuid?: string }
  /** CAS of the old disk's status.replacedBy: this disk takes over its destroyed OSD. */
  | { kind: 'claim'; oldDiskId: string; osdId: number }
  /** `adopt`: look the uuid up in `osd dump` first and never register a new OSD. */
  | { kind: 'new'; attempt: number; args: NewArgs; adopt?: boolean }
  | { kind: 'create'; attempt: number; args: CreateArgs }
  | { kind: 'restart'; attempt: number; args: { daemon: typeof Daemon.osd; id: number } }
  /** `lease`: the drain lease is free, and taken first (a CAS on the disruption budget); the
   * out starts only if it was granted. */
  | { kind: 'out'; attempt: number; args: { osdId: number }; lease?: { what: string; stale: string[] } }
  | { kind: 'in'; attempt: number; args: { osdId: number } }
  | { kind: 'stop'; attempt: number; args: { osdId: number } }
  | { kind: 'purge'; attempt: number; args: { osdId: number } }
  | { kind: 'destroy'; attempt: number; args: { osdId: number } }
  | { kind: 'zap'; attempt: number; args: { osdId: number; devicePath: string } };

/** The disk's status.osd this loop decides, the step, a wait, a gate; and the fields it keeps. */
export interface OsdPlan extends LoopPlan<OsdState | undefined, OsdStep> {
  /** What status.osdId should say: set once the agent reports the OSD running, then kept
   * until the OSD is purged or its id taken over by the disk that replaced it. */
  osdId: number | null;
  /** null: status.osdUuid is dropped (a removed OSD's); absent: kept as it is. */
  osdUuid?: null;
  /** null: status.replacedBy is dropped (the claiming disk gave up); absent: kept. */
  replacedBy?: null;
  /** status.drain to show (absent: none). */
  drain?: DrainProgress;
  /** Entries this plan adds to status.history. */
  history?: DiskHistoryEntry[];
  /** The drain lease should be held; absent or false: given back if held. */
  lease?: boolean;
  /** A step that keeps failing (Degraded), when the phase says something else than `failed`. */
  failing?: string;
  /** A second step started in the same pass as `step`, independent of it: the zap beside the
   * purge (remove.ts). */
  also?: OsdStep | null;
}

export type DeviceClass = 'hdd' | 'ssd' | 'nvme';
