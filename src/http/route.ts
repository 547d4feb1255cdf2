// The route table's vocabulary. A route is data: method, path, who may call it, the JSON
// Schemas of its params, query and body, and its response. The same objects are mounted on the
// router (auth → role → content type → parse → validate → handler) and turned into the OpenAPI
// document, so what is documented is what is enforced.
import type { Context, Middleware } from 'koa';
import { ForbiddenError } from '../errors.js';
import type { JsonSchema } from '../model/schemas.js';
import type { S3Credentials } from '../model/s3.js';
import { isAgent, type AgentPrincipal, type Auth, type Caller, type Principal } from './auth/index.js';
import { s3Credentials, withoutS3Keys } from './auth/s3-keys.js';
import { UnsupportedMediaTypeError } from './problem.js';
import { NO_BODY, RequestValidator, type Validators } from './validation.js';
import { ValidationError } from '../model/validate.js';
import { asActor, type Actor } from '../log.js';

export const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type HttpMethod = (typeof METHODS)[number];

export interface ResponseSpec {
  /** Default 200. */
  status?: number;
  description: string;
  /** Omitted for bodies that are not JSON (streams, text). */
  schema?: JsonSchema;
  /** Default application/json. */
  contentType?: string;
  /** Other media types the handler may answer with (the dashboard's static files). */
  otherTypes?: string[];
  /** A bodiless alternative answer the handler sets itself (204 when a long-poll found nothing). */
  empty?: { status: number; description: string };
  /** An alternative answer with a JSON body the handler sets itself through ctx (202 when a
   * creation is accepted but not yet done). */
  also?: { status: number; description: string; schema: JsonSchema };
}

export interface RouteRequest<B, Q, P> {
  body: B;
  query: Q;
  params: P;
  /** The calling user; null on public routes and when a node agent calls. */
  principal: Principal | null;
  /** The calling node agent, on routes that admit agents; null otherwise. */
  agent: AgentPrincipal | null;
  /** The caller's RGW key pair, on `s3` routes; null otherwise. */
  s3: S3Credentials | null;
  /** For what JSON in and out does not cover: cookies, streams (SSE), text bodies. */
  ctx: Context;
}

export interface RouteDef<B = unknown, Q = unknown, P = unknown> {
  method: HttpMethod;
  /** OpenAPI style: /users/{userId}. */
  path: string;
  summary: string;
  tags?: string[];
  /** Callable without session cookies. Only the seven public routes of docs/api-conventions.md
   * ("Users, sessions and roles") may say so. */
  public?: boolean;
  /** Authenticated by a signed link (`expires` + `signature` in the query, see signed-urls.ts)
   * instead of session cookies: for booting machines, which carry none. The handler verifies. */
  signed?: true;
  /** Authenticated by an RGW user's S3 key pair (headers X-S3-Access-Key/X-S3-Secret-Key or query
   * accessKey/secretKey) instead of session cookies; the handler gets it as `s3`, and the
   * gateway it signs requests for decides whether it is good. Missing keys are 401. */
  s3?: true;
  /** Only users with isAdmin; others get 403. */
  admin?: boolean;
  /** A POST (or other non-GET) that changes nothing (a dry run, a preview): a `read` API token
   * may call it. Every other non-GET route is refused to read tokens (403). */
  readOnly?: true;
  /** Who may call: users (the default); `true`: only node agents, each for its own node;
   * `'also'`: users (admins only with `admin`) and agents, the handler deciding per node
   * (see mayReadNodeSecrets). A caller of the other sort gets 403. */
  agent?: true | 'also';
  /** Only the leading controller can answer (#18): what the handler needs lives in the leader's
   * memory or on its disk (the task-run engine, the agents' run queues and Fleet, the event bus,
   * run logs and downloaded images, the NICs its dnsmasq serves). Another controller relays the
   * request to the leader unread (forward/proxy.ts); with no leader, 503 NOT_LEADER. */
  leader?: true;
  /** Schema of the body; a route without one accepts no body (or an empty JSON object). */
  body?: JsonSchema;
  /** Default json. text routes get the raw string (text/plain, 1 MiB). */
  bodyType?: 'json' | 'text';
  /** Media types a text route accepts; default text/plain (the parser knows the YAML ones too). */
  textTypes?: string[];
  query?: JsonSchema;
  /** Defaults to "each {name} of the path is a string". */
  params?: JsonSchema;
  response: ResponseSpec;
  /** Problem statuses the handler itself may answer, beyond those the layer adds. */
  errors?: number[];
  /** Returns the JSON body, or undefined when it has answered through ctx itself. */
  handler(req: RouteRequest<B, Q, P>): unknown;
}

// Handlers are methods, so their parameter is checked bivariantly and any RouteDef fits here.
export type AnyRoute = RouteDef;

/** Identity, for inference: `route<Body, Query, Params>({ ... })`. */
export const route = <B = Record<string, never>, Q = Record<string, never>, P = Record<string, string>>(
  def: RouteDef<B, Q, P>,
): RouteDef<B, Q, P> => def;

export const pathParams = (path: string): string[] => [...path.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)].map((m) => m[1] ?? '');
export const toKoaPath = (path: string): string => path.replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ':$1');
export const takesBody = (method: HttpMethod): boolean => method !== 'GET';

export function paramsSchema(def: AnyRoute): JsonSchema | undefined {
  const names = pathParams(def.path);
  if (def.params) return def.params;
  if (names.length === 0) return undefined;
  return {
    type: 'object',
    required: names,
    additionalProperties: false,
    properties: Object.fromEntries(names.map((n) => [n, { type: 'string', minLength: 1 }])),
  };
}

/** Every problem status a route can answer, for its OpenAPI entry: those the route layer adds by
 * itself (from how the route is declared), and those the handler declares in `errors`. */
export function problemStatuses(def: AnyRoute): number[] {
  const s = new Set<number>([500, ...(def.errors ?? [])]);
  // Every route refuses unknown query parameters (and malformed parameters and bodies).
  s.add(400);
  // A Host that is not one of Quarry's names (ALLOWED_HOSTS) is refused before any route runs.
  s.add(421);
  if (!def.public) s.add(401); // no session, a wrong signed link, no S3 key pair
  if (def.s3) s.add(503); // no gateway running, or none answering
  if (def.leader) s.add(503); // NOT_LEADER: no controller leads, or the leader cannot be reached
  // A session route refuses a caller of the wrong sort (an agent on a user route, a non-admin on
  // an admin route), an S3 gateway may deny its user, and a state-changing request may be cross-site.
  if (!def.public && !def.signed) s.add(403);
  if (takesBody(def.method)) s.add(403);
  if (pathParams(def.path).length) s.add(404);
  if (takesBody(def.method)) [413, 415].forEach((x) => s.add(x));
  return [...s].sort((a, b) => a - b);
}

/** Path parameters are single segments: an encoded / (%2F), a NUL or a dot segment that the
 * router decoded into one is refused here, for every route, before its schema or handler. */
function checkSegments(params: Record<string, string>): void {
  for (const [name, value] of Object.entries(params)) {
    if (/[/\\\0]/.test(value) || value === '.' || value === '..') {
      throw new ValidationError('invalid request', [
        { path: `/params/${name}`, message: 'must be one path segment (no /, \\, NUL, . or ..)' },
      ]);
    }
  }
}

export interface RouteEnv {
  auth: Auth;
  validators: Validators;
  parseJson: Middleware;
  parseText: Middleware;
}

function hasBody(ctx: Context): boolean {
  // Koa types it as a number; its getter returns undefined when there is no Content-Length.
  return ((ctx.request as { length?: number }).length ?? 0) > 0 || ctx.get('Transfer-Encoding') !== '';
}

/** Content type first (415), then parse (413 over 1 MiB, 400 for malformed JSON). */
async function readBody(ctx: Context, def: AnyRoute, env: RouteEnv): Promise<unknown> {
  const text = def.bodyType === 'text';
  if (!takesBody(def.method) || !hasBody(ctx)) return text ? '' : {};
  const types = def.textTypes ?? ['text/plain'];
  const ok = text ? ctx.request.is(...types) : ctx.request.is('application/json', 'application/*+json');
  if (!ok) throw new UnsupportedMediaTypeError(text ? types.join(' or ') : 'application/json');
  await (text ? env.parseText : env.parseJson)(ctx, async () => undefined);
  return (ctx.request as { body?: unknown }).body;
}

const EMPTY_QUERY: JsonSchema = { type: 'object', additionalProperties: false, properties: {} };

/** A declared params schema must name exactly the path's {placeholders}. */
function checkParams(def: AnyRoute): void {
  const declared = Object.keys(def.params?.properties ?? {}).sort();
  const inPath = pathParams(def.path).sort();
  if (def.params && declared.join() !== inPath.join()) {
    throw new Error(`route ${def.method} ${def.path}: params schema names [${declared.join()}], the path [${inPath.join()}]`);
  }
}

type Callers = Pick<RouteRequest<unknown, unknown, unknown>, 'principal' | 'agent' | 's3'>;

/** 403 for a caller of the wrong sort: an agent on a user route, a user on an agent route. */
function admit(def: AnyRoute, caller: Caller): Callers {
  if (isAgent(caller)) {
    if (!def.agent) throw new ForbiddenError('a node agent may call only the agent operations');
    return { principal: null, agent: caller, s3: null };
  }
  if (def.agent === true) throw new ForbiddenError('this operation is for node agents');
  if (caller.token?.scope === 'read' && def.method !== 'GET' && !def.readOnly) {
    throw new ForbiddenError(
      `the API token "${caller.token.name}" is read-only: it may call only operations that change nothing (GET, POST /specs/plan); use a write token`,
    );
  }
  // On an `agent: 'also'` route, `admin` restricts the users; an agent reaches the handler.
  if (def.admin && !caller.user.isAdmin) throw new ForbiddenError('this operation needs an admin');
  return { principal: caller, agent: null, s3: null };
}

/** Who the audit trail records for changes the request makes (docs/api-conventions.md, "Audit"). */
export function actorOf(caller: Caller): Actor {
  if (isAgent(caller)) return { type: 'system', name: caller.username };
  if (caller.token) return { type: 'token', name: `${caller.user.username}/${caller.token.name}` };
  return { type: 'user', name: caller.user.username };
}

/** A route has one way of authenticating its callers. */
function checkAuthMode(def: AnyRoute): void {
  const modes = [def.public, def.signed, def.s3, def.admin || def.agent].filter(Boolean).length;
  if (modes > 1) throw new Error(`route ${def.method} ${def.path}: public, signed, s3 and admin/agent exclude each other`);
}

export function compileRoute(def: AnyRoute, env: RouteEnv): Middleware {
  checkParams(def);
  checkAuthMode(def);
  const body = def.body ?? (def.bodyType === 'text' ? undefined : NO_BODY);
  const validator = new RequestValidator({ params: paramsSchema(def), query: def.query ?? EMPTY_QUERY, body }, env.validators);
  const { status = 200, contentType } = def.response;
  return async (ctx) => {
    // The route's template, never the raw URL: what request metrics are labelled with.
    (ctx.state as { route?: string }).route = def.path;
    let callers: Callers = { principal: null, agent: null, s3: null };
    let actor: Actor | null = null;
    if (def.s3) {
      callers = { ...callers, s3: s3Credentials(ctx) };
      ctx.set('Cache-Control', 'no-store');
    } else if (!def.public && !def.signed) {
      const caller = await env.auth.authenticateCaller(ctx);
      ctx.set('Cache-Control', 'no-store');
      callers = admit(def, caller);
      ctx.state.principal = caller;
      // A GET changes nothing (a read token may call it), so there is nothing to attribute, and
      // the scope would cost every read (bench/api-get.ts).
      if (def.method !== 'GET') actor = actorOf(caller);
    }
    const params = { ...(ctx as { params?: Record<string, string> }).params };
    checkSegments(params);
    const values = { params, query: def.s3 ? withoutS3Keys(ctx.query) : { ...ctx.query }, body: await readBody(ctx, def, env) };
    validator.check(values);
    // Spelled out, not `{ ...values, ...callers, ctx }`: for an object literal that begins with a
    // spread and then adds keys, V8 11 (Node 20) allocates a few hundred bytes in the old
    // generation (measured: old-space use over 30,000 such literals), per request here, which only
    // a major collection frees. At 2,000 agent reports a second
    // this was a third of all the controller promoted (bench/heartbeats.ts, a heap profile).
    const args = {
      params: values.params,
      query: values.query,
      body: values.body,
      principal: callers.principal,
      agent: callers.agent,
      s3: callers.s3,
      ctx,
    };
    const run = () => def.handler(args);
    const result = await (actor ? asActor(actor, run) : run());
    if (result === undefined) return; // the handler answered through ctx (streams, redirects)
    ctx.status = status;
    ctx.body = result;
    if (contentType) ctx.type = contentType;
  };
}
