// Declaring DHCP networks: every refusal of POST /networks/create, checked before anything is
// written. Creates are serialized in this process, so two overlapping requests cannot both
// pass the overlap check.
import { isDeepStrictEqual } from 'node:util';
import { ConflictError, InputError, NotFoundError, type FieldError } from '../errors.js';
import { between, contains, defaultRange, ipToInt, isHostOf, parseCidr, overlaps, type Cidr } from '../model/ipv4.js';
import { NetworkKind, networkId, type InterfaceSource, type MasterInterface, type NetworkSpec, type NetworkStatus } from '../model/network-kinds.js';
import type { Doc } from '../model/document.js';
import type { Store } from '../store/types.js';

export const MIN_PREFIX = 8;
export const MAX_PREFIX = 30;

export interface NetworkInput {
  cidr: string;
  gateway: string;
  dnsServers?: string[];
  rangeStart?: string;
  rangeEnd?: string;
  nicId: string;
}

export type NetworkDoc = Doc<NetworkSpec, NetworkStatus>;

function refuse(errors: FieldError[]): never {
  throw new InputError(`invalid network: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`, errors);
}

function cidrOf(text: string): Cidr {
  const c = parseCidr(text);
  if ('error' in c) refuse([{ path: '/body/cidr', message: c.error }]);
  if (c.prefix < MIN_PREFIX || c.prefix > MAX_PREFIX) refuse([{ path: '/body/cidr', message: `prefix must be from /${MIN_PREFIX} to /${MAX_PREFIX}` }]);
  return c;
}

/** The spec the input asks for, defaults filled in, or an InputError naming every bad field. */
export function specOf(input: NetworkInput, nic: MasterInterface | undefined): NetworkSpec {
  const cidr = cidrOf(input.cidr);
  const errors: FieldError[] = [];
  const host = (path: string, ip: string): void => {
    if (!isHostOf(cidr, ip)) errors.push({ path, message: `${ip} is not a host address of ${input.cidr} (inside it, neither its network nor its broadcast address)` });
  };
  host('/body/gateway', input.gateway);
  if ((input.rangeStart === undefined) !== (input.rangeEnd === undefined)) errors.push({ path: input.rangeStart === undefined ? '/body/rangeStart' : '/body/rangeEnd', message: 'rangeStart and rangeEnd go together' });
  const range = input.rangeStart !== undefined && input.rangeEnd !== undefined ? { start: input.rangeStart, end: input.rangeEnd } : defaultRange(cidr, [input.gateway, ...(nic && nic.ip ? [nic.ip] : [])]);
  host('/body/rangeStart', range.start);
  host('/body/rangeEnd', range.end);
  if (errors.length === 0) {
    if (ipToInt(range.start) > ipToInt(range.end)) errors.push({ path: '/body/rangeEnd', message: `must not come before rangeStart ${range.start}` });
    else if (between(input.gateway, range.start, range.end)) errors.push({ path: '/body/gateway', message: `${input.gateway} is inside the DHCP range ${range.start}-${range.end}` });
    else if (nic && nic.ip !== '' && contains(cidr, nic.ip) && between(nic.ip, range.start, range.end)) errors.push({ path: '/body/rangeStart', message: `the range ${range.start}-${range.end} holds ${nic.ip}, the address of interface ${nic.name}` });
  }
  if (errors.length) refuse(errors);
  return { cidr: input.cidr, gateway: input.gateway, dnsServers: input.dnsServers ?? [input.gateway], rangeStart: range.start, rangeEnd: range.end, nicId: input.nicId };
}

export class Networks {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly master: InterfaceSource,
  ) {}

  list(): Promise<NetworkDoc[]> {
    return this.store.list<NetworkSpec, NetworkStatus>(NetworkKind.Network) as Promise<NetworkDoc[]>;
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
    cidrOf(input.cidr);
    const nic = (await this.master.interfaces()).find((n) => n.id === input.nicId);
    if (!nic) throw new NotFoundError(`the master has no interface ${input.nicId} (GET /networks/interfaces lists them)`);
    const spec = specOf(input, nic);
    const id = networkId(spec.cidr);
    const all = await this.list();
    const same = all.find((n) => n.id === id);
    if (same && isDeepStrictEqual(same.spec, spec)) return id;
    const cidr = cidrOf(spec.cidr);
    const clash = all.find((n) => { const c = parseCidr(n.spec.cidr); return !('error' in c) && overlaps(c, cidr); });
    if (clash) throw new ConflictError(`${spec.cidr} overlaps network ${clash.spec.cidr} (${clash.id})`, 'NETWORK_OVERLAP');
    const bound = all.find((n) => n.spec.nicId === spec.nicId);
    if (bound) throw new ConflictError(`interface ${nic.name} already serves network ${bound.spec.cidr} (${bound.id}); one network per interface`, 'NIC_IN_USE');
    await this.store.create({ kind: NetworkKind.Network, id, name: spec.cidr, spec, status: { phase: 'pending' } });
    return id;
  }
}
