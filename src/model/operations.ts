// Which operation a node or disk offers in its current state (the table in
// docs/api-conventions.md, "Nodes, disks and operations"), and why a disk cannot take an OSD.
// Pure: the API, the loops and the lab all ask these functions, so an operator sees the same
// reasons everywhere.
import { DAEMONS, DISK_OPERATIONS, DiskOperation, NODE_DAEMON_TYPES, NODE_OPERATIONS, NodeOperation } from '../catalogue/index.js';
import type { Doc } from './document.js';
import type { DiskSpec, DiskStatusFields, NodeSpec, NodeStatusFields } from './kinds.js';

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

export function offeredDiskOperations(d: DiskDoc, n: NodeDoc | undefined): DiskOperation[] {
  if (!isActive(n)) return [];
  const ops: DiskOperation[] = [];
  if (diskReasons(d, n).length === 0) ops.push(DiskOperation.createOsd);
  const wipeable = d.status.present !== false && !isOsdDisk(d) && !isMonDisk(d, n) && !d.status.isSystem && !isWiping(d);
  if (wipeable) ops.push(DiskOperation.wipe);
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
  if (phase === 'active' || phase === 'error') ops.push(NodeOperation.restart, NodeOperation.shutdown);
  return ops;
}
