// The OpenAPI 3.1 document, made from the route table and nothing else: every route is in it,
// and everything in it is a route.
import { STATUS_CODES } from 'node:http';
import type { JsonSchema } from '../model/schemas.js';
import { paramsSchema, problemStatuses, type AnyRoute } from './route.js';
import { PROBLEM_TYPE } from './problem.js';
import { MAX_FIELD_ERRORS } from '../model/validate.js';

export interface ApiInfo {
  title: string;
  version: string;
  description?: string;
}

const problemSchema: JsonSchema = {
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'code'],
  properties: {
    type: { type: 'string', description: 'urn:quarry:problem:<code in kebab case>' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    code: { type: 'string', pattern: '^[A-Z][A-Z0-9_]*$' },
    errors: {
      type: 'array',
      maxItems: MAX_FIELD_ERRORS,
      description: `the failing fields of a 400, the first ${MAX_FIELD_ERRORS}`,
      items: {
        type: 'object',
        required: ['path', 'message'],
        properties: {
          path: { type: 'string' },
          message: { type: 'string' },
          // SPEC_INVALID (PUT /specs/files/{name}): where in the YAML text.
          line: { type: 'integer', minimum: 1 },
          column: { type: 'integer', minimum: 1 },
          document: { type: ['integer', 'null'], description: "the document's index in the file; null for the whole file" },
        },
      },
    },
    errorCount: { type: 'integer', minimum: 0, description: 'how many fields failed in all (errors lists the first ones)' },
    requestId: { type: 'string', description: "the request's id, as in its X-Request-Id header; the server's log lines for it carry it" },
  },
};

/** What each problem status means here, with its codes. */
const PROBLEM_NOTES: Record<number, string> = {
  400:
    `VALIDATION_FAILED: a parameter or body fails its schema, or a query parameter the operation does not know; the first ${MAX_FIELD_ERRORS} failing fields are listed in errors, errorCount counts them all. ` +
    'Also TOO_MANY_TARGETS (more than 100 nodeIds or diskIds), DISK_REQUIRED, TEMPLATE_INVALID where stated.',
  401: 'UNAUTHENTICATED: missing, invalid or expired credentials (session cookie, API token, signed link or S3 key pair; a refused login or refresh).',
  403: 'FORBIDDEN: the caller may not do this (role, agent/user, a read-only API token on a write, a cross-site request).',
  404: 'NOT_FOUND: an unknown id or name.',
  409: 'A state that refuses the request; the code says which (CONFLICT, IMAGE_IS_DEFAULT, ...).',
  413: 'PAYLOAD_TOO_LARGE: the body is over 1 MiB.',
  415: 'UNSUPPORTED_MEDIA_TYPE: the body is not of a type the operation takes.',
  421: 'HOST_NOT_ALLOWED: the Host header is not one of the names Quarry answers under (ALLOWED_HOSTS, EXTERNAL_URL, loopback, the address reached).',
  422: 'TEMPLATE_FAILED or TEMPLATE_TIMEOUT: the configuration (a template) needed to answer is broken.',
  429: 'RATE_LIMITED: too many failed attempts; Retry-After says when to try again.',
  500: 'INTERNAL: a server fault; the detail holds only a reference to the server log.',
  503:
    'What the request reads is not available yet, or a queue is full (TEMPLATE_BUSY, with Retry-After): CLUSTER_UNAVAILABLE (no monitor quorum, no monmap, no RADOS gateway running or answering), ' +
    'REGISTRY_UNREACHABLE or REGISTRY_INVALID (the image catalog); NOT_LEADER (with Retry-After) on an operation only the leading controller answers, while no controller leads or the leader cannot be reached.',
};

/** The schema of a body that is not JSON, by media type. */
function rawSchema(contentType: string): JsonSchema {
  if (contentType === 'application/octet-stream') return { type: 'string', contentMediaType: 'application/octet-stream' };
  return { type: 'string' };
}

const responseName = (status: number): string =>
  (STATUS_CODES[status] ?? `Status${status}`)
    .replace(/[^A-Za-z0-9]+(.)?/g, (_, c: string | undefined) => (c ?? '').toUpperCase())
    .replace(/^./, (c) => c.toUpperCase());

function problemResponse(status: number): Record<string, unknown> {
  const headers =
    status === 429 || status === 503
      ? { 'Retry-After': { description: 'seconds to wait', schema: { type: 'integer', minimum: 1 } } }
      : undefined;
  return {
    description: PROBLEM_NOTES[status] ?? STATUS_CODES[status] ?? 'Error',
    ...(headers ? { headers } : {}),
    content: { [PROBLEM_TYPE]: { schema: { $ref: '#/components/schemas/Problem' } } },
  };
}

function parameters(def: AnyRoute): Array<Record<string, unknown>> {
  const list = (schema: JsonSchema | undefined, where: 'path' | 'query') => {
    const props = (schema?.properties ?? {}) as Record<string, JsonSchema>;
    const required = (schema?.required ?? []) as string[];
    return Object.entries(props).map(([name, s]) => ({
      name,
      in: where,
      required: where === 'path' || required.includes(name),
      schema: s,
    }));
  };
  return [...list(paramsSchema(def), 'path'), ...list(def.query, 'query')];
}

function requestBody(def: AnyRoute): Record<string, unknown> | undefined {
  if (def.bodyType === 'text')
    return {
      required: true,
      content: Object.fromEntries((def.textTypes ?? ['text/plain']).map((t) => [t, { schema: def.body ?? { type: 'string' } }])),
    };
  if (!def.body) return undefined;
  const required = Array.isArray(def.body.required) && def.body.required.length > 0;
  return { required, content: { 'application/json': { schema: def.body } } };
}

function operationId(def: AnyRoute): string {
  const words = def.path
    .split('/')
    .filter(Boolean)
    .map((seg) => seg.replace(/^\{(.*)\}$/, 'by-$1'));
  return [def.method.toLowerCase(), ...words.flatMap((w) => w.split(/[^A-Za-z0-9]+/))]
    .map((w, i) => (i === 0 ? w : w.charAt(0).toUpperCase() + w.slice(1)))
    .join('');
}

function description(def: AnyRoute): string | undefined {
  const who = callers(def);
  if (!def.leader) return who;
  const where =
    'Answered by the leading controller: another relays the request to it as it came (503 NOT_LEADER with Retry-After while none leads or it cannot be reached).';
  return who ? `${who} ${where}` : where;
}

function callers(def: AnyRoute): string | undefined {
  if (def.s3)
    return "No session: an RGW user's key pair, in the headers X-S3-Access-Key and X-S3-Secret-Key or the query parameters accessKey and secretKey. Served by a running RADOS gateway, which checks the signature made with the pair: missing or wrong keys are 401, no gateway running is 503 CLUSTER_UNAVAILABLE.";
  if (def.signed)
    return 'No session: the link itself is the credential (`expires` and `signature`, as handed out in boot scripts); a wrong or expired one is 401.';
  if (def.agent === true)
    return 'Node agents only (session of POST /user/login as `agent:<nodeId>`), each for its own node; users get 403.';
  if (def.agent === 'also') return `${def.admin ? 'Admins' : 'Users'}, and the agent of the node concerned.`;
  if (def.readOnly) return `${def.admin ? 'Admins only. ' : ''}Changes nothing: a read API token may call it.`;
  return def.admin ? 'Admins only.' : undefined;
}

/** Key pair in headers, or key pair in the query. */
const S3_SECURITY = [
  { s3AccessKey: [], s3SecretKey: [] },
  { s3AccessKeyQuery: [], s3SecretKeyQuery: [] },
];

function security(def: AnyRoute): unknown[] {
  if (def.s3) return S3_SECURITY;
  if (def.public || def.signed) return [];
  return def.agent === true ? [{ sessionCookie: [] }] : [{ sessionCookie: [] }, { bearerToken: [] }];
}

function operation(def: AnyRoute): Record<string, unknown> {
  const { response } = def;
  const contentType = response.contentType ?? 'application/json';
  // Every answer with a body says its media type: JSON with its schema, text, bytes, streams.
  const content: Record<string, unknown> = { [contentType]: { schema: response.schema ?? rawSchema(contentType) } };
  for (const t of response.otherTypes ?? []) content[t] = { schema: rawSchema(t) };
  const ok = response.status === 204 ? { description: response.description } : { description: response.description, content };
  const responses: Record<string, unknown> = { [String(response.status ?? 200)]: ok };
  if (response.empty) responses[String(response.empty.status)] = { description: response.empty.description };
  if (response.also)
    responses[String(response.also.status)] = {
      description: response.also.description,
      content: { 'application/json': { schema: response.also.schema } },
    };
  for (const s of problemStatuses(def)) responses[String(s)] = { $ref: `#/components/responses/${responseName(s)}` };
  const params = parameters(def);
  const body = requestBody(def);
  return {
    operationId: operationId(def),
    summary: def.summary,
    ...(def.tags ? { tags: def.tags } : {}),
    security: security(def),
    ...(description(def) ? { description: description(def) } : {}),
    ...(params.length ? { parameters: params } : {}),
    ...(body ? { requestBody: body } : {}),
    responses,
  };
}

export function buildOpenApi(routes: readonly AnyRoute[], info: ApiInfo): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  const statuses = new Set<number>();
  for (const def of routes) {
    (paths[def.path] ??= {})[def.method.toLowerCase()] = operation(def);
    problemStatuses(def).forEach((s) => statuses.add(s));
  }
  const responses = Object.fromEntries([...statuses].sort((a, b) => a - b).map((s) => [responseName(s), problemResponse(s)]));
  return {
    openapi: '3.1.0',
    info,
    paths,
    components: {
      schemas: { Problem: problemSchema },
      responses,
      securitySchemes: {
        sessionCookie: {
          type: 'apiKey',
          in: 'cookie',
          name: 'access_token',
          description: 'Set by POST /user/login; renewed by POST /user/refresh.',
        },
        bearerToken: {
          type: 'http',
          scheme: 'bearer',
          description:
            'Authorization: Bearer with an API token (qry_..., POST /user/tokens; a read token may call only operations that change nothing) or an access token from POST /user/refresh.',
        },
        s3AccessKey: {
          type: 'apiKey',
          in: 'header',
          name: 'X-S3-Access-Key',
          description: "An RGW user's access key (the /s3 operations).",
        },
        s3SecretKey: { type: 'apiKey', in: 'header', name: 'X-S3-Secret-Key', description: "That user's secret key." },
        s3AccessKeyQuery: { type: 'apiKey', in: 'query', name: 'accessKey', description: 'The access key, as a query parameter.' },
        s3SecretKeyQuery: { type: 'apiKey', in: 'query', name: 'secretKey', description: 'The secret key, as a query parameter.' },
      },
    },
  };
}
