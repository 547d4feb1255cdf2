// RADOS gateways: a gateway is a node's desired `rgw` daemon (its id is the node's id). Listing
// shows desired ones and removed ones until they have stopped; removing one changes desired
// state only, and the rgw loop stops it. The /gateways/rgw routes call this.
import { NotFoundError } from '../errors.js';
import { Kind, type NodeSpec } from '../model/kinds.js';
import type { NodeDoc } from '../model/operations.js';
import { RGW_PORT } from '../model/storage-kinds.js';
import type { Store } from '../store/types.js';
import type { Inventory } from './inventory.js';

export function gatewayOf(n: NodeDoc) {
  const st = n.status.ceph?.rgw;
  return {
    id: n.id,
    nodeId: n.id,
    hostname: n.spec.hostname,
    ip: n.status.ip ?? '',
    port: RGW_PORT,
    desired: n.spec.daemons.rgw !== undefined,
    running: n.status.daemons?.rgw === true,
    state: st?.phase ?? 'pending',
    message: st?.message ?? '',
  };
}

export class RgwGateways {
  constructor(
    private readonly store: Store,
    private readonly inventory: Pick<Inventory, 'nodes' | 'mustNode'>,
  ) {}

  /** By hostname: one per node that wants one, and removed ones until they have stopped. */
  async list(): Promise<Array<ReturnType<typeof gatewayOf>>> {
    return (await this.inventory.nodes())
      .filter((n) => n.spec.daemons.rgw !== undefined || n.status.daemons?.rgw === true)
      .sort((a, b) => a.spec.hostname.localeCompare(b.spec.hostname))
      .map(gatewayOf);
  }

  /** The gateway is no longer desired (the rgw loop stops it); 404 when none is declared. */
  async remove(nodeId: string): Promise<void> {
    const node = await this.inventory.mustNode(nodeId);
    if (!node.spec.daemons.rgw) throw new NotFoundError(`no gateway is declared on node ${nodeId}`);
    await this.store.mutateSpec<NodeSpec>(Kind.Node, node.id, (fresh) => {
      const { rgw, ...rest } = fresh.spec.daemons;
      return rgw ? { ...fresh.spec, daemons: rest } : undefined;
    });
  }
}
