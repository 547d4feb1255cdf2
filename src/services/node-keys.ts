// Least privilege for keys: which of the keys Quarry holds a node is handed, by what is
// scheduled on it. A node gets the key of each of its own daemons (made by the loop that
// creates that daemon there, so a key exists only once the daemon is scheduled), `mon.` only
// once its monitor is being created or runs (not merely wanted by a spec), and client.admin only
// when its spec makes it an admin node. The master keeps client.admin for itself otherwise.
import { DAEMONS } from '../catalogue/index.js';
import type { KeyringSpec } from '../model/ceph-kinds.js';
import type { NodeSpec, NodeStatusFields } from '../model/kinds.js';

/** The monitor loop's runs that make a monitor's store on its node (the catalogue's create
 * steps of the monitor): the agent fetches `mon.` for them. */
export const MON_CREATE_TASKS = DAEMONS.mon.steps.create;

export interface NodeKeyView {
  id: string;
  spec: Pick<NodeSpec, 'daemons' | 'adminKeyring'>;
  status: Pick<NodeStatusFields, 'daemons'>;
}

/**
 * Whether `node` may be handed `key`. `monScheduled`: the monitor loop has started a run that
 * creates the node's monitor (bootstrap or join), whatever its state. A key bound to a node
 * (mgr.X, mds.X, client.rgw.X, osd.N) is made by the loop that schedules that daemon there
 * (`auth get-or-create` once the node is active and wants it, `osd new` for one of its disks):
 * its existence is the scheduling, and it is the only node that gets it.
 */
export function nodeMayHold(node: NodeKeyView, key: Pick<KeyringSpec, 'entity' | 'nodeId'>, monScheduled: boolean): boolean {
  if (key.entity === 'client.admin') return node.spec.adminKeyring === true;
  if (key.entity === 'mon.') return node.spec.daemons.mon !== undefined && (monScheduled || node.status.daemons?.mon === true);
  return key.nodeId !== null && key.nodeId === node.id;
}
