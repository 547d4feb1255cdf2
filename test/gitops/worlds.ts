// In-memory worlds the pure specs tests plan and evaluate against (no store, no lab).
import { evaluate } from '../../src/gitops/evaluate.js';
import { specValidators } from '../../src/gitops/parse.js';
import type { World } from '../../src/gitops/world.js';
import { CLUSTER_ID, CephKind, type ClusterSpec, type ClusterStatus } from '../../src/model/ceph-kinds.js';
import type { Doc } from '../../src/model/document.js';

export const meta = { generation: 1, resourceVersion: 1, createdAt: '', updatedAt: '', labels: {}, source: null };

/** Cluster/default as `ceph.cluster` makes it, with `over` in its spec and `status`. */
export const clusterDoc = (over: Partial<ClusterSpec> = {}, status: ClusterStatus = {}): Doc<ClusterSpec> => ({
  kind: CephKind.Cluster,
  id: CLUSTER_ID,
  name: 'ceph',
  metadata: meta,
  spec: {
    fsid: '7d7a4a52-5d87-4bd4-9a3f-2b8f1f7c2c11',
    publicNetwork: null,
    clusterNetwork: null,
    monPort: 3300,
    poolDefaults: { size: 3, minSize: 2 },
    ...over,
  },
  status: status as Record<string, unknown>,
});

/** A world with nothing in it but what `over` gives. */
export const emptyWorld = (over: Partial<World> = {}): World => ({
  nodes: [],
  disks: [],
  networks: [],
  images: [],
  filesystems: [],
  rgwUsers: [],
  cluster: undefined,
  templates: [],
  nics: [],
  catalog: [],
  ...over,
});

/** The plan of `text` as file site.yaml in `w` (every file live). */
export const evaluateIn = (w: World, text: string) =>
  evaluate(
    'site.yaml',
    text,
    () => Promise.resolve(w),
    specValidators(),
    () => true,
  );
