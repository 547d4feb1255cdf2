// The storage cluster's configuration as Quarry derives it from the store: the ceph.conf every
// worker (and the master's own CLI) uses, the keys a node may hold, and the admin-node switch.
// GET /ceph/cluster/config and /ceph/node/{id}/keyrings serve it; services/ceph-files.ts writes it
// for the master's CLI.
import { keyringText } from '../model/keyring.js';
import { CLUSTER_ID, CephKind, type ClusterSpec, type ClusterStatus, type KeyringSpec, type KeyringStatus } from '../model/ceph-kinds.js';
import type { Doc } from '../model/document.js';
import { Kind, type NodeSpec } from '../model/kinds.js';
import { monitorsForConf, type CephConfContext, type CephConfRenderer } from '../render/ceph-conf.js';
import type { Store } from '../store/types.js';
import type { Inventory } from './inventory.js';
import { MON_CREATE_TASKS, nodeMayHold } from './node-keys.js';

export class CephConfig {
  constructor(
    private readonly store: Store,
    private readonly inventory: Pick<Inventory, 'nodes' | 'mustNode'>,
    private readonly renderer: CephConfRenderer,
    /** The task runs, to know when a node's monitor is scheduled; without them a node gets
     * `mon.` only once its monitor runs. */
    private readonly runs?: { latestFor(kind: string, id: string, taskName?: string): Promise<unknown> },
  ) {}

  /** The keys of the daemons scheduled on a node, and client.admin only for an admin node
   * (node-keys.ts has the rule). */
  async keyringsOf(nodeId: string): Promise<Array<{ entity: string; keyring: string }>> {
    const node = await this.inventory.mustNode(nodeId);
    const all = await this.store.list<KeyringSpec, KeyringStatus>(CephKind.Keyring);
    const monScheduled = node.spec.daemons.mon !== undefined && (await this.monScheduled(nodeId));
    return all
      .filter((k) => k.status.key && nodeMayHold(node, k.spec, monScheduled))
      .map((k) => ({ entity: k.spec.entity, keyring: keyringText({ entity: k.spec.entity, key: k.status.key!, caps: k.spec.caps }) }))
      .sort((a, b) => a.entity.localeCompare(b.entity));
  }

  /** Whether the monitor loop has started creating this node's monitor (any run of it). */
  private async monScheduled(nodeId: string): Promise<boolean> {
    if (!this.runs) return false;
    const runs = await Promise.all(MON_CREATE_TASKS.map((t) => this.runs!.latestFor(Kind.Node, nodeId, t)));
    return runs.some((r) => r !== undefined);
  }

  /** Makes a node an admin node (its agent is handed client.admin) or not. A specs file that
   * names the field owns it (409 SPEC_OWNED). */
  async setAdminKeyring(nodeId: string, on: boolean): Promise<void> {
    await this.inventory.mustNode(nodeId);
    await this.store.mutateSpec<NodeSpec>(Kind.Node, nodeId, (fresh) => {
      if ((fresh.spec.adminKeyring === true) === on) return undefined;
      const { adminKeyring: _, ...rest } = fresh.spec;
      return on ? { ...rest, adminKeyring: true } : rest;
    });
  }

  async cluster(): Promise<Doc<ClusterSpec, ClusterStatus>> {
    return this.store.mustGet<ClusterSpec, ClusterStatus>(CephKind.Cluster, CLUSTER_ID);
  }

  /** The rendered ceph.conf: what GET /ceph/cluster/config serves and its hash covers. */
  async text(): Promise<string> {
    return this.renderer.renderConf(await this.context());
  }

  /** What the ceph.conf template sees, here and in GET /templates/rendered/ceph.conf. */
  async context(): Promise<CephConfContext> {
    const { spec } = await this.cluster();
    const mons = (await this.inventory.nodes())
      .filter((n) => n.spec.daemons.mon)
      .map((n) => ({ hostname: n.spec.hostname, ip: n.status.ip ?? '', running: n.status.daemons?.mon === true }));
    return {
      fsid: spec.fsid,
      ...monitorsForConf(mons, spec.monPort),
      publicNetwork: spec.publicNetwork,
      clusterNetwork: spec.clusterNetwork,
      poolDefaults: spec.poolDefaults,
    };
  }
}
