// IPv4 arithmetic for DHCP networks. Parsing and matching are node:net's (isIPv4, BlockList);
// what it lacks is the address as a number, for ranges, network and broadcast addresses.
import { BlockList, isIPv4 } from 'node:net';

export interface Cidr {
  /** The network address (host bits zero). */
  network: string;
  prefix: number;
}

/** The address as an unsigned 32-bit number; callers have checked isIPv4. */
export function ipToInt(ip: string): number {
  return ip.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
}

export function intToIp(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
}

/** `a.b.c.d/n` with its host bits zero, or a reason it is not one. */
export function parseCidr(text: string): Cidr | { error: string } {
  const slash = text.indexOf('/');
  const ip = text.slice(0, slash);
  const bits = text.slice(slash + 1);
  if (slash < 0 || !isIPv4(ip) || !/^\d{1,2}$/.test(bits) || Number(bits) > 32)
    return { error: 'must be an IPv4 network in CIDR notation, like 10.0.0.0/24' };
  const prefix = Number(bits);
  const network = intToIp(networkOf(ipToInt(ip), prefix));
  if (network !== ip) return { error: `has host bits set: the network of ${text} is ${network}/${prefix}` };
  return { network, prefix };
}

const size = (prefix: number): number => 2 ** (32 - prefix);
const networkOf = (n: number, prefix: number): number => n - (n % size(prefix));

export const broadcastOf = (c: Cidr): string => intToIp(ipToInt(c.network) + size(c.prefix) - 1);
export const netmaskOf = (c: Cidr): string => intToIp(2 ** 32 - size(c.prefix));

function blockOf(c: Cidr): BlockList {
  const list = new BlockList();
  list.addSubnet(c.network, c.prefix, 'ipv4');
  return list;
}

export const contains = (c: Cidr, ip: string): boolean => isIPv4(ip) && blockOf(c).check(ip, 'ipv4');

/** Two networks overlap when either holds the other's first address. */
export const overlaps = (a: Cidr, b: Cidr): boolean => contains(a, b.network) || contains(b, a.network);

/** A host address of the network: inside it, and neither its network nor its broadcast address. */
export function isHostOf(c: Cidr, ip: string): boolean {
  return contains(c, ip) && (c.prefix >= 31 || (ip !== c.network && ip !== broadcastOf(c)));
}

/**
 * The default DHCP range: the upper half of the longest run of host addresses that holds none
 * of `reserved` (the gateway, the master), so statically addressed machines keep the rest.
 */
export function defaultRange(c: Cidr, reserved: string[]): { start: string; end: string } {
  const first = ipToInt(c.network) + 1;
  const last = ipToInt(c.network) + size(c.prefix) - 2;
  const cuts = reserved
    .filter((ip) => isHostOf(c, ip))
    .map(ipToInt)
    .sort((a, b) => a - b);
  let best = { from: first, to: first - 1 };
  let from = first;
  for (const cut of [...cuts, last + 1]) {
    if (cut - 1 - from > best.to - best.from) best = { from, to: cut - 1 };
    from = cut + 1;
  }
  const mid = best.from + Math.floor((best.to - best.from + 1) / 2);
  return { start: intToIp(mid), end: intToIp(best.to) };
}

/** a ≤ x ≤ b, as addresses. */
export const between = (x: string, a: string, b: string): boolean => ipToInt(a) <= ipToInt(x) && ipToInt(x) <= ipToInt(b);
