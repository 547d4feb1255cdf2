// The two session cookies. HttpOnly keeps them from scripts, SameSite=Strict keeps browsers
// from sending them on cross-site requests, Secure follows the connection (TLS or a trusted
// proxy saying so), so plain-HTTP labs still work.
import type { Context } from 'koa';

export const ACCESS_COOKIE = 'access_token';
export const REFRESH_COOKIE = 'refresh_token';

// Lifetimes go out as durations (the cookies module turns them into Expires from the wall
// clock), so an injected test clock never produces cookies that are born expired.
function attributes(ctx: Context, maxAgeMs: number | null) {
  return {
    httpOnly: true,
    sameSite: 'strict' as const,
    path: '/',
    secure: ctx.secure,
    overwrite: true,
    ...(maxAgeMs === null ? {} : { maxAge: Math.max(1000, maxAgeMs) }),
  };
}

export interface IssuedTokens {
  access: { token: string; expiresAt: number };
  refresh: { token: string; expiresAt: number };
}

export function setSessionCookies(ctx: Context, tokens: IssuedTokens, now: number): void {
  ctx.cookies.set(ACCESS_COOKIE, tokens.access.token, attributes(ctx, tokens.access.expiresAt - now));
  ctx.cookies.set(REFRESH_COOKIE, tokens.refresh.token, attributes(ctx, tokens.refresh.expiresAt - now));
}

/** A null value makes the cookies module send an already-expired cookie, which browsers drop. */
export function clearSessionCookies(ctx: Context): void {
  ctx.cookies.set(ACCESS_COOKIE, null, attributes(ctx, null));
  ctx.cookies.set(REFRESH_COOKIE, null, attributes(ctx, null));
}

export const readCookie = (ctx: Context, name: string): string | undefined => ctx.cookies.get(name) || undefined;
