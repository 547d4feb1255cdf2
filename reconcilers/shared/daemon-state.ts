// Each Ceph loop owns one entry of the node's status.ceph (or the disk's status.osd) and
// writes only that: read, change the one field, write with CAS, again on conflict. The node
// loop spreads the status it read, so nothing here is lost when it writes its own fields.
import { isDeepStrictEqual } from 'node:util';
import { ConflictError } from '../../src/errors.js';
import { Kind, type DaemonState, type DaemonType, type NodeSpec, type NodeStatusFields } from '../../src/model/kinds.js';
import type { Store } from '../../src/store/types.js';

const ATTEMPTS = 8;

export async function writeDaemonState(store: Store, nodeId: string, type: DaemonType, state: DaemonState | undefined): Promise<void> {
  for (let i = 0; ; i++) {
    const node = await store.get<NodeSpec, NodeStatusFields>(Kind.Node, nodeId);
    if (!node) return;
    if (isDeepStrictEqual(node.status.ceph?.[type], state)) return;
    const ceph = { ...node.status.ceph };
    if (state) ceph[type] = state;
    else delete ceph[type];
    try {
      await store.updateStatus(Kind.Node, nodeId, { ...node.status, ceph }, { resourceVersion: node.metadata.resourceVersion });
      return;
    } catch (err) {
      if (!(err instanceof ConflictError) || i >= ATTEMPTS) throw err;
    }
  }
}

export const state = (phase: DaemonState['phase'], reason: string, message: string): DaemonState => ({ phase, reason, message });
