// Which operation a node or disk offers in its current state (the table in
// docs/api-conventions.md, "Nodes, disks and operations"), and why a disk cannot take an OSD.
// Pure: the API, the loops and the lab all ask these functions, so an operator sees the same
// reasons everywhere.
import { DAEMONS, DISK_OPERATIONS, DiskOperation, NODE_DAEMON_TYPES, NODE_OPERATIONS, NodeOperation } from '../catalogue/index.js';
import type { Doc } from './document.js';
import type { DeviceClass, DiskSpec, DiskStatusFields, NodeSpec, NodeStatusFields, OsdPhase } from './kinds.js';

// The operations themselves are the catalogue's (src/catalogue/operations.ts).
export { DiskOperation, NodeOperation };

export const nodeOperations: readonly string[] = NODE_OPERATIONS;
export const diskOperations: readonly string[] = DISK_OPERATIONS;

/** Machine-readable reasons a disk cannot take an OSD. */
export const DiskReason = {
  systemDisk: 'system-disk',
  holdsOsd: 'holds-osd',
  monitorDisk: 'monitor-disk',
  hasFilesystem: 'has-filesystem',
  tooSmall: 'too-small',
  wipeInProgress: 'wipe-in-progress',
  absent: 'absent',
} as const;
export type DiskReason = (typeof DiskReason)[keyof typeof DiskReason];

/** BlueStore needs room for its DB and WAL besides data; below this an OSD is not worth it. */
export const MIN_OSD_BYTES = 5 * 2 ** 30;

export type NodeDoc = Doc<NodeSpec, NodeStatusFields>;
export type DiskDoc = Doc<DiskSpec, DiskStatusFields>;

export const isOsdDisk = (d: DiskDoc): boolean => d.spec.osd || (d.status.osdId ?? null) !== null;
export const isMonDisk = (d: DiskDoc, n: NodeDoc | undefined): boolean => n?.spec.daemons.mon?.diskId === d.id;
export const isWiping = (d: DiskDoc): boolean => d.spec.wipeGeneration > (d.status.observedWipeGeneration ?? 0);

/** Why this disk cannot take an OSD; empty when it can. Independent of the node's state. */
export function diskReasons(d: DiskDoc, n: NodeDoc | undefined): DiskReason[] {
  const reasons: DiskReason[] = [];
  if (d.status.present === false) reasons.push(DiskReason.absent);
  if (d.status.isSystem) reasons.push(DiskReason.systemDisk);
  if (isOsdDisk(d)) reasons.push(DiskReason.holdsOsd);
  if (isMonDisk(d, n)) reasons.push(DiskReason.monitorDisk);
  if (d.status.hasFilesystem) reasons.push(DiskReason.hasFilesystem);
  if ((d.status.capacityBytes ?? 0) < MIN_OSD_BYTES) reasons.push(DiskReason.tooSmall);
  if (isWiping(d)) reasons.push(DiskReason.wipeInProgress);
  return reasons;
}

const isActive = (n: NodeDoc | undefined): boolean => n?.status.phase === 'active';

/** Phases past the point of no return: the OSD is being or has been purged or destroyed. Such
 * an OSD can be neither adopted nor removed again. */
const GONE_PHASES: ReadonlySet<OsdPhase> = new Set<OsdPhase>(['purging', 'destroying', 'destroyed', 'zapping', 'removed', 'replaced']);
const osdPhase = (d: DiskDoc): OsdPhase | undefined => d.status.osd?.phase;

/** The disk's OSD is being or has been purged or destroyed: too late to adopt or undo. */
export const isOsdGone = (d: DiskDoc): boolean => GONE_PHASES.has(osdPhase(d) ?? 'running');

/** An OSD of this cluster is on the disk and still in service (status.osdId set, not purged or
 * destroyed): what a removal or replacement acts on. */
export const holdsLiveOsd = (d: DiskDoc): boolean => (d.status.osdId ?? null) !== null && !isOsdGone(d);

/** A removal or replacement is asked for (and not undone). */
export const isRemovalRequested = (d: DiskDoc): boolean => !d.spec.osd && d.spec.osdRemoval !== undefined;

/** Its OSD was destroyed (a replacement, or a disk that died): the disk itself may be wiped. */
export const isOsdDestroyed = (d: DiskDoc): boolean => {
  const phase = osdPhase(d);
  return phase === 'destroyed' || phase === 'replaced';
};

/** Declaring an OSD here adopts the one that is there instead of creating one: an OSD this
 * cluster runs that no one wants (orphaned, or a removal not yet past purge or destroy), or a
 * BlueStore label of this cluster (`fsid`) on a disk with no OSD recorded. Another cluster's
 * label is not ours to adopt. */
export function isAdoptable(d: DiskDoc, clusterFsid: string | undefined): boolean {
  if (d.spec.osd) return false;
  if (holdsLiveOsd(d)) return true;
  const label = d.status.label;
  // A replaced disk keeps the label of the OSD that moved to its successor: not to adopt.
  return (
    (d.status.osdId ?? null) === null && !isOsdGone(d) && label !== undefined && clusterFsid !== undefined && label.fsid === clusterFsid
  );
}

/** Reasons an adoption does not count: they are the adopted OSD's own (its BlueStore is the
 * filesystem, its size was fine when it was made). */
const ADOPTION_EXEMPT: ReadonlySet<DiskReason> = new Set<DiskReason>([DiskReason.holdsOsd, DiskReason.hasFilesystem, DiskReason.tooSmall]);

/** Why an OSD cannot be declared on this disk (spec.osd: true, by a file or the API): its
 * eligibility, less what an adoption brings along. Empty when it can. */
export function declareReasons(d: DiskDoc, n: NodeDoc | undefined, clusterFsid: string | undefined): DiskReason[] {
  const reasons = diskReasons(d, n);
  return isAdoptable(d, clusterFsid) ? reasons.filter((r) => !ADOPTION_EXEMPT.has(r)) : reasons;
}

/** CRUSH device class of a disk's OSD: the spec's, else as ceph-volume would guess it (by
 * interface first, then rotation). */
export function deviceClassOf(d: DiskDoc): DeviceClass {
  if (d.spec.deviceClass) return d.spec.deviceClass;
  if (d.status.interface === 'nvme') return 'nvme';
  return d.status.rotational ? 'hdd' : 'ssd';
}

/** `clusterFsid`: the cluster's, to tell a BlueStore label of this cluster (adoption). */
export function offeredDiskOperations(d: DiskDoc, n: NodeDoc | undefined, clusterFsid?: string): DiskOperation[] {
  const ops: DiskOperation[] = [];
  if (isActive(n)) {
    if (declareReasons(d, n, clusterFsid).length === 0) ops.push(DiskOperation.createOsd);
  }
  // Taking an OSD out of service needs its node known, not active: an OSD on a dead node is the
  // very one to remove or replace (the loop skips what needs the node).
  if (n !== undefined && holdsLiveOsd(d) && !isRemovalRequested(d)) ops.push(DiskOperation.removeOsd, DiskOperation.replaceOsd);
  if (isActive(n)) {
    const osdFree = !isOsdDisk(d) || (!d.spec.osd && isOsdDestroyed(d));
    const wipeable = d.status.present !== false && osdFree && !isMonDisk(d, n) && !d.status.isSystem && !isWiping(d);
    if (wipeable) ops.push(DiskOperation.wipe);
  }
  return ops;
}

/** A monitor keeps its store on a disk of its node; any OSD-eligible disk will do. */
export const monitorDiskCandidates = (n: NodeDoc, disks: DiskDoc[]): DiskDoc[] =>
  disks.filter((d) => d.spec.nodeId === n.id && diskReasons(d, n).length === 0);

/** Approved, or stored before enrollment existed and its agent has reported (its bootId). */
export const isNodeApproved = (n: Pick<NodeDoc, 'spec' | 'status'>): boolean => n.spec.approved ?? n.status.bootId !== undefined;

export function offeredNodeOperations(n: NodeDoc, disks: DiskDoc[]): NodeOperation[] {
  // An unapproved node can only be approved: nothing else is done to a machine nobody accepted.
  if (!isNodeApproved(n)) return [NodeOperation.approve];
  const ops: NodeOperation[] = [];
  const phase = n.status.phase;
  if (phase === 'active') {
    const want = n.spec.daemons;
    // One create operation per node daemon not yet wanted; one that needs a disk, if a disk fits.
    for (const t of NODE_DAEMON_TYPES) {
      if (want[t] || (DAEMONS[t].needsDisk && monitorDiskCandidates(n, disks).length === 0)) continue;
      ops.push(DAEMONS[t].operation);
    }
  }
  // In maintenance too (a reboot for firmware, a power-off to swap parts): on its maintenance lease.
  if (phase === 'active' || phase === 'error' || phase === 'maintenance') ops.push(NodeOperation.restart, NodeOperation.shutdown);
  // Offered to every offline node, BMC or not: without one the request is kept and the node
  // says why nothing happens (Blocked: NoPowerControl) until a BMC is declared or it reports.
  if (phase === 'offline') ops.push(NodeOperation.powerOn);
  // Maintenance is desired state: entered from `active`; left whenever it is wanted (entering,
  // waiting for its lease, or in it).
  if (n.spec.maintenance === true) ops.push(NodeOperation.maintenanceExit);
  else if (phase === 'active') ops.push(NodeOperation.maintenance);
  return ops;
}
