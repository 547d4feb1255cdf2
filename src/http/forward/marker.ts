// The marker a follower puts on a request it forwards to the leader (proxy.ts), and what the
// leader may believe of it. The leader sees the follower's socket, not the caller's: the caller's
// address (login throttling, logs, ctx.ip) and the socket address an agent's report came from
// (the S3 gateways' addresses, fleet/gateway.ts) would both be the follower's. The follower states
// them in X-Quarry-Forwarded-By with an HMAC, keyed with a key every controller derives from the
// shared SECRETS_KEY (SecretBox.derive) and bound to the request id, method, target and time, so
//   - a caller cannot claim an address: it has no key, and a marker that fails is ignored whole
//     (the request is then judged by its socket, as any other);
//   - a captured marker is good only for that very request (same id, method and target) and for
//     a few minutes.
// X-Forwarded-For is not what the leader believes: anyone can write it, and TRUST_PROXY may
// rightly trust no controller at all.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { Context, Middleware } from 'koa';
import type { Clock } from '../../model/clock.js';
import type { SecretBox } from '../../store/secret-box.js';
import { plainAddress } from '../client-address.js';
import { requestIdOf } from '../request-id.js';

export const FORWARDED_BY_HEADER = 'X-Quarry-Forwarded-By';
/** How far a marker's time may be from the leader's clock: controllers' clocks are NTP-close. */
export const MARKER_WINDOW_MS = 5 * 60_000;

/** What a follower states about a request it forwards. */
export interface ForwardClaims {
  /** The socket address the caller reached the follower from. */
  peer: string;
  /** The caller's address as the follower judged it (its TRUST_PROXY rules): its ctx.ip. */
  client: string;
  proto: 'http' | 'https';
}

const PEER = Symbol('quarry.forwardedPeer');
const FIELD = /^(peer|client|proto|at|sig)=([^;]*)$/;

export class ForwardMarker {
  private constructor(
    private readonly key: Buffer | null,
    private readonly clock: Clock,
  ) {}

  /** Without a secrets box nothing is signed and nothing believed: the marker only stops loops. */
  static from(box: SecretBox | undefined, clock: Clock): ForwardMarker {
    return new ForwardMarker(box ? box.derive('controller-forwarding') : null, clock);
  }

  /** The header value for a request this controller forwards. */
  header(ctx: Context, claims: ForwardClaims): string {
    if (!this.key) return 'v1';
    const at = String(this.clock.now());
    const fields = `peer=${claims.peer};client=${claims.client};proto=${claims.proto};at=${at}`;
    return `v1;${fields};sig=${this.mac(ctx, claims, at)}`;
  }

  /** The claims of a marker a fellow controller made for this very request; null otherwise. */
  verify(ctx: Context, header: string): ForwardClaims | null {
    if (!this.key) return null;
    const [version, ...parts] = header.split(';');
    if (version !== 'v1') return null;
    const f: Record<string, string> = {};
    for (const part of parts) {
      const m = FIELD.exec(part.trim());
      if (!m || f[m[1]!] !== undefined) return null;
      f[m[1]!] = m[2]!;
    }
    const { peer = '', client = '', proto = '', at = '', sig = '' } = f;
    if (isIP(peer) === 0 || isIP(client) === 0 || (proto !== 'http' && proto !== 'https') || !/^\d{1,16}$/.test(at)) return null;
    if (Math.abs(this.clock.now() - Number(at)) > MARKER_WINDOW_MS) return null;
    const claims: ForwardClaims = { peer, client, proto };
    const want = Buffer.from(this.mac(ctx, claims, at), 'base64url');
    const got = Buffer.from(sig, 'base64url');
    return got.length === want.length && timingSafeEqual(got, want) ? claims : null;
  }

  private mac(ctx: Context, c: ForwardClaims, at: string): string {
    // Every part is free of newlines: validated addresses, a request id of safe characters, a
    // method token, a request target Node's parser accepted.
    const text = ['quarry-forward', 'v1', requestIdOf(ctx) ?? '', ctx.method, ctx.originalUrl, c.peer, c.client, c.proto, at].join('\n');
    return createHmac('sha256', this.key!).update(text).digest('base64url');
  }
}

/** On every request, right after clientAddress: a request a fellow controller forwarded (its
 * marker verifies) is judged by the caller's addresses it states, not by the follower's socket. */
export function fellowControllers(marker: ForwardMarker): Middleware {
  return (ctx, next) => {
    const header = ctx.get(FORWARDED_BY_HEADER);
    const claims = header ? marker.verify(ctx, header) : null;
    if (claims) {
      ctx.request.ip = claims.client;
      (ctx.state as Record<symbol, string>)[PEER] = claims.peer;
      if (claims.proto === 'https') Object.defineProperty(ctx.request, 'protocol', { value: 'https', configurable: true });
    }
    return next();
  };
}

/** The socket address the caller reached Quarry from: the follower's word for a forwarded
 * request whose marker verified, else this connection's own (never a header a caller wrote). */
export function observedPeer(ctx: Context): string | null {
  return (ctx.state as Record<symbol, string | undefined>)[PEER] ?? ctx.socket.remoteAddress ?? null;
}

/** The claims this controller makes for a request it forwards. */
export function claimsOf(ctx: Context): ForwardClaims {
  return {
    peer: plainAddress(observedPeer(ctx) ?? ''),
    client: plainAddress(ctx.ip),
    proto: ctx.protocol === 'https' ? 'https' : 'http',
  };
}
