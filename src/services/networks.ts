// Declaring DHCP networks: every refusal of POST /networks/create, checked before anything is
// written. Creates are serialized in this process, so two overlapping requests cannot both
// pass the overlap check.
import { isDeepStrictEqual } from 'node:util';
import { ConflictError, NotFoundError } from '../errors.js';
import { networkCidr, networkClash, networkSpecOf, type NetworkInput } from '../model/network-input.js';
import {
  NetworkKind,
  networkId,
  type InterfaceSource,
  type MasterInterface,
  type NetworkSpec,
  type NetworkStatus,
} from '../model/network-kinds.js';
import type { Doc } from '../model/document.js';
import type { Store } from '../store/types.js';

export { MAX_PREFIX, MIN_PREFIX, type NetworkInput } from '../model/network-input.js';

export type NetworkDoc = Doc<NetworkSpec, NetworkStatus>;

export class Networks {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly master: InterfaceSource,
  ) {}

  list(): Promise<NetworkDoc[]> {
    return this.store.list<NetworkSpec, NetworkStatus>(NetworkKind.Network);
  }

  interfaces(): Promise<MasterInterface[]> {
    return this.master.interfaces();
  }

  /** The id of the new network; the same declaration again answers the same id. */
  create(input: NetworkInput): Promise<string> {
    const next = this.queue.then(() => this.createNow(input));
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async createNow(input: NetworkInput): Promise<string> {
    networkCidr(input.cidr);
    const nic = (await this.master.interfaces()).find((n) => n.id === input.nicId);
    if (!nic) throw new NotFoundError(`the master has no interface ${input.nicId} (GET /networks/interfaces lists them)`);
    const spec = networkSpecOf(input, nic);
    const id = networkId(spec.cidr);
    const all = await this.list();
    const same = all.find((n) => n.id === id);
    if (same && isDeepStrictEqual(same.spec, spec)) return id;
    const clash = networkClash(spec, all, nic.name);
    if (clash) throw new ConflictError(clash.message, clash.code);
    await this.store.create({ kind: NetworkKind.Network, id, name: spec.cidr, spec, status: { phase: 'pending' } });
    return id;
  }
}
