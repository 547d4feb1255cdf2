// `Authorization: Bearer <credential>` (RFC 6750): for scripts and the CLI, which keep no
// cookies. The scheme is matched without regard to case; anything else in the header is ignored.
import type { Context } from 'koa';
import { AuthError } from '../../errors.js';

/** The credential of a Bearer header, null without one; a Bearer header with nothing usable is 401. */
export function bearerToken(ctx: Context): string | null {
  const header = ctx.get('Authorization');
  const m = /^Bearer(?:\s+(.*))?$/i.exec(header.trim());
  if (!m) return null;
  const credential = (m[1] ?? '').trim();
  if (credential === '' || /\s/.test(credential)) throw new AuthError('the Authorization header must be "Bearer <token>"');
  return credential;
}

/** True when the request brings a Bearer credential (which browsers never add on their own). */
export const hasBearer = (ctx: Context): boolean => /^\s*Bearer(\s|$)/i.test(ctx.get('Authorization'));
