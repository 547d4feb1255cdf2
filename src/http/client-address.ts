// Who is calling: the client address (login throttling, the hashing queue, logs) and whether
// the request came over TLS (Secure cookies). Behind a reverse proxy both are in X-Forwarded-For
// and X-Forwarded-Proto, which anyone can also send: they are believed only on a connection from
// a trusted proxy (TRUST_PROXY), and X-Forwarded-For is read from the right, skipping trusted
// hops, so an address the client wrote itself at the left is never taken. koa's own `proxy`
// switch trusts every peer and takes the leftmost address; it stays off.
import { BlockList, isIP } from 'node:net';
import type { Context, Middleware } from 'koa';

/** `true` trusts every peer (tests, or a Quarry that only its proxy can reach); a list: those
 * addresses and CIDR ranges (`loopback` for 127.0.0.0/8 and ::1); false or empty: none. */
export type TrustProxy = boolean | readonly string[];

/** IPv4 peers of a dual-stack socket show as ::ffff:a.b.c.d. */
export function plainAddress(address: string): string {
  const m = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/i.exec(address);
  return m?.[1] ?? address;
}

/** Throws on an entry that is neither `loopback`, an address nor a CIDR range. */
export function proxyTrust(trust: TrustProxy): (address: string) => boolean {
  if (trust === true) return () => true;
  if (trust === false || trust.length === 0) return () => false;
  const list = new BlockList();
  for (const raw of trust) {
    const entry = raw.trim();
    if (entry === 'loopback') {
      list.addSubnet('127.0.0.0', 8, 'ipv4');
      list.addAddress('::1', 'ipv6');
      continue;
    }
    const [addr = '', prefix, extra] = entry.split('/');
    const family = isIP(addr);
    const bits = prefix === undefined ? null : Number(prefix);
    const max = family === 4 ? 32 : 128;
    if (
      family === 0 ||
      extra !== undefined ||
      (bits !== null && !(Number.isInteger(bits) && bits >= 0 && bits <= max && /^\d+$/.test(prefix ?? '')))
    ) {
      throw new Error(`TRUST_PROXY: "${entry}" is not an address, a CIDR range or "loopback"`);
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (bits === null) list.addAddress(addr, type);
    else list.addSubnet(addr, bits, type);
  }
  return (address) => {
    const plain = plainAddress(address);
    const family = isIP(plain);
    return family !== 0 && list.check(plain, family === 4 ? 'ipv4' : 'ipv6');
  };
}

/** The client's address: the peer, or, through trusted proxies, the rightmost untrusted hop. */
export function forwardedClient(peer: string, forwardedFor: string, trusted: (address: string) => boolean): string {
  let client = peer;
  if (!trusted(peer) || forwardedFor === '') return client;
  const hops = forwardedFor.split(',').map((h) => plainAddress(h.trim()));
  for (let i = hops.length - 1; i >= 0; i--) {
    const hop = hops[i] ?? '';
    // A hop that is not an address was not written by a proxy we trust: stop at the last good one.
    if (isIP(hop) === 0) break;
    client = hop;
    if (!trusted(hop)) break;
  }
  return client;
}

/** Sets ctx.ip and, from a trusted proxy, ctx.protocol (and with it ctx.secure and the cookies'
 * Secure flag). Must run before anything reads ctx.ip or ctx.cookies. */
export function clientAddress(trust: TrustProxy): Middleware {
  const trusted = proxyTrust(trust);
  return (ctx, next) => {
    const peer = plainAddress(ctx.req.socket.remoteAddress ?? '');
    ctx.request.ip = forwardedClient(peer, ctx.get('X-Forwarded-For'), trusted);
    const encrypted = (ctx.req.socket as { encrypted?: boolean }).encrypted === true;
    if (!encrypted && trusted(peer)) {
      const proto = (ctx.get('X-Forwarded-Proto').split(',')[0] ?? '').trim().toLowerCase();
      if (proto === 'https') Object.defineProperty(ctx.request, 'protocol', { value: 'https', configurable: true });
    }
    return next();
  };
}

/** The request's source address (an IPv4-mapped IPv6 address as plain IPv4), as koa's ctx.ip
 * holds it after the trust rules above. */
export function sourceAddress(ctx: Context): string {
  const ip = ctx.ip || ctx.socket.remoteAddress || '';
  return ip.startsWith('::ffff:') && ip.includes('.') ? ip.slice(7) : ip;
}
