// API tokens: long-lived bearer credentials for scripts and the CLI, `qry_<id>_<secret>`.
//
// The secret is 256 random bits, so one SHA-256 is the right way to keep it: nothing can be
// guessed from the hash, and a slow password hash (scrypt) would only cost every request time
// for no gain. The id in the token finds the record; the hashes are then compared in constant
// time. Records are kept in memory (loaded at start, like sessions), so a request verifies
// with one hash and no store read; a revocation removes the record at once, and expiry is
// checked on every use. `lastUsedAt` is written at most once per LAST_USED_EVERY_MS per token.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { AuthError, ConflictError, NotFoundError } from '../../errors.js';
import type { Clock } from '../../model/clock.js';
import type { Logger } from '../../log.js';
import { TokenKind, type ApiTokenSpec, type ApiTokenStatus, type TokenScope } from '../../model/token-kinds.js';
import type { Store } from '../../store/types.js';

export const TOKEN_PREFIX = 'qry_';
const TOKEN_RE = /^qry_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

export const DEFAULT_TOKEN_DAYS = 90;
export const MAX_TOKENS_PER_USER = 100;
export const LAST_USED_EVERY_MS = 60_000;
const DAY_MS = 24 * 3600_000;

/** What the route layer and the audit know of the token a request came with. */
export interface TokenRef {
  id: string;
  name: string;
  scope: TokenScope;
}

/** A token as its owner sees it; the secret is never part of it. */
export interface TokenView extends TokenRef {
  createdAt: string;
  expiresAt: string;
  lastUsedAt: string | null;
}

interface Live {
  userId: string;
  name: string;
  scope: TokenScope;
  hash: Buffer;
  createdAt: string;
  expiresAt: number;
  /** Last use seen, and the last one written to the store (epoch ms; 0: none). */
  usedAt: number;
  writtenAt: number;
}

export interface NewToken {
  name: string;
  scope: TokenScope;
  expiresInDays?: number;
}

/** The pseudo session id of a request made with a token: what event streams are tied to. */
export const tokenSessionId = (tokenId: string): string => `token:${tokenId}`;
export const tokenOfSession = (sessionId: string): string | null => (sessionId.startsWith('token:') ? sessionId.slice(6) : null);

const sha256 = (secret: string): Buffer => createHash('sha256').update(secret).digest();

export class ApiTokenRegistry {
  private readonly live = new Map<string, Live>();
  private readonly endListeners = new Set<(sessionId: string, userId: string) => void>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  async load(): Promise<void> {
    for (const doc of await this.store.list<ApiTokenSpec, ApiTokenStatus>(TokenKind.ApiToken)) {
      const usedAt = doc.status.lastUsedAt ? Date.parse(doc.status.lastUsedAt) : 0;
      this.live.set(doc.id, {
        userId: doc.spec.userId,
        name: doc.spec.name,
        scope: doc.spec.scope,
        hash: Buffer.from(doc.spec.secretHash, 'hex'),
        createdAt: doc.spec.createdAt,
        expiresAt: Date.parse(doc.spec.expiresAt),
        usedAt,
        writtenAt: usedAt,
      });
    }
  }

  /** The token string is in this answer only. */
  async create(userId: string, username: string, input: NewToken): Promise<TokenView & { token: string }> {
    await this.pruneExpired(userId);
    const owned = [...this.live.values()].filter((t) => t.userId === userId).length;
    if (owned >= MAX_TOKENS_PER_USER) throw new ConflictError(`a user may hold at most ${MAX_TOKENS_PER_USER} tokens; revoke one first`);
    const secret = randomBytes(32).toString('base64url');
    const hash = sha256(secret);
    const now = this.clock.now();
    const expiresAt = now + (input.expiresInDays ?? DEFAULT_TOKEN_DAYS) * DAY_MS;
    const spec: ApiTokenSpec = {
      userId,
      name: input.name,
      scope: input.scope,
      secretHash: hash.toString('hex'),
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(expiresAt).toISOString(),
    };
    const doc = await this.store.create<ApiTokenSpec>({ kind: TokenKind.ApiToken, name: `${username}/${input.name}`, spec });
    const live: Live = { ...spec, hash, expiresAt, usedAt: 0, writtenAt: 0 };
    this.live.set(doc.id, live);
    this.logger('info', 'API token created', { user: username, name: input.name, scope: input.scope, id: doc.id });
    return { ...this.view(doc.id, live), token: `${TOKEN_PREFIX}${doc.id}_${secret}` };
  }

  /** The user's tokens, newest first (of two made in the same millisecond, the later one). */
  list(userId: string): TokenView[] {
    return [...this.live]
      .reverse()
      .filter(([, t]) => t.userId === userId)
      .map(([id, t]) => this.view(id, t))
      .sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  }

  /** A token of someone else is as unknown as one that does not exist. */
  async revoke(userId: string, tokenId: string): Promise<void> {
    const t = this.live.get(tokenId);
    if (!t || t.userId !== userId) throw new NotFoundError(`token ${tokenId} not found`);
    await this.remove(tokenId);
    this.logger('info', 'API token revoked', { id: tokenId, name: t.name });
  }

  /** The token's owner and reference; 401 for anything but a live token with its secret. */
  async verify(token: string): Promise<{ userId: string; ref: TokenRef }> {
    const m = TOKEN_RE.exec(token);
    const t = m ? this.live.get(m[1] as string) : undefined;
    if (!m || !t || !timingSafeEqual(sha256(m[2] as string), t.hash)) throw new AuthError();
    const id = m[1] as string;
    const now = this.clock.now();
    if (t.expiresAt <= now) throw new AuthError('API token expired');
    t.usedAt = now;
    if (now - t.writtenAt >= LAST_USED_EVERY_MS) await this.recordUse(id, t, now);
    return { userId: t.userId, ref: { id, name: t.name, scope: t.scope } };
  }

  /** For event streams opened with a token: alive while the token is. */
  isActive(tokenId: string, userId: string): boolean {
    const t = this.live.get(tokenId);
    return t !== undefined && t.userId === userId && t.expiresAt > this.clock.now();
  }

  onEnd(listener: (sessionId: string, userId: string) => void): () => void {
    this.endListeners.add(listener);
    return () => this.endListeners.delete(listener);
  }

  count(): number {
    return this.live.size;
  }

  private view(id: string, t: Live): TokenView {
    return {
      id,
      name: t.name,
      scope: t.scope,
      createdAt: t.createdAt,
      expiresAt: new Date(t.expiresAt).toISOString(),
      lastUsedAt: t.usedAt ? new Date(t.usedAt).toISOString() : null,
    };
  }

  /** Best effort: a use that cannot be recorded (the store closing, the token revoked in the
   * meantime) does not fail the request. */
  private async recordUse(id: string, t: Live, now: number): Promise<void> {
    t.writtenAt = now;
    try {
      await this.store.updateStatus(TokenKind.ApiToken, id, { lastUsedAt: new Date(now).toISOString() } satisfies ApiTokenStatus);
    } catch (err) {
      if (!(err instanceof NotFoundError)) this.logger('warn', 'could not record the use of an API token', { id, error: String(err) });
    }
  }

  private async pruneExpired(userId: string): Promise<void> {
    const now = this.clock.now();
    for (const [id, t] of [...this.live]) if (t.userId === userId && t.expiresAt <= now) await this.remove(id);
  }

  private async remove(tokenId: string): Promise<void> {
    const t = this.live.get(tokenId);
    this.live.delete(tokenId);
    // Before the store write, as for sessions: a stream held open by the token ends with it.
    if (t) {
      for (const listener of [...this.endListeners]) {
        try {
          listener(tokenSessionId(tokenId), t.userId);
        } catch (err) {
          this.logger('warn', 'a token-end listener failed', { id: tokenId, error: err instanceof Error ? err.message : String(err) });
        }
      }
    }
    try {
      await this.store.delete(TokenKind.ApiToken, tokenId);
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
  }
}
