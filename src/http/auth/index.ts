// Sessions over cookies: login, refresh with rotation and replay detection, logout, and the
// per-request check every non-public route runs.
import type { Context } from 'koa';
import { AuthError, ForbiddenError } from '../../errors.js';
import { agentNodeId, agentUsername, type AgentCredentialState, type VerifiedAgent } from '../../fleet/credentials.js';
import type { Clock } from '../../model/clock.js';
import type { Logger } from '../../log.js';
import type { SecretBox } from '../../store/secret-box.js';
import type { Store } from '../../store/types.js';
import { ensureFirstAdmin } from './bootstrap.js';
import { ACCESS_COOKIE, REFRESH_COOKIE, clearSessionCookies, readCookie, setSessionCookies } from './cookies.js';
import { AGENT_LOGIN_LIMITS, DEFAULT_LOGIN_LIMITS, LoginLimiter, type LoginLimits } from './rate-limit.js';
import { OWASP_SCRYPT, PasswordHasher, type ScryptParams } from './passwords.js';
import { sharedSigningKey } from './signing-key.js';
import { ApiTokenRegistry, TOKEN_PREFIX, tokenOfSession, tokenSessionId } from './api-tokens.js';
import { bearerToken } from './bearer.js';
import { SessionRegistry } from './sessions.js';
import { TokenService } from './tokens.js';
import { isAgent, type AgentPrincipal, type Caller, type Principal } from './principal.js';
import { UserDirectory, toPublic, type PublicUser } from './users.js';

export interface AuthOptions {
  accessSeconds: number;
  refreshSeconds: number;
  scrypt: ScryptParams;
  /** scrypt derivations allowed at once (each holds 128·N·r bytes). */
  hashConcurrency: number;
  /** Password checks one client address may have waiting for a slot; more are 429 at once. */
  hashWaitingPerSource: number;
  /** User logins: per (username, address), per address, per username. */
  loginLimits: LoginLimits;
  /** `agent:<nodeId>` logins, on their own limiter: no ceiling per agent. */
  agentLoginLimits: LoginLimits;
  tokenCacheSize: number;
  /** A hasher to use instead of one made from `scrypt` and the concurrency (tests). */
  hasher?: PasswordHasher;
}

export const DEFAULT_AUTH: AuthOptions = Object.freeze({
  accessSeconds: 15 * 60,
  refreshSeconds: 7 * 24 * 3600,
  scrypt: OWASP_SCRYPT,
  hashConcurrency: 2,
  hashWaitingPerSource: 4,
  loginLimits: DEFAULT_LOGIN_LIMITS,
  agentLoginLimits: AGENT_LOGIN_LIMITS,
  tokenCacheSize: 10_000,
});

export interface AuthDeps {
  store: Store;
  stateDir: string;
  adminPassword: string | null;
  clock: Clock;
  logger: Logger;
  print: (line: string) => void;
  options?: Partial<AuthOptions>;
  /** Node agents' credentials (src/fleet/credentials.ts); without it no agent can log in. */
  agents?: AgentVerifier;
  /** Opens the signing key file an older Quarry sealed, to move it into the store (signing-key.ts). */
  secrets?: SecretBox;
}

export interface AgentVerifier {
  /** `address`: the login's source address; an install secret is good only from the one it is bound to. */
  verify(nodeId: string, secret: string, address?: string): Promise<VerifiedAgent | null>;
  state(nodeId: string): Promise<AgentCredentialState | null>;
}

export class Auth {
  private constructor(
    readonly users: UserDirectory,
    readonly sessions: SessionRegistry,
    readonly tokens: TokenService,
    readonly apiTokens: ApiTokenRegistry,
    readonly limiter: LoginLimiter,
    readonly agentLimiter: LoginLimiter,
    readonly hasher: PasswordHasher,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly agents: AgentVerifier | null,
  ) {}

  /** Reads (or makes) the store's signing key, follows the store's sessions and API tokens, and
   * creates the first admin if needed. */
  static async open(deps: AuthDeps): Promise<Auth> {
    const o = { ...DEFAULT_AUTH, ...deps.options };
    const hasher = o.hasher ?? new PasswordHasher(o.scrypt, o.hashConcurrency, 64, o.hashWaitingPerSource);
    const key = await sharedSigningKey(deps.store, { stateDir: deps.stateDir, logger: deps.logger, secrets: deps.secrets });
    const users = new UserDirectory(deps.store, hasher);
    const sessions = new SessionRegistry(deps.store, deps.clock, deps.logger, o.refreshSeconds);
    const apiTokens = new ApiTokenRegistry(deps.store, deps.clock, deps.logger);
    try {
      await sessions.load();
      await apiTokens.load();
      await ensureFirstAdmin(users, { stateDir: deps.stateDir, adminPassword: deps.adminPassword, logger: deps.logger, print: deps.print });
      await hasher.warm();
    } catch (err) {
      // A start that fails leaves no watch behind on a store that stays open.
      sessions.close();
      apiTokens.close();
      throw err;
    }
    const tokens = new TokenService(
      key,
      deps.clock,
      { accessSeconds: o.accessSeconds, refreshSeconds: o.refreshSeconds },
      o.tokenCacheSize,
    );
    const limiters = [new LoginLimiter(deps.clock, o.loginLimits), new LoginLimiter(deps.clock, o.agentLoginLimits)] as const;
    return new Auth(users, sessions, tokens, apiTokens, ...limiters, hasher, deps.clock, deps.logger, deps.agents ?? null);
  }

  /** Stops following the store (the sessions' and tokens' indexes). */
  close(): void {
    this.sessions.close();
    this.apiTokens.close();
  }

  get accessSeconds(): number {
    return this.tokens.lifetimes.accessSeconds;
  }

  /** A user; a node agent's session is refused (403), as on every user route. */
  async authenticate(ctx: Context): Promise<Principal> {
    const caller = await this.authenticateCaller(ctx);
    if (isAgent(caller)) throw new ForbiddenError('a node agent may call only the agent operations');
    return caller;
  }

  /**
   * Whether an event stream's session (or API token) is still alive, and when one ends: what
   * /events ties its streams to (sse/streams.ts).
   */
  readonly liveness = {
    isActive: (sessionId: string, userId: string): boolean => {
      const tokenId = tokenOfSession(sessionId);
      return tokenId === null ? this.sessions.isActive(sessionId, userId) : this.apiTokens.isActive(tokenId, userId);
    },
    onEnd: (listener: (sessionId: string, userId: string) => void): (() => void) => {
      const offs = [this.sessions.onEnd(listener), this.apiTokens.onEnd(listener)];
      return () => offs.forEach((off) => off());
    },
  };

  /** A user or a node agent: from `Authorization: Bearer` (an API token, or an access token
   * as /user/refresh answers it), else from the access cookie. A request that brings a Bearer
   * credential is judged by it alone, never by cookies it may also carry. */
  async authenticateCaller(ctx: Context): Promise<Caller> {
    const bearer = bearerToken(ctx);
    if (bearer?.startsWith(TOKEN_PREFIX)) return this.apiTokenCaller(bearer);
    const token = bearer ?? readCookie(ctx, ACCESS_COOKIE);
    if (!token) throw new AuthError();
    const claims = await this.tokens.verifyAccess(token);
    // isActive first: the index answers nearly every request without an await.
    if (!this.sessions.isActive(claims.sessionId, claims.userId) && !(await this.sessions.isOpen(claims.sessionId, claims.userId)))
      throw new AuthError('session ended');
    const nodeId = agentNodeId(claims.userId);
    if (nodeId !== null) {
      const state = await this.agents?.state(nodeId);
      if (!state) throw new AuthError();
      return {
        kind: 'agent',
        nodeId,
        username: claims.userId,
        sessionId: claims.sessionId,
        rotated: state.rotated,
      } satisfies AgentPrincipal;
    }
    const doc = await this.users.get(claims.userId);
    if (!doc) throw new AuthError();
    return { user: toPublic(doc), doc, sessionId: claims.sessionId };
  }

  private async apiTokenCaller(bearer: string): Promise<Principal> {
    const { userId, ref } = await this.apiTokens.verify(bearer);
    // A deleted user's tokens stop working with it.
    const doc = await this.users.get(userId);
    if (!doc) throw new AuthError();
    return { user: toPublic(doc), doc, sessionId: tokenSessionId(ref.id), token: ref };
  }

  /** Same 401 for an unknown user and a wrong password; throttled per (username, address),
   * per address and per username (rate-limit.ts), agents on their own limiter. */
  async login(ctx: Context, username: string, password: string): Promise<PublicUser> {
    const nodeId = agentNodeId(username);
    const limiter = nodeId !== null ? this.agentLimiter : this.limiter;
    try {
      limiter.check(username, ctx.ip);
    } catch (err) {
      this.logger('warn', 'login throttled after repeated failures', { username, address: ctx.ip });
      throw err;
    }
    // An agent's secret is checked with one SHA-256: it never queues for the scrypt gate.
    if (nodeId !== null) return this.agentLogin(ctx, username, nodeId, password);
    const doc = await this.users.authenticate(username, password, ctx.ip);
    if (!doc) {
      this.limiter.fail(username, ctx.ip);
      throw new AuthError('invalid username or password');
    }
    this.limiter.succeed(username, ctx.ip);
    if (this.hasher.outdated(doc.spec.passwordHash)) await this.users.update(doc.id, { newPassword: password });
    const { sessionId, refreshJti } = await this.sessions.start(doc.id);
    await this.issue(ctx, doc.id, sessionId, refreshJti);
    return toPublic(doc);
  }

  async refresh(ctx: Context): Promise<{ accessToken: string; expiresIn: number }> {
    const token = readCookie(ctx, REFRESH_COOKIE);
    if (!token) throw new AuthError('no refresh token');
    const claims = await this.tokens.verifyRefresh(token);
    const jti = await this.sessions.rotate(claims.sessionId, claims.userId, claims.jti);
    if (!(await this.subjectExists(claims.userId))) {
      await this.sessions.revoke(claims.sessionId);
      throw new AuthError();
    }
    const access = await this.issue(ctx, claims.userId, claims.sessionId, jti);
    return { accessToken: access, expiresIn: this.accessSeconds };
  }

  async logout(ctx: Context, principal: Principal): Promise<void> {
    await this.sessions.revoke(principal.sessionId);
    clearSessionCookies(ctx);
  }

  /** Same generic 401 and the same throttle as a user's login; the secret is never logged. */
  private async agentLogin(ctx: Context, username: string, nodeId: string, secret: string): Promise<PublicUser> {
    const address = ctx.ip.startsWith('::ffff:') && ctx.ip.includes('.') ? ctx.ip.slice(7) : ctx.ip;
    const verified = (await this.agents?.verify(nodeId, secret, address)) ?? null;
    if (!verified) {
      this.agentLimiter.fail(username, ctx.ip);
      throw new AuthError('invalid username or password');
    }
    this.agentLimiter.succeed(username, ctx.ip);
    // The audit trail of trust on first use: this is the moment the node's credential was claimed.
    if (verified.firstUse) this.logger('info', 'agent credential used for the first time', { nodeId, address: ctx.ip });
    const subject = agentUsername(nodeId);
    const { sessionId, refreshJti } = await this.sessions.start(subject);
    await this.issue(ctx, subject, sessionId, refreshJti);
    return { id: nodeId, username: subject, name: `agent of node ${nodeId}`, email: '', isAdmin: false };
  }

  private async subjectExists(subject: string): Promise<boolean> {
    const nodeId = agentNodeId(subject);
    if (nodeId !== null) return (await this.agents?.state(nodeId)) != null;
    return (await this.users.get(subject)) !== undefined;
  }

  private async issue(ctx: Context, userId: string, sessionId: string, refreshJti: string): Promise<string> {
    const access = await this.tokens.signAccess(userId, sessionId);
    const refresh = await this.tokens.signRefresh(userId, sessionId, refreshJti);
    setSessionCookies(ctx, { access, refresh }, this.clock.now());
    return access.token;
  }
}

export { toPublic, type PublicUser, type UserDoc } from './users.js';
export { isAgent, mayReadNodeSecrets, type AgentPrincipal, type Caller, type Principal } from './principal.js';
export { MIN_PASSWORD_LENGTH } from './bootstrap.js';
