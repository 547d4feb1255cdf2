// The koa application: one route table made of areas, one error mapper, one cross-site guard.
// Other parts of Quarry add routes by passing areas; nothing else about the app changes.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import Koa, { type Middleware } from 'koa';
import { HttpMethodEnum, koaBody } from 'koa-body';
import { NotFoundError } from '../errors.js';
import { systemClock, uuid, type Clock, type IdGen } from '../model/clock.js';
import type { Config } from '../config.js';
import type { LeaderView } from '../model/leadership.js';
import { withRequestIds, type Logger } from '../log.js';
import type { Store } from '../store/types.js';
import type { SecretBox } from '../store/secret-box.js';
import { Auth, type AgentVerifier, type AuthOptions } from './auth/index.js';
import { pinBaseUrl } from './base-url.js';
import { clientAddress, type TrustProxy } from './client-address.js';
import { crossSiteGuard } from './csrf.js';
import { ForwardMarker, fellowControllers } from './forward/marker.js';
import { leaderFirst, leaderForwarding } from './forward/proxy.js';
import { hostGuard } from './hosts.js';
import type { ApiInfo } from './openapi.js';
import { MethodNotAllowedError, clientErrorHandler, errorMiddleware } from './problem.js';
import { requestIds } from './request-id.js';
import { indexedRoutes } from './route-index.js';
import { observeRequests, type RequestObserver } from './request-metrics.js';
import { compileRoute, toKoaPath, type AnyRoute, type RouteEnv } from './route.js';
import { apiTokenRoutes } from './routes/api-tokens.js';
import { auditRoutes } from './routes/audit.js';
import { healthRoutes } from './routes/health.js';
import { openApiRoutes } from './routes/openapi.js';
import { sessionRoutes } from './routes/session.js';
import { userRoutes } from './routes/users.js';
import { createValidators } from './validation.js';

/** What an area's routes may need besides the request: the handlers close over it. */
export interface AreaContext {
  auth: Auth;
  store: Store;
  logger: Logger;
  clock: Clock;
  /** Concurrent /events streams a user may hold (SSE_STREAMS_PER_USER). */
  sseStreamsPerUser: number;
}

export type RouteArea = readonly AnyRoute[] | ((ctx: AreaContext) => readonly AnyRoute[]);

export interface HttpDeps {
  store: Store;
  /** The trust settings (TRUST_PROXY, EXTERNAL_URL, ALLOWED_HOSTS, HOST) are optional: without
   * them no proxy is trusted, URLs follow the Host, and the default Host allowlist holds. */
  config: Pick<Config, 'stateDir' | 'adminPassword'> &
    Partial<Pick<Config, 'host' | 'trustProxy' | 'externalUrl' | 'allowedHosts' | 'sseStreamsPerUser'>>;
  logger: Logger;
  clock?: Clock;
  /** Reference ids of 500 answers. */
  ids?: IdGen;
  /** Routes of other areas (events, tasks, nodes, ...), mounted after users and sessions. */
  areas?: RouteArea[];
  auth?: Partial<AuthOptions>;
  /** Node agents' credentials: with them, POST /user/login accepts `agent:<nodeId>`. */
  agents?: AgentVerifier;
  /** Where a generated first admin password is shown once; stdout by default. */
  print?: (line: string) => void;
  /** Opens a token signing key file an older Quarry sealed, to move it into the store. */
  secrets?: SecretBox;
  /** Believe X-Forwarded-For/-Proto (client address for throttling, Secure cookies) from these
   * peers (`true`: any); overrides config.trustProxy. */
  trustProxy?: TrustProxy;
  info?: ApiInfo;
  /** GET /readyz: whether the store is open and the loops run; without it, ready. */
  ready?: () => boolean;
  /** Told about every finished request (request metrics). */
  observer?: RequestObserver;
  /** Which controller leads (#18). Without it this one always does: nothing is forwarded. With
   * it, a follower relays the `leader` routes to the leader, and GET /leaderz says which it is. */
  leader?: LeaderView;
}

export interface Listening {
  server: Server;
  port: number;
  close(): Promise<void>;
}

export interface HttpApp {
  app: Koa;
  routes: readonly AnyRoute[];
  auth: Auth;
  listen(port: number, host: string): Promise<Listening>;
}

const DEFAULT_INFO: ApiInfo = {
  title: 'Quarry',
  version: '0.1.0',
  description: [
    'Declarative provisioning and Ceph storage-cluster controller.',
    'Sessions: POST /user/login sets the HttpOnly cookies access_token (15 min) and refresh_token (7 days, rotated by POST /user/refresh; a reused one ends the session).',
    'Errors are RFC 9457 problem details (application/problem+json) with a stable `code`.',
    "Every answer carries X-Request-Id (a client's own, 1-128 characters of A-Z a-z 0-9 . _ : @ / + = -, is kept; otherwise a new one); a problem repeats it as `requestId`, and the server's log lines, the spec the request writes and the task runs it causes carry it.",
    'Scripts authenticate with Authorization: Bearer and an API token (POST /user/tokens, from a password session; scope read or write) instead of cookies; a read token may call only operations that change nothing (403 otherwise), a revoked or expired one is 401, and a Bearer request is not subject to the cross-site check.',
    'POST, PUT, PATCH and DELETE bodies must be application/json (415 otherwise; text/plain where stated); a request whose Origin is another host, or with Sec-Fetch-Site: cross-site, is refused with 403.',
    'Bodies are limited to 1 MiB (413). Unknown fields and unknown query parameters are refused (400). A request line and headers over 16 KiB are refused with 431 before any operation sees them.',
    "A request whose Host is not one of Quarry's names (ALLOWED_HOSTS) is refused with 421 HOST_NOT_ALLOWED, a malformed Host with 400.",
    'Failed logins make that username wait from that address, with growing delays (429 RATE_LIMITED with Retry-After), never from other addresses.',
    "A node's agent logs in the same way with username agent:<nodeId> and its node's secret, must first replace the secret it was installed with (POST /node/credential), and may then call only the agent operations (/node/...), for its own node; users get 403 there and agents 403 everywhere else.",
  ].join(' '),
};

/** The contract's unauthenticated operations; a route table with another public route is refused. */
export const PUBLIC_ROUTES = [
  'POST /user/login',
  'POST /user/refresh',
  'GET /boot/config',
  'GET /boot/default',
  'GET /templates/rendered/{}',
  'GET /healthz',
  'GET /readyz',
  'GET /leaderz',
  // The dashboard's page and files: no data in them, the page's API calls need a session.
  'GET /ui',
  'GET /ui/{}',
];

const routeKey = (r: AnyRoute): string => `${r.method} ${r.path.replace(/\{[^}]*\}/g, '{}')}`;

function checkTable(routes: readonly AnyRoute[]): void {
  const seen = new Set<string>();
  for (const r of routes) {
    const key = routeKey(r);
    if (seen.has(key)) throw new Error(`route ${r.method} ${r.path} is declared twice`);
    seen.add(key);
    if (r.public && !PUBLIC_ROUTES.includes(key)) throw new Error(`route ${r.method} ${r.path} may not be public`);
  }
}

/** After the router: a path no route knows is 404, a known path with another method is 405. */
function fallback(router: Router): Middleware {
  return async (ctx) => {
    const allow = [...new Set(router.match(ctx.path, ctx.method).path.flatMap((layer) => layer.methods))];
    if (allow.length) throw new MethodNotAllowedError(ctx.method, allow);
    throw new NotFoundError(`no operation at ${ctx.method} ${ctx.path}`);
  };
}

function bodyParsers(): Pick<RouteEnv, 'parseJson' | 'parseText'> {
  const common = {
    multipart: false,
    urlencoded: false,
    patchNode: false,
    parsedMethods: [HttpMethodEnum.POST, HttpMethodEnum.PUT, HttpMethodEnum.PATCH, HttpMethodEnum.DELETE],
  };
  return {
    parseJson: koaBody({
      ...common,
      json: true,
      text: false,
      jsonLimit: 1024 * 1024,
      jsonStrict: true,
      jsonTypes: ['application/json', 'application/*+json'],
    }),
    parseText: koaBody({
      ...common,
      json: false,
      text: true,
      textLimit: 1024 * 1024,
      textTypes: ['text/plain', 'application/yaml', 'application/x-yaml', 'text/yaml'],
    }),
  };
}

export async function createHttpApp(deps: HttpDeps): Promise<HttpApp> {
  const clock = deps.clock ?? systemClock;
  // Every line the request's handling writes names the request (request-id.ts).
  const logger = withRequestIds(deps.logger);
  const auth = await Auth.open({
    store: deps.store,
    stateDir: deps.config.stateDir,
    adminPassword: deps.config.adminPassword,
    clock,
    logger,
    print: deps.print ?? ((line) => process.stdout.write(line)),
    options: deps.auth,
    ...(deps.agents ? { agents: deps.agents } : {}),
    ...(deps.secrets ? { secrets: deps.secrets } : {}),
  });
  const area: AreaContext = { auth, store: deps.store, logger, clock, sseStreamsPerUser: deps.config.sseStreamsPerUser ?? 8 };
  const info = deps.info ?? DEFAULT_INFO;
  const routes: AnyRoute[] = [];
  routes.push(
    ...sessionRoutes(auth),
    ...userRoutes(auth),
    ...apiTokenRoutes(auth),
    ...openApiRoutes(() => routes, info),
    ...healthRoutes(deps.ready ?? (() => true), deps.leader),
  );
  routes.push(...auditRoutes(deps.store));
  for (const a of deps.areas ?? []) routes.push(...(typeof a === 'function' ? a(area) : a));
  checkTable(routes);

  const env: RouteEnv = { auth, validators: createValidators(), ...bodyParsers() };
  // Every controller signs what it forwards and believes what a fellow one signed (marker.ts).
  const marker = ForwardMarker.from(deps.secrets, clock);
  const forward = deps.leader ? leaderForwarding({ leader: deps.leader, marker, logger }) : null;
  const compiled = routes.map((r) => {
    const own = compileRoute(r, env);
    return { path: toKoaPath(r.path), method: r.method, middleware: r.leader && forward ? leaderFirst(r.path, forward, own) : own };
  });
  // The whole table, for the fallback's 405 (which methods a path has) only: requests are
  // matched by the index. 'specificity': /images/downloaded wins over /images/{imageId}.
  const table = new Router({ exclusive: 'specificity' });
  for (const r of compiled) table.register(r.path, [r.method], r.middleware);

  // koa's `proxy` stays off: it would trust every peer's X-Forwarded-* (client-address.ts).
  const app = new Koa({ proxy: false });
  app.on('error', (err: Error) => logger('warn', 'connection error', { error: err.message }));
  // First: the request's id is known to everything after, the error mapper included.
  app.use(requestIds(logger));
  if (deps.observer) app.use(observeRequests(deps.observer));
  app.use(errorMiddleware(logger, deps.ids ?? uuid));
  app.use((ctx, next) => {
    ctx.set('X-Content-Type-Options', 'nosniff');
    return next();
  });
  // Before anything reads ctx.ip or the cookies, and before any work: who calls, under which name.
  app.use(clientAddress(deps.trustProxy ?? deps.config.trustProxy ?? false));
  app.use(fellowControllers(marker));
  app.use(
    hostGuard({
      allowedHosts: deps.config.allowedHosts ?? null,
      externalUrl: deps.config.externalUrl ?? null,
      ...(deps.config.host ? { listenHost: deps.config.host } : {}),
    }),
  );
  app.use(pinBaseUrl(deps.config.externalUrl));
  app.use(crossSiteGuard());
  app.use(indexedRoutes(compiled));
  app.use(fallback(table));

  return { app, routes, auth, listen: (port, host) => listen(app, port, host) };
}

/** Three default heartbeat periods (the agent's HEARTBEAT_MS, 5 s) and some. */
export const KEEP_ALIVE_TIMEOUT_MS = 16_000;

async function listen(app: Koa, port: number, host: string): Promise<Listening> {
  const handle = app.callback();
  // Koa's handler settles its own errors (ctx.onerror): its promise is not the server's concern.
  const server = createServer((req, res) => void handle(req, res));
  // Node closes a keep-alive connection idle for 5 s by default: exactly the agents' default
  // heartbeat period, so an agent's connection was often closed just before its next report and
  // each report could pay a new TCP connection (and the master a new socket). Idle connections
  // are kept past a few periods; the time to send a request's headers stays bounded by
  // headersTimeout (60 s) and requestTimeout as before.
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  server.on('clientError', clientErrorHandler);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const close = () =>
    new Promise<void>((resolve, reject) => {
      server.close((err) => (err ? reject(err) : resolve()));
      server.closeAllConnections();
    });
  return { server, port: (server.address() as AddressInfo).port, close };
}
