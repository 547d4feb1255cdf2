// API tokens: long-lived bearer credentials for scripts and the CLI, `qry_<id>_<secret>`.
//
// The secret is 256 random bits, so one SHA-256 is the right way to keep it: nothing can be
// guessed from the hash, and a slow password hash (scrypt) would only cost every request time
// for no gain. The id in the token finds the record; the hashes are then compared in constant
// time. Records are held in an index that follows the store's watch (store-index.ts), so a
// request verifies with one hash and no store read, and a token created or revoked on any
// controller sharing the store (STORE=etcd, #18) is known to all. Expiry is checked on every
// use. `lastUsedAt` is written at most once per LAST_USED_EVERY_MS per token.
//
// How long a revoked token goes on working at another controller: until that controller's
// watch delivers the deletion — as soon as etcd sends the event, or, while its watch is
// reconnecting, once it has resumed. A new token is unknown there for as long: unlike a
// session's signed cookie, a token proves nothing before its record is found, so a miss is
// not looked up in the store (anyone could make every request read it).
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { AuthError, ConflictError, NotFoundError } from '../../errors.js';
import type { Clock } from '../../model/clock.js';
import type { Logger } from '../../log.js';
import { TokenKind, type ApiTokenSpec, type ApiTokenStatus, type TokenScope } from '../../model/token-kinds.js';
import type { AnyDoc } from '../../model/document.js';
import type { Store } from '../../store/types.js';
import { StoreIndex } from './store-index.js';

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
  private readonly index: StoreIndex<Live>;
  private readonly endListeners = new Set<(sessionId: string, userId: string) => void>();

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {
    this.index = new StoreIndex<Live>(store, TokenKind.ApiToken, { read: liveOf, removed: (id, t) => this.onEnded(id, t) }, logger);
  }

  /** Lists the stored tokens and follows the store from there. */
  async load(): Promise<void> {
    await this.index.start();
  }

  close(): void {
    this.index.stop();
  }

  /** The token string is in this answer only. */
  async create(userId: string, username: string, input: NewToken): Promise<TokenView & { token: string }> {
    await this.pruneExpired(userId);
    // Counted in the index: a token made on another controller a moment ago may not count yet.
    // The cap bounds what a user can pile up, not an exact number.
    const owned = [...this.index.all()].filter(([, t]) => t.userId === userId).length;
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
    this.index.put(doc);
    this.logger('info', 'API token created', { user: username, name: input.name, scope: input.scope, id: doc.id });
    return { ...this.view(doc.id, liveOf(doc)), token: `${TOKEN_PREFIX}${doc.id}_${secret}` };
  }

  /** The user's tokens, newest first (of two made in the same millisecond, the later one). */
  list(userId: string): TokenView[] {
    return [...this.index.all()]
      .reverse()
      .filter(([, t]) => t.userId === userId)
      .map(([id, t]) => this.view(id, t))
      .sort((a, b) => (a.createdAt < b.createdAt ? 1 : a.createdAt > b.createdAt ? -1 : 0));
  }

  /** A token of someone else is as unknown as one that does not exist. Read from the store, not
   * the index: a token created on another controller a moment ago can be revoked here too. */
  async revoke(userId: string, tokenId: string): Promise<void> {
    const doc = await this.store.get<ApiTokenSpec>(TokenKind.ApiToken, tokenId);
    if (!doc || doc.spec.userId !== userId) throw new NotFoundError(`token ${tokenId} not found`);
    await this.remove(tokenId);
    this.logger('info', 'API token revoked', { id: tokenId, name: doc.spec.name });
  }

  /** The token's owner and reference; 401 for anything but a live token with its secret. */
  async verify(token: string): Promise<{ userId: string; ref: TokenRef }> {
    const m = TOKEN_RE.exec(token);
    const t = m ? this.index.get(m[1] as string) : undefined;
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
    const t = this.index.get(tokenId);
    return t !== undefined && t.userId === userId && t.expiresAt > this.clock.now();
  }

  onEnd(listener: (sessionId: string, userId: string) => void): () => void {
    this.endListeners.add(listener);
    return () => this.endListeners.delete(listener);
  }

  count(): number {
    return this.index.size;
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
    for (const [id, t] of [...this.index.all()]) if (t.userId === userId && t.expiresAt <= now) await this.remove(id);
  }

  /** Stored first: a stream held open by the token ends once the revocation is decided. */
  private async remove(tokenId: string): Promise<void> {
    try {
      await this.store.delete(TokenKind.ApiToken, tokenId);
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
    this.index.remove(tokenId);
  }

  private onEnded(tokenId: string, t: Live): void {
    for (const listener of [...this.endListeners]) {
      try {
        listener(tokenSessionId(tokenId), t.userId);
      } catch (err) {
        this.logger('warn', 'a token-end listener failed', { id: tokenId, error: err instanceof Error ? err.message : String(err) });
      }
    }
  }
}

/** The index's form of a token document. The last use is the newer of what this controller saw
 * and what the store holds (another controller's record counts as written: one write a minute
 * for the token, not one per controller). */
function liveOf(doc: AnyDoc, prev?: Live): Live {
  const spec = doc.spec as ApiTokenSpec;
  const stored = (doc.status as ApiTokenStatus | null)?.lastUsedAt;
  const storedAt = stored ? Date.parse(stored) : 0;
  return {
    userId: spec.userId,
    name: spec.name,
    scope: spec.scope,
    hash: Buffer.from(spec.secretHash, 'hex'),
    createdAt: spec.createdAt,
    expiresAt: Date.parse(spec.expiresAt),
    usedAt: Math.max(prev?.usedAt ?? 0, storedAt),
    writtenAt: Math.max(prev?.writtenAt ?? 0, storedAt),
  };
}
