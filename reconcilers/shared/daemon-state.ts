// Each Ceph daemon loop owns one entry of the node's status.ceph (the osd loop: the disk's
// status.osd) and writes only that, through the loop kit's status writer (read, change the one
// entry, CAS, again on conflict). docs/status-ownership.md lists every owner.
import { Kind, type DaemonState, type DaemonType } from '../../src/model/kinds.js';
import type { StatusOwner } from '../../src/runtime/loop-kit/index.js';

/** The Node status entry `ceph.<type>`, written by the loop of that daemon type. */
export const daemonStateOwner = (type: DaemonType): StatusOwner => ({
  loop: type,
  kind: Kind.Node,
  // catalogue-exempt: a status field path (status.ceph.<type>), which only looks like an operation name
  fields: [`ceph.${type}`],
});

export const state = (phase: DaemonState['phase'], reason: string, message: string): DaemonState => ({ phase, reason, message });
