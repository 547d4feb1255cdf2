// The operations an operator invokes on a node or a disk (POST .../invoke): one per daemon kind
// (its `operation` in DAEMONS), plus the node's power and enrollment and the disk's wipe.
import { DAEMONS, NODE_DAEMON_TYPES, type NodeDaemonType } from './daemons.js';

type DaemonOperation<T extends keyof typeof DAEMONS> = (typeof DAEMONS)[T]['operation'];

/** The operations that create a node daemon, by its type. */
export const NODE_DAEMON_OPERATIONS = Object.fromEntries(NODE_DAEMON_TYPES.map((t) => [t, DAEMONS[t].operation])) as {
  readonly [T in NodeDaemonType]: DaemonOperation<T>;
};

export const NodeOperation = {
  createMon: DAEMONS.mon.operation,
  createMgr: DAEMONS.mgr.operation,
  createMds: DAEMONS.mds.operation,
  createRgw: DAEMONS.rgw.operation,
  createNfs: DAEMONS.nfs.operation,
  restart: 'node.restart',
  shutdown: 'node.shutdown',
  /** Powers an offline node on through its BMC (src/power); without one the node says
   * `Blocked: NoPowerControl`. */
  powerOn: 'node.power-on',
  /** Maintenance (spec.maintenance): noout for its OSDs, its Ceph daemons stopped, inside the
   * disruption budget; `maintenance-exit` starts them again and gives the lease back. */
  maintenance: 'node.maintenance',
  maintenanceExit: 'node.maintenance-exit',
  /** Enrollment: an admin accepts a machine found by network boot (src/fleet/enrollment.ts). */
  approve: 'node.approve',
} as const;
export type NodeOperation = DaemonOperation<NodeDaemonType> | (typeof NodeOperation)[keyof typeof NodeOperation];

/** A disk's operations: create (or adopt) its OSD; remove it (drain, purge, wipe: the disk is
 * eligible again); replace it (destroy keeping the id for the disk that takes its place); wipe. */
export const DiskOperation = {
  createOsd: DAEMONS.osd.operation,
  removeOsd: 'ceph.remove-osd',
  replaceOsd: 'ceph.replace-osd',
  wipe: 'disk.wipe',
} as const;
export type DiskOperation = (typeof DiskOperation)[keyof typeof DiskOperation];

export const NODE_OPERATIONS: readonly NodeOperation[] = [
  ...new Set<NodeOperation>([...Object.values(NODE_DAEMON_OPERATIONS), ...Object.values(NodeOperation)]),
];
export const DISK_OPERATIONS: readonly DiskOperation[] = Object.values(DiskOperation);

/** The node daemon an operation creates, if it creates one. */
export function daemonOfOperation(op: string): NodeDaemonType | undefined {
  return NODE_DAEMON_TYPES.find((t) => DAEMONS[t].operation === op);
}
