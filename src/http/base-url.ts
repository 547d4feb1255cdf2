// The URL machines are sent back to (boot scripts, cloud-init's master, image links): the
// configured EXTERNAL_URL when there is one, else the scheme and Host the request came with —
// a Host the allowlist (hosts.ts) has already accepted, and a scheme only a trusted proxy
// (client-address.ts) can change.
import type { Context, Middleware } from 'koa';
import { InputError } from '../errors.js';

const PINNED = Symbol('quarry.externalUrl');

/** Makes baseUrl() answer `externalUrl` (no trailing slash) on every request; null: the Host. */
export function pinBaseUrl(externalUrl: string | null | undefined): Middleware {
  const pinned = externalUrl ? externalUrl.replace(/\/+$/, '') : null;
  return (ctx, next) => {
    if (pinned) (ctx.state as Record<symbol, string>)[PINNED] = pinned;
    return next();
  };
}

/** The base URL of Quarry for this request; scripts point machines back at it. */
export function baseUrl(ctx: Context): string {
  const pinned = (ctx.state as Record<symbol, string | undefined>)[PINNED];
  if (pinned) return pinned;
  if (!/^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(ctx.host)) {
    throw new InputError('the Host header is not a host name or address', [{ path: '/headers/host', message: 'must be host[:port]' }]);
  }
  return `${ctx.protocol}://${ctx.host}`;
}
