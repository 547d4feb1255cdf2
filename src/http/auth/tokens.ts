// Signed session tokens (JWT, HS256). An access token proves (user, session) for 15 minutes; a
// refresh token names one member of a session's refresh family. Different audiences keep one
// from being accepted as the other.
import { randomBytes } from 'node:crypto';
import { SignJWT, jwtVerify } from 'jose';
import { AuthError } from '../../errors.js';
import type { Clock } from '../../model/clock.js';

const ISSUER = 'quarry';
const ACCESS = 'quarry:access';
const REFRESH = 'quarry:refresh';

export interface AccessClaims {
  userId: string;
  sessionId: string;
  /** Expiry, epoch ms. */
  expiresAt: number;
}

export interface RefreshClaims extends AccessClaims {
  jti: string;
}

export interface TokenLifetimes {
  accessSeconds: number;
  refreshSeconds: number;
}

export const newJti = (): string => randomBytes(18).toString('base64url');

export class TokenService {
  // Insertion-ordered, so the oldest entry is the first key: a cheap bounded cache.
  private readonly verified = new Map<string, AccessClaims>();

  constructor(
    private readonly key: Uint8Array,
    private readonly clock: Clock,
    readonly lifetimes: TokenLifetimes,
    private readonly cacheSize = 10_000,
  ) {}

  async signAccess(userId: string, sessionId: string): Promise<{ token: string; expiresAt: number }> {
    return this.sign({ sid: sessionId }, userId, ACCESS, this.lifetimes.accessSeconds, newJti());
  }

  async signRefresh(userId: string, sessionId: string, jti: string): Promise<{ token: string; expiresAt: number }> {
    return this.sign({ sid: sessionId }, userId, REFRESH, this.lifetimes.refreshSeconds, jti);
  }

  /** Verified once, then served from the cache until it expires. Revocation is the caller's
   * check (the session registry), so a cached token of a revoked session is still refused. */
  async verifyAccess(token: string): Promise<AccessClaims> {
    const hit = this.verified.get(token);
    if (hit) {
      if (hit.expiresAt > this.clock.now()) return hit;
      this.verified.delete(token);
      throw new AuthError('access token expired');
    }
    const claims = await this.verify(token, ACCESS);
    if (this.verified.size >= this.cacheSize) {
      const oldest = this.verified.keys().next();
      if (!oldest.done) this.verified.delete(oldest.value);
    }
    this.verified.set(token, claims);
    return claims;
  }

  async verifyRefresh(token: string): Promise<RefreshClaims> {
    return this.verify(token, REFRESH);
  }

  private async sign(claims: { sid: string }, sub: string, aud: string, seconds: number, jti: string) {
    const iat = Math.floor(this.clock.now() / 1000);
    const exp = iat + seconds;
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setIssuer(ISSUER)
      .setAudience(aud)
      .setSubject(sub)
      .setJti(jti)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(this.key);
    return { token, expiresAt: exp * 1000 };
  }

  private async verify(token: string, audience: string): Promise<RefreshClaims> {
    try {
      const { payload } = await jwtVerify(token, this.key, {
        algorithms: ['HS256'],
        issuer: ISSUER,
        audience,
        currentDate: new Date(this.clock.now()),
        requiredClaims: ['sub', 'exp', 'jti', 'sid'],
      });
      const sid = payload.sid;
      if (typeof sid !== 'string' || !payload.sub || !payload.jti || payload.exp === undefined) throw new Error('claims');
      return { userId: payload.sub, sessionId: sid, jti: payload.jti, expiresAt: payload.exp * 1000 };
    } catch {
      // Why a token failed (expired, forged, wrong audience) is not the client's business.
      throw new AuthError();
    }
  }
}
