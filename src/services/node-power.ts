// A node's power control as the API sets it: its BMC (IPMI over LAN) and whether a hung node
// may be fenced through it. Desired-state writes only; the node loop does the powering. The
// password is write-only: answers say `passwordSet`, and the field is sealed at rest.
import { InputError } from '../errors.js';
import { Kind, type BmcSpec, type NodeSpec } from '../model/kinds.js';
import { bmcView, type BmcView } from './views.js';
import type { Store } from '../store/types.js';
import type { Inventory } from './inventory.js';

export interface BmcInput {
  address: string;
  port?: number;
  username: string;
  /** Absent: keep the one the node's BMC has (a change of address or user alone). */
  password?: string;
  fencing?: 'none' | 'bmc';
}

export class NodePower {
  constructor(
    private readonly store: Store,
    private readonly inventory: Pick<Inventory, 'mustNode'>,
  ) {}

  async view(nodeId: string): Promise<{ bmc: BmcView | null; fencing: 'none' | 'bmc' }> {
    const node = await this.inventory.mustNode(nodeId);
    return { bmc: bmcView(node), fencing: node.spec.fencing ?? 'none' };
  }

  /** Declares (or changes) the node's BMC. A specs file that names `bmc` or `fencing` owns them
   * (409 SPEC_OWNED). */
  async setBmc(nodeId: string, input: BmcInput): Promise<void> {
    await this.inventory.mustNode(nodeId);
    await this.store.mutateSpec<NodeSpec>(Kind.Node, nodeId, (fresh) => {
      const password = input.password ?? fresh.spec.bmc?.password;
      if (password === undefined)
        throw new InputError('the node has no BMC yet: give its password', [
          { path: '/body/password', message: 'is required for a new BMC' },
        ]);
      const bmc: BmcSpec = { address: input.address, username: input.username, password, ...(input.port ? { port: input.port } : {}) };
      const { fencing: _, ...rest } = fresh.spec;
      const fencing = input.fencing ?? fresh.spec.fencing;
      return { ...rest, bmc, ...(fencing && fencing !== 'none' ? { fencing } : {}) };
    });
  }

  /** Forgets the node's BMC (and fencing, which needs it). */
  async clearBmc(nodeId: string): Promise<void> {
    await this.inventory.mustNode(nodeId);
    await this.store.mutateSpec<NodeSpec>(Kind.Node, nodeId, (fresh) => {
      if (!fresh.spec.bmc && !fresh.spec.fencing) return undefined;
      const { bmc: _b, fencing: _f, ...rest } = fresh.spec;
      return rest;
    });
  }
}
