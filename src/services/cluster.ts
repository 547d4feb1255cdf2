// The one storage cluster Quarry manages: its Cluster document exists from the first start on.
import { ConflictError } from '../errors.js';
import { uuid } from '../model/clock.js';
import { CLUSTER_ID, CephKind, type ClusterSpec } from '../model/ceph-kinds.js';
import type { Store } from '../store/types.js';

/** The one Cluster exists from the first start on; its fsid is chosen once and kept. */
export async function ensureCluster(store: Store): Promise<void> {
  if (await store.get(CephKind.Cluster, CLUSTER_ID)) return;
  const spec: ClusterSpec = {
    fsid: uuid(),
    publicNetwork: null,
    clusterNetwork: null,
    monPort: 3300,
    poolDefaults: { size: 3, minSize: 2 },
  };
  try {
    await store.create({ kind: CephKind.Cluster, id: CLUSTER_ID, name: 'ceph', spec });
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
  }
}
