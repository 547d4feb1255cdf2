// What an operator declares about a DHCP network, through POST /networks/create or a specs
// file: one schema and one set of rules for both, so the folder refuses what the API refuses.
import { InputError, type FieldError } from '../errors.js';
import { between, contains, defaultRange, ipToInt, isHostOf, overlaps, parseCidr, type Cidr } from './ipv4.js';
import type { MasterInterface, NetworkSpec } from './network-kinds.js';

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

const ipv4 = (description: string) => ({ type: 'string', format: 'ipv4', description });

export const networkInputSchema: Record<string, unknown> = {
  type: 'object',
  required: ['cidr', 'gateway', 'nicId'],
  additionalProperties: false,
  properties: {
    cidr: {
      type: 'string',
      pattern: '^[0-9.]+/[0-9]{1,2}$',
      description: `IPv4 network, host bits zero, /${MIN_PREFIX} to /${MAX_PREFIX}; may not overlap another network (409 NETWORK_OVERLAP)`,
    },
    gateway: ipv4('router handed to machines: a host address of cidr, outside the range'),
    dnsServers: {
      type: 'array',
      items: { type: 'string', format: 'ipv4' },
      maxItems: 8,
      description: 'DNS servers handed to machines; default: [gateway]',
    },
    rangeStart: ipv4(
      "first leased address; with rangeEnd, or neither. Default: the upper half of the longest run of host addresses free of the gateway and the interface's own address",
    ),
    rangeEnd: ipv4('last leased address, not before rangeStart'),
    nicId: {
      type: 'string',
      format: 'uuid',
      description: 'id of a master interface (GET /networks/interfaces; 404 when unknown); one network per interface (409 NIC_IN_USE)',
    },
  },
};

function refuse(errors: FieldError[]): never {
  throw new InputError(`invalid network: ${errors.map((e) => `${e.path} ${e.message}`).join('; ')}`, errors);
}

/** The parsed CIDR, or an InputError at `at`/cidr. */
export function networkCidr(text: string, at = '/body'): Cidr {
  const c = parseCidr(text);
  if ('error' in c) refuse([{ path: `${at}/cidr`, message: c.error }]);
  if (c.prefix < MIN_PREFIX || c.prefix > MAX_PREFIX)
    refuse([{ path: `${at}/cidr`, message: `prefix must be from /${MIN_PREFIX} to /${MAX_PREFIX}` }]);
  return c;
}

/** The spec the input asks for, defaults filled in, or an InputError naming every bad field
 * (paths under `at`: /body for the API, /spec for a file). */
export function networkSpecOf(input: NetworkInput, nic: MasterInterface | undefined, at = '/body'): NetworkSpec {
  const cidr = networkCidr(input.cidr, at);
  const errors: FieldError[] = [];
  const host = (field: string, ip: string): void => {
    if (!isHostOf(cidr, ip))
      errors.push({
        path: `${at}/${field}`,
        message: `${ip} is not a host address of ${input.cidr} (inside it, neither its network nor its broadcast address)`,
      });
  };
  host('gateway', input.gateway);
  if ((input.rangeStart === undefined) !== (input.rangeEnd === undefined))
    errors.push({
      path: `${at}/${input.rangeStart === undefined ? 'rangeStart' : 'rangeEnd'}`,
      message: 'rangeStart and rangeEnd go together',
    });
  const range =
    input.rangeStart !== undefined && input.rangeEnd !== undefined
      ? { start: input.rangeStart, end: input.rangeEnd }
      : defaultRange(cidr, [input.gateway, ...(nic && nic.ip ? [nic.ip] : [])]);
  host('rangeStart', range.start);
  host('rangeEnd', range.end);
  if (errors.length === 0) {
    if (ipToInt(range.start) > ipToInt(range.end))
      errors.push({ path: `${at}/rangeEnd`, message: `must not come before rangeStart ${range.start}` });
    else if (between(input.gateway, range.start, range.end))
      errors.push({ path: `${at}/gateway`, message: `${input.gateway} is inside the DHCP range ${range.start}-${range.end}` });
    else if (nic && nic.ip !== '' && contains(cidr, nic.ip) && between(nic.ip, range.start, range.end))
      errors.push({
        path: `${at}/rangeStart`,
        message: `the range ${range.start}-${range.end} holds ${nic.ip}, the address of interface ${nic.name}`,
      });
  }
  if (errors.length) refuse(errors);
  return {
    cidr: input.cidr,
    gateway: input.gateway,
    dnsServers: input.dnsServers ?? [input.gateway],
    rangeStart: range.start,
    rangeEnd: range.end,
    nicId: input.nicId,
  };
}

/** Why `spec` cannot live beside the other networks: an overlapping CIDR or a NIC already
 * bound (one network per interface); null when it can. */
export function networkClash(
  spec: NetworkSpec,
  others: ReadonlyArray<{ id: string; spec: NetworkSpec }>,
  nicName = spec.nicId,
): { code: 'NETWORK_OVERLAP' | 'NIC_IN_USE'; message: string } | null {
  const cidr = networkCidr(spec.cidr);
  const clash = others.find((n) => {
    const c = parseCidr(n.spec.cidr);
    return !('error' in c) && overlaps(c, cidr);
  });
  if (clash) return { code: 'NETWORK_OVERLAP', message: `${spec.cidr} overlaps network ${clash.spec.cidr} (${clash.id})` };
  const bound = others.find((n) => n.spec.nicId === spec.nicId);
  if (bound)
    return {
      code: 'NIC_IN_USE',
      message: `interface ${nicName} already serves network ${bound.spec.cidr} (${bound.id}); one network per interface`,
    };
  return null;
}
