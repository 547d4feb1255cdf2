import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { Validator } from '@seriousme/openapi-schema-validator';
import addFormatsModule from 'ajv-formats';
import { PUBLIC_ROUTES, createHttpApp } from '../../src/http/app.js';
import { route, type AnyRoute } from '../../src/http/route.js';
import { uiRoutes } from '../../src/http/router.js';
import { NO_UI } from '../../src/http/ui-assets.js';
import { silentLogger } from '../../src/log.js';
import { createMemoryStore } from '../../src/store/index.js';
import { FAST_SCRYPT, startHarness } from './harness.js';
import { assertPrivateRoutesRefuse, assertTokenMatrix, matrixTokens } from './route-checks.js';
import type { OpenApiDoc } from './bodies.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const key = (method: string, path: string): string => `${method.toUpperCase()} ${path}`;

// Stand-ins for the public routes other areas own (and the dashboard's), so the table holds them
// all (the app itself holds the session routes and the health probes).
const otherPublic: AnyRoute[] = [
  ...uiRoutes(NO_UI),
  route({
    method: 'GET',
    path: '/boot/config',
    summary: 'iPXE script',
    public: true,
    query: { type: 'object', additionalProperties: false, properties: { mac: { type: 'string' } } },
    response: { description: 'script', contentType: 'text/plain' },
    handler: () => '#!ipxe',
  }),
  route({
    method: 'GET',
    path: '/boot/default',
    summary: 'iPXE default',
    public: true,
    response: { description: 'script', contentType: 'text/plain' },
    handler: () => '#!ipxe',
  }),
  route({
    method: 'GET',
    path: '/templates/rendered/{name}',
    summary: 'rendered',
    public: true,
    response: { description: 'text', contentType: 'text/plain' },
    handler: () => 'x',
  }),
];

test('routes every route of the table answers 401 without (valid) cookies, except the public ones', async (t) => {
  const h = await startHarness({ areas: [otherPublic] });
  t.teardown(() => h.close());
  const publicKeys = h.http.routes.filter((r) => r.public).map((r) => key(r.method, r.path.replace(/\{[^}]*\}/g, '{}')));
  t.deepEqual(publicKeys.sort(), [...PUBLIC_ROUTES].sort());
  await assertPrivateRoutesRefuse(t, h.http.routes, h.base);
  t.is((await h.client().get('/boot/default')).status, 200, 'a public route needs no cookie');
  for (const probe of ['/healthz', '/readyz', '/leaderz']) t.is((await h.client().get(probe)).status, 200, `${probe} needs no cookie`);
});

test('routes every user route with an API token: a read token is refused on writes, a write token passes, a revoked or expired one is 401', async (t) => {
  const h = await startHarness({ areas: [otherPublic] });
  t.teardown(() => h.close());
  const tokens = await matrixTokens(await h.admin(), (ms) => h.clock.advance(ms));
  const checked = await assertTokenMatrix(t, h.http.routes, h.base, tokens);
  t.true(checked >= 10);
});

test('routes a public route outside the contract is refused at start-up', async (t) => {
  const extra = route({ method: 'GET', path: '/nodes', summary: 'x', public: true, response: { description: 'x' }, handler: () => [] });
  const store = await createMemoryStore();
  const stateDir = await mkdtemp(join(tmpdir(), 'quarry-http-'));
  t.teardown(() => rm(stateDir, { recursive: true, force: true }));
  await t.throwsAsync(
    createHttpApp({
      store,
      logger: silentLogger,
      config: { stateDir, adminPassword: 'admin-password-1' },
      auth: { scrypt: FAST_SCRYPT },
      areas: [[extra]],
      print: () => {},
    }),
    {
      message: /GET \/nodes may not be public/,
    },
  );
});

test('openapi lists every route of the table and nothing else', async (t) => {
  const h = await startHarness({ areas: [otherPublic] });
  t.teardown(() => h.close());
  const r = await (await h.admin()).get<OpenApiDoc>('/openapi.json');
  t.is(r.status, 200);
  const documented = Object.entries(r.json.paths).flatMap(([path, item]) => Object.keys(item).map((m) => key(m, path)));
  t.deepEqual(documented.sort(), h.http.routes.map((x) => key(x.method, x.path)).sort());
  t.is((await h.client().get('/openapi.json')).status, 401, 'the document needs a session');
});

// The parts of OpenAPI 3.1 this app emits, written down as a schema; not the full specification.
const response = { type: 'object', oneOf: [{ required: ['$ref'] }, { required: ['description'] }] };
const parameter = {
  type: 'object',
  required: ['name', 'in', 'schema'],
  properties: {
    name: { type: 'string', minLength: 1 },
    in: { enum: ['path', 'query', 'header', 'cookie'] },
    required: { type: 'boolean' },
    schema: { type: 'object' },
  },
  if: { properties: { in: { const: 'path' } } },
  then: { required: ['required'], properties: { required: { const: true } } },
};
const operation = {
  type: 'object',
  required: ['responses', 'operationId'],
  properties: {
    operationId: { type: 'string' },
    parameters: { type: 'array', items: parameter },
    requestBody: { type: 'object', required: ['content'] },
    responses: {
      type: 'object',
      minProperties: 1,
      propertyNames: { pattern: '^([1-5][0-9]{2}|default)$' },
      additionalProperties: response,
    },
    security: { type: 'array' },
  },
};
const openApiSubset = {
  type: 'object',
  required: ['openapi', 'info', 'paths'],
  properties: {
    openapi: { type: 'string', pattern: '^3\\.1\\.\\d+$' },
    info: { type: 'object', required: ['title', 'version'], properties: { title: { type: 'string' }, version: { type: 'string' } } },
    paths: {
      type: 'object',
      propertyNames: { pattern: '^/' },
      additionalProperties: {
        type: 'object',
        propertyNames: { enum: ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] },
        additionalProperties: operation,
      },
    },
    components: { type: 'object' },
  },
};

function refs(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) node.forEach((n) => refs(n, out));
  else if (node && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === '$ref' && typeof v === 'string') out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

const resolve = (doc: unknown, ref: string): unknown =>
  ref
    .replace(/^#\//, '')
    .split('/')
    .reduce<unknown>((n, p) => (n as Record<string, unknown> | undefined)?.[p], doc);

test('openapi document is structurally OpenAPI 3.1: top level, info, operations with responses, path parameters, resolvable $refs, compilable schemas (a subset check, not the full spec)', async (t) => {
  const h = await startHarness({ areas: [otherPublic] });
  t.teardown(() => h.close());
  const doc = (await (await h.admin()).get<OpenApiDoc>('/openapi.json')).json;
  const ajv = new Ajv({ allErrors: true, strict: false });
  addFormats(ajv);
  const validate = ajv.compile(openApiSubset);
  t.true(validate(doc), JSON.stringify(validate.errors));
  for (const ref of refs(doc)) t.truthy(resolve(doc, ref), ref);
  const ids = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      t.false(ids.has(op.operationId), `unique operationId ${op.operationId}`);
      ids.add(op.operationId);
      const declared = (op.parameters ?? [])
        .filter((p) => p.in === 'path')
        .map((p) => p.name)
        .sort();
      t.deepEqual(declared, [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort(), `${method} ${path} path parameters`);
      for (const p of op.parameters ?? []) t.notThrows(() => ajv.compile(p.schema), `${method} ${path} ${p.name}`);
      for (const c of Object.values(op.requestBody?.content ?? {})) t.notThrows(() => ajv.compile(c.schema), `${method} ${path} body`);
    }
  }
});

test('openapi document validates against the official OpenAPI 3.1 schema', async (t) => {
  const h = await startHarness({ areas: [otherPublic] });
  t.teardown(() => h.close());
  const doc = (await (await h.admin()).get<OpenApiDoc>('/openapi.json')).json;
  const validator = new Validator();
  const res = await validator.validate(doc);
  t.true(res.valid, JSON.stringify(res.errors ?? null, null, 1).slice(0, 2000));
  t.is(validator.version, '3.1');
});

test('openapi every operation documents the statuses of the route layer, problem+json for each problem and a media type for each answer with a body', async (t) => {
  const h = await startHarness({ areas: [otherPublic] });
  t.teardown(() => h.close());
  const doc = (await (await h.admin()).get<OpenApiDoc>('/openapi.json')).json;
  const byRoute = new Map(h.http.routes.map((r) => [key(r.method, r.path), r]));
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      const r = byRoute.get(key(method, path))!;
      const statuses = Object.keys(op.responses).map(Number);
      for (const s of [400, 500, ...(r.public ? [] : [401, 403])]) t.true(statuses.includes(s), `${method} ${path} ${s}`);
      for (const [status, res] of Object.entries(op.responses)) {
        if (Number(status) >= 400) {
          t.truthy(res.$ref, `${method} ${path} ${status}`);
          t.truthy(
            resolve(doc, res.$ref!) &&
              (resolve(doc, res.$ref!) as { content: Record<string, unknown> }).content['application/problem+json'],
            `${method} ${path} ${status}`,
          );
        } else if (Number(status) !== 204) {
          t.true(Object.keys(res.content ?? {}).length > 0, `${method} ${path} ${status} says its media type`);
        }
      }
    }
  }
  const login = doc.paths['/user/login']?.post?.responses;
  t.truthy(login?.['401'] && login['429']);
  t.truthy(doc.paths['/user/refresh']?.post?.responses['401']);
  t.truthy(doc.paths['/boot/default']?.get?.responses['200']?.content?.['text/plain']);
});
