// The Host allowlist. Boot scripts and cloud-init point machines back at the URL they reached
// Quarry on, and a browser page whose name was rebound to Quarry's address (DNS rebinding) would
// send its own name: a request is served only under a name Quarry knows as its own. Refused
// before any work, with 421 (the request reached a server that is not the one it names).
import { hostname as systemHostname } from 'node:os';
import { isIP } from 'node:net';
import type { Middleware } from 'koa';
import { InputError, QuarryError } from '../errors.js';
import { plainAddress } from './client-address.js';

export class MisdirectedRequestError extends QuarryError {
  constructor(host: string) {
    super(`this server does not answer for the host "${host}" (ALLOWED_HOSTS)`, 421, 'HOST_NOT_ALLOWED');
  }
}

export interface HostPolicyOptions {
  /** ALLOWED_HOSTS: when given, the names allowed besides the ones always allowed (below);
   * when null, the listening address and the machine's hostname. */
  allowedHosts?: readonly string[] | null;
  /** HOST, the listening address (a wildcard adds nothing). */
  listenHost?: string;
  /** EXTERNAL_URL: its host is always allowed. */
  externalUrl?: string | null;
}

export interface ParsedHost {
  /** Lower case, without brackets or a trailing dot. */
  hostname: string;
  port: number | null;
}

const HOST = /^(?:([A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?\.?)|\[([0-9A-Fa-f:.]+)\])(?::(\d{1,5}))?$/;

/** A Host header as host[:port]; null for anything else. */
export function parseHost(host: string): ParsedHost | null {
  const m = HOST.exec(host);
  if (!m) return null;
  const name = (m[1] ?? m[2] ?? '').toLowerCase().replace(/\.$/, '');
  if (m[2] !== undefined && isIP(name) !== 6) return null;
  const port = m[3] === undefined ? null : Number(m[3]);
  if (port !== null && port > 65535) return null;
  return { hostname: name, port };
}

const isLoopback = (ip: string): boolean => (isIP(ip) === 4 ? ip.startsWith('127.') : ip === '::1');
const WILDCARDS = new Set(['', '0.0.0.0', '::', '[::]']);

/**
 * Always allowed: `localhost` and loopback addresses, an address literal that is the very
 * address the connection came in on (it names this server, whatever its interfaces are), and
 * EXTERNAL_URL's host. Then ALLOWED_HOSTS, or by default HOST and the machine's hostname.
 * Ports are not compared: a proxy in front may publish another one.
 */
export function hostPolicy(opts: HostPolicyOptions = {}): (host: ParsedHost, localAddress: string) => boolean {
  const names = new Set<string>(['localhost']);
  const add = (h: string | undefined | null) => {
    const p = h ? parseHost(h.includes(':') && !h.startsWith('[') && isIP(h) === 6 ? `[${h}]` : h) : null;
    if (p) names.add(p.hostname);
  };
  if (opts.allowedHosts) opts.allowedHosts.forEach(add);
  else {
    if (!WILDCARDS.has(opts.listenHost ?? '')) add(opts.listenHost);
    add(systemHostname());
  }
  if (opts.externalUrl) add(new URL(opts.externalUrl).host);
  return (host, localAddress) => {
    if (names.has(host.hostname)) return true;
    if (isIP(host.hostname) === 0) return false;
    return isLoopback(host.hostname) || host.hostname === plainAddress(localAddress).toLowerCase();
  };
}

export function hostGuard(opts: HostPolicyOptions = {}): Middleware {
  const allowed = hostPolicy(opts);
  return (ctx, next) => {
    const host = parseHost(ctx.host);
    if (!host)
      throw new InputError('the Host header is not a host name or address', [{ path: '/headers/host', message: 'must be host[:port]' }]);
    if (!allowed(host, ctx.req.socket.localAddress ?? '')) throw new MisdirectedRequestError(host.hostname);
    return next();
  };
}
