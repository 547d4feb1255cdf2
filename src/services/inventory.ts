// Reads of nodes and disks the routes share, typed once.
import { NotFoundError } from '../errors.js';
import { CLUSTER_ID, CephKind, type ClusterSpec } from '../model/ceph-kinds.js';
import { Kind, type DiskSpec, type DiskStatusFields, type NodeSpec, type NodeStatusFields } from '../model/kinds.js';
import type { DiskDoc, NodeDoc } from '../model/operations.js';
import type { Store } from '../store/types.js';
import { NodeDetails } from './node-details.js';

export class Inventory {
  /** GET /nodes/details, kept serialized (see node-details.ts). */
  readonly details: NodeDetails;

  constructor(private readonly store: Store) {
    this.details = new NodeDetails(store);
  }

  nodes(): Promise<NodeDoc[]> {
    return this.store.list<NodeSpec, NodeStatusFields>(Kind.Node);
  }

  disks(): Promise<DiskDoc[]> {
    return this.store.list<DiskSpec, DiskStatusFields>(Kind.Disk);
  }

  node(id: string): Promise<NodeDoc | undefined> {
    return this.store.get<NodeSpec, NodeStatusFields>(Kind.Node, id);
  }

  disk(id: string): Promise<DiskDoc | undefined> {
    return this.store.get<DiskSpec, DiskStatusFields>(Kind.Disk, id);
  }

  async mustNode(id: string): Promise<NodeDoc> {
    const n = await this.node(id);
    if (!n) throw new NotFoundError(`no node ${id}`);
    return n;
  }

  async mustDisk(id: string): Promise<DiskDoc> {
    const d = await this.disk(id);
    if (!d) throw new NotFoundError(`no disk ${id}`);
    return d;
  }

  /** The cluster's fsid: a BlueStore label that carries it is this cluster's OSD (adoption). */
  async clusterFsid(): Promise<string | undefined> {
    return (await this.store.get<ClusterSpec>(CephKind.Cluster, CLUSTER_ID))?.spec.fsid;
  }

  /** The node's disks, from the ids its status lists (no scan of every disk). */
  async disksOf(n: NodeDoc): Promise<DiskDoc[]> {
    const out: DiskDoc[] = [];
    for (const id of n.status.diskIds ?? []) {
      const d = await this.disk(id);
      if (d) out.push(d);
    }
    return out;
  }
}
