// Least privilege for keys: which of the keys Quarry holds a node is handed, by what is
// scheduled on it. A node gets the key of each of its own daemons (made by the loop that
// creates that daemon there, so a key exists only once the daemon is scheduled), `mon.` only
// once its monitor is being created or runs (not merely wanted by a spec), and client.admin only
// when its spec makes it an admin node. The master keeps client.admin for itself otherwise.
import type { KeyringSpec } from '../model/ceph-kinds.js';
import type { NodeSpec, NodeStatusFields } from '../model/kinds.js';

/** The monitor loop's runs that make a monitor's store on its node (reconcilers/mon/plan.ts
 * spells them too): the agent fetches `mon.` for them. */
export const MON_CREATE_TASKS = ['ceph.mon.bootstrap', 'ceph.mon.join'] as const;

export interface NodeKeyView {
  id: string;
  spec: Pick<NodeSpec, 'daemons' | 'adminKeyring'>;
  status: Pick<NodeStatusFields, 'daemons'>;
}

/** The daemon type a node-bound key belongs to, by its entity's prefix. */
function daemonOf(entity: string): 'mgr' | 'mds' | 'rgw' | 'osd' | null {
  if (entity.startsWith('mgr.')) return 'mgr';
  if (entity.startsWith('mds.')) return 'mds';
  if (entity.startsWith('client.rgw.')) return 'rgw';
  if (entity.startsWith('osd.')) return 'osd';
  return null;
}

/**
 * Whether `node` may be handed `key`. `monScheduled`: the monitor loop has started a run that
 * creates the node's monitor (bootstrap or join), whatever its state.
 */
export function nodeMayHold(node: NodeKeyView, key: Pick<KeyringSpec, 'entity' | 'nodeId'>, monScheduled: boolean): boolean {
  if (key.entity === 'client.admin') return node.spec.adminKeyring === true;
  if (key.entity === 'mon.') return node.spec.daemons.mon !== undefined && (monScheduled || node.status.daemons?.mon === true);
  if (key.nodeId !== node.id) return false;
  const type = daemonOf(key.entity);
  // An OSD's key is made by `osd new` for a disk of this node: the OSD is scheduled there.
  if (type === 'osd') return true;
  // A daemon no longer wanted and no longer running needs its key no more.
  if (type) return node.spec.daemons[type] !== undefined || node.status.daemons?.[type] === true;
  return false;
}
