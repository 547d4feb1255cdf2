// A schema-derived fuzzer over the whole API of a running lab Quarry. It reads /openapi.json,
// derives fast-check arbitraries from every operation's parameters and body (valid-ish and
// invalid values), and sends at least 10,000 requests across every route, as an admin, a
// non-admin user, a node agent, API tokens (an admin's write token, a user's read token), S3 key
// pairs and nobody. Properties of every answer:
//   - no 5xx, except 503 with a code of AVAILABILITY_CODES (the cluster or registry not there yet);
//   - every 4xx is problem+json with a code, small (under MAX_PROBLEM_BYTES), and its status is
//     one the operation documents (as every 2xx is, with its documented media type);
//   - no stack frame, source path, state directory, gateway address or secret in any answer
//     (secrets: the admin password, keyring keys, agent secrets and hashes, RGW secret keys,
//     password hashes, the signing key; the few operations whose 2xx answer is a secret aside);
//   - a 4xx changes nothing: no object created, deleted or given a new spec while it ran.
//
// Soundness of the last one: once the lab has settled (cluster in quorum, a gateway running, an
// RGW user), the lab's machines and the reconcile loops are stopped, so nothing but the requests
// writes specs (what is left — heartbeat timeouts, run deadlines — writes only status). Requests
// are sent one at a time; a store watch records every added, deleted or spec-changed object with
// its revision, and the revisions between a 4xx request's start and its answer must hold none.
//
// The seed is FUZZ_SEED or a fresh one, printed; `FUZZ_SEED=<n> npx ava dist/test/fuzz/api-fuzz.test.js`
// replays a run's requests (the lab's timing aside). FUZZ_REQUESTS sets the total (default 10,000).
import test from 'ava';
import fc from 'fast-check';
import type { StoreEvent } from '../../src/store/types.js';
import { type Client, parseSetCookie } from '../http/client.js';
import { cluster, login } from '../lab/ceph-cluster.js';
import { ADMIN_PASSWORD, waitFor } from '../lab/harness.js';
import { invalid, validish, NASTY_STRINGS, type Pools, type Schema } from './schema-arbitraries.js';

// NOT_READY: GET /readyz once the loops are stopped (below), as they are while the fuzzer runs.
// Not NOT_LEADER: the lab is one controller, which always leads (GET /leaderz is fuzzed as a
// public route and must answer 200 `leader`); a leader-only operation answering it is a fault.
const AVAILABILITY_CODES = new Set(['CLUSTER_UNAVAILABLE', 'REGISTRY_UNREACHABLE', 'REGISTRY_INVALID', 'NOT_READY']);
const MAX_PROBLEM_BYTES = 16 * 1024;
/** 2xx answers that are secrets by design: keyrings for admins and the node's agent, a rotated
 * agent secret, a new RGW user's key pair, an install render's one-time credential. */
/** A new RGW user's creation waits up to 30 s for its keys, which never come with the loops
 * stopped (the answer would be 202): the fuzzer waits this long and lets the rest run. */
const PATIENCE_RGW_USER_MS = 500;
const SECRET_ANSWERS = new Set([
  'GET /ceph/nodes/{nodeId}/keyrings',
  'POST /node/credential',
  'POST /gateways/rgw/users',
  'GET /templates/rendered/{name}',
  'POST /user/tokens',
]);

type Caller = 'admin' | 'user' | 'agent' | 'none' | 's3' | 's3-query' | 's3-bad' | 'write-token' | 'read-token';
const TOKEN_CALLERS: readonly Caller[] = ['write-token', 'read-token'];

interface Operation {
  method: string;
  path: string;
  op: {
    parameters?: Array<{ name: string; in: 'path' | 'query'; required?: boolean; schema: Schema }>;
    requestBody?: { content: Record<string, { schema: Schema }> };
    responses: Record<string, { $ref?: string; content?: Record<string, unknown> }>;
    security?: Array<Record<string, unknown>>;
  };
}

interface Draw {
  caller: Caller;
  params: Record<string, { value: unknown; raw: boolean }>;
  query: Record<string, unknown>;
  body:
    | { kind: 'json'; value: unknown }
    | { kind: 'text'; value: string; type: string }
    | { kind: 'raw'; value: string; type: string }
    | { kind: 'none' };
}

interface Answer {
  status: number;
  type: string;
  text: string;
}

const problemOf = (a: Answer): { code?: unknown } | null => {
  try {
    return a.type === 'application/problem+json' ? (JSON.parse(a.text) as { code?: unknown }) : null;
  } catch {
    return null;
  }
};

/** Once more when the connection broke before an answer: a kept-alive connection the server
 * closed as it was reused (its 5 s keep-alive timeout), not an answer of Quarry's. */
async function retrying<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    // test/http/client.ts prefixes the method and path and appends the cause, so match the words.
    if (!(err instanceof TypeError && /(^|: )fetch failed(:|$)/.test(err.message))) throw err;
    return fn();
  }
}

function callersOf(o: Operation): Array<fc.WeightedArbitrary<Caller>> {
  const w = (c: Caller, weight: number) => ({ arbitrary: fc.constant(c), weight });
  const sec = JSON.stringify(o.op.security ?? []);
  if (sec.includes('s3AccessKey')) return [w('s3', 4), w('s3-query', 2), w('s3-bad', 2), w('none', 1), w('admin', 1)];
  if (sec === '[]') return [w('none', 4), w('admin', 1), w('user', 1)];
  return [
    w('admin', 4),
    w('user', 2),
    w('agent', o.path.startsWith('/node/') || o.path.startsWith('/ceph/') ? 3 : 1),
    w('none', 1),
    w('write-token', 1),
    w('read-token', 1),
  ];
}

function drawArb(o: Operation, pools: Pools): fc.Arbitrary<Draw> {
  const params = (o.op.parameters ?? []).filter((p) => p.in === 'path');
  const query = (o.op.parameters ?? []).filter((p) => p.in === 'query');
  const paramArb = fc.record(
    Object.fromEntries(
      params.map((p) => [
        p.name,
        fc.oneof(
          { arbitrary: validish(p.schema, pools).map((value) => ({ value, raw: false })), weight: 8 },
          { arbitrary: invalid(p.schema, pools).map((value) => ({ value, raw: false })), weight: 2 },
          // Sent as is, not encoded: traversal and encoded separators reach the router.
          {
            arbitrary: fc
              .constantFrom('..', '.', '%2e%2e', 'a%2Fb', '%00', '..%2F..%2Fetc', '%2F', 'x%5C..')
              .map((value) => ({ value, raw: true })),
            weight: 1,
          },
        ),
      ]),
    ),
  );
  const queryArb = fc.oneof(
    {
      arbitrary: fc.record(Object.fromEntries(query.map((p) => [p.name, validish(p.schema, pools)])), {
        requiredKeys: query.filter((p) => p.required).map((p) => p.name),
      }),
      weight: 8,
    },
    { arbitrary: fc.record(Object.fromEntries(query.map((p) => [p.name, invalid(p.schema, pools)])), { requiredKeys: [] }), weight: 2 },
    // An unknown query parameter: 400 on every route.
    {
      arbitrary: fc
        .tuple(fc.constantFrom('unknown', 'debug', 'admin', '__proto__', 'limit'), fc.constantFrom(...NASTY_STRINGS))
        .map(([k, v]) => ({ [k]: v })),
      weight: 1,
    },
  );
  const content = o.op.requestBody?.content ?? {};
  const json = content['application/json']?.schema;
  const textTypes = Object.keys(content).filter((t) => t !== 'application/json');
  const bodies: Array<fc.WeightedArbitrary<Draw['body']>> = [
    { arbitrary: fc.constant({ kind: 'none' as const }), weight: o.method === 'get' ? 20 : 1 },
  ];
  if (o.method !== 'get') {
    bodies.push(
      {
        arbitrary: validish(json ?? { type: 'object', properties: {} }, pools).map((value) => ({ kind: 'json' as const, value })),
        weight: 6,
      },
      {
        arbitrary: invalid(json ?? { type: 'object', properties: {} }, pools).map((value) => ({ kind: 'json' as const, value })),
        weight: 4,
      },
      {
        arbitrary: fc
          .constantFrom('{"a":', '[1,2', 'null', '"x"', '{"__proto__":{"isAdmin":true}}', '\u0000')
          .map((value) => ({ kind: 'raw' as const, value, type: 'application/json' })),
        weight: 1,
      },
      {
        arbitrary: fc
          .constantFrom('text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'application/xml')
          .map((type) => ({ kind: 'raw' as const, value: 'a=b', type })),
        weight: 1,
      },
    );
    if (textTypes.length) {
      // Templates that compile and then fail to render: routes that render them must say 422.
      const text = fc.oneof(
        { arbitrary: fc.string({ maxLength: 200 }), weight: 2 },
        { arbitrary: fc.constantFrom(...NASTY_STRINGS), weight: 1 },
        {
          arbitrary: fc.constantFrom(
            '<%= 1 + 1 %>',
            '<% throw new Error("x") %>',
            '<%= node.missing.field %>',
            '<%= ',
            'kind: Node\n',
            '---\n- a\n',
          ),
          weight: 3,
        },
      );
      bodies.push({
        arbitrary: fc.tuple(text, fc.constantFrom(...textTypes)).map(([value, type]) => ({ kind: 'text' as const, value, type })),
        weight: 8,
      });
    }
  }
  return fc.record({ caller: fc.oneof(...callersOf(o)), params: paramArb, query: queryArb, body: fc.oneof(...bodies) });
}

/** JSON.stringify as it behaves: undefined (and a function) give undefined, which lib.d.ts's
 * `string` does not say. */
const stringify = (v: unknown): string | undefined => JSON.stringify(v);

function queryString(q: Record<string, unknown>): string {
  const s = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) {
    if (v === undefined) continue;
    if (Array.isArray(v)) v.slice(0, 50).forEach((x) => s.append(k, typeof x === 'string' ? x : JSON.stringify(x)));
    else s.append(k, typeof v === 'string' ? v : (stringify(v) ?? ''));
  }
  const text = s.toString();
  return text ? `?${text}` : '';
}

function urlOf(o: Operation, d: Draw, extraQuery: Record<string, string> = {}): string {
  const path = o.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const p = d.params[name];
    const v = typeof p?.value === 'string' ? p.value : (stringify(p?.value) ?? '');
    return p?.raw ? v : encodeURIComponent(v.slice(0, 2000));
  });
  return path + queryString({ ...d.query, ...extraQuery });
}

test('fuzz every route of /openapi.json: no 5xx, no leak, documented statuses, no state change from a 4xx', async (t) => {
  t.timeout(600_000);
  const seed = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
  const total = Number(process.env.FUZZ_REQUESTS ?? 10_000);
  t.log(`FUZZ_SEED=${seed}`);

  // A lab with a cluster in quorum, a RADOS gateway and an RGW user, a non-admin user, a victim.
  const { q, c: admin, ids } = await cluster(t);
  t.is((await admin.post('/gateways/rgw/deploy', { nodeId: ids[0] })).status, 200);
  await waitFor(
    'gateway running',
    async () => ((await admin.get('/gateways/rgw')).json as Array<{ running: boolean }>).some((g) => g.running),
    30_000,
  );
  const rgw = await waitFor(
    'RGW user',
    async () => {
      const r = await admin.post<{ keys: Array<{ accessKey: string; secretKey: string }> }>('/gateways/rgw/users', {
        userId: 'fuzz',
        displayName: 'fuzz',
      });
      return r.status === 201 ? r.json.keys[0] : undefined;
    },
    30_000,
  );
  // fuzz-out-*: the sessions that log out, apart from the fuzzed ones, whose logins a wrong old
  // password sent to POST /user/password may throttle.
  for (const u of ['fuzz-user', 'fuzz-victim', 'fuzz-out-user', 'fuzz-out-admin']) {
    t.is(
      (
        await admin.post('/users', {
          username: u,
          password: `${u}-password`,
          name: u,
          email: `${u}@example.com`,
          isAdmin: u === 'fuzz-out-admin',
        })
      ).status,
      201,
    );
  }
  const agentNode = await q.nodeOf(1);
  let agentSecret = q.lab!.machine(1).disk.agentSecret?.secret ?? '';
  t.truthy(agentSecret);
  const hostnames = (await q.nodes()).map((n) => n.spec.hostname);
  const gatewayHosts = await Promise.all(hostnames.map(async (h) => new URL(await q.s3.lab!.url(h)).host));

  // A specs file for GET/PUT/DELETE /specs/files/{name} to find (its name is in the pools).
  t.is(
    (await admin.request('PUT', '/specs/files/fuzz.yaml', { body: '# fuzz\n', headers: { 'content-type': 'application/yaml' } })).status,
    200,
  );

  // Quiet: from here only requests write specs.
  q.lab!.stop();
  await q.manager.stop();

  const relogin = async (caller: Caller): Promise<Client | null> => {
    if (caller === 'admin') return retrying(() => login(q, 'admin', ADMIN_PASSWORD));
    if (caller === 'user') return retrying(() => login(q, 'fuzz-user', 'fuzz-user-password'));
    if (caller === 'agent') return retrying(() => login(q, `agent:${agentNode.id}`, agentSecret));
    return null;
  };
  const sessions = new Map<Caller, Client>([
    ['admin', admin],
    ['user', (await relogin('user'))!],
    ['agent', (await relogin('agent'))!],
  ]);
  // API tokens: made again from their owner's session when one was revoked (a fuzzed DELETE).
  const tokens = new Map<Caller, { id: string; token: string }>();
  const newToken = async (caller: Caller): Promise<void> => {
    const ownerCaller: Caller = caller === 'write-token' ? 'admin' : 'user';
    const create = () =>
      retrying(() =>
        sessions.get(ownerCaller)!.post<{ id: string; token: string }>('/user/tokens', { name: caller, scope: caller.split('-')[0] }),
      );
    let r = await create();
    // The owner's session may have ended meanwhile (a fuzzed password change): log in again.
    if (r.status === 401) {
      sessions.set(ownerCaller, (await relogin(ownerCaller))!);
      r = await create();
    }
    if (r.status !== 201) throw new Error(`POST /user/tokens for ${caller}: ${r.status} ${r.text}`);
    tokens.set(caller, r.json);
  };
  for (const c of TOKEN_CALLERS) await newToken(c);

  const doc = (await admin.get('/openapi.json')).json as { paths: Record<string, Record<string, Operation['op']>> };
  const ops: Operation[] = Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, op]) => ({ method, path, op })),
  );
  const users = (await admin.get('/users')).json as Array<{ id: string; username: string }>;
  const victim = users.find((u) => u.username === 'fuzz-victim')!.id;
  const disks = ((await admin.get('/disks')).json as Array<{ id: string }>).map((d) => d.id);
  const templates = ((await admin.get('/templates')).json as Array<{ name: string }>).map((x) => x.name);
  const pools: Pools = {
    uuids: [...ids, ...disks.slice(0, 6), victim, ...[...tokens.values()].map((x) => x.id)],
    strings: [...templates, 'fuzz-bucket', 'fuzz.yaml'],
  };

  // Secrets, read from the store (and refreshed after writes that may make new ones).
  const signingKey = (await q.store.get<{ key: string }>('SigningKey', 'default'))?.spec.key ?? '';
  let secrets: string[] = [];
  const readSecrets = async (): Promise<void> => {
    const found = [ADMIN_PASSWORD, signingKey, agentSecret, rgw.secretKey, 'fuzz-user-password'];
    for (const k of await q.store.list<unknown, { key?: string }>('Keyring')) found.push(k.status.key ?? '');
    for (const u of await q.store.list<{ passwordHash?: string }>('User')) found.push(u.spec.passwordHash ?? '');
    for (const a of await q.store.list<{ secretHash?: string; initialSecret?: string | null }>('AgentCredential'))
      found.push(a.spec.secretHash ?? '', a.spec.initialSecret ?? '');
    for (const s of await q.store.list<unknown, { secretKey?: string }>('RgwUserSecret')) found.push(s.status.secretKey ?? '');
    for (const x of await q.store.list<{ secretHash?: string }>('ApiToken')) found.push(x.spec.secretHash ?? '');
    for (const x of tokens.values()) found.push(x.token, x.token.slice('qry_'.length + 37));
    secrets = found.filter((s) => s.length >= 12);
  };
  await readSecrets();
  const internals: string[] = [...gatewayHosts, q.config.stateDir, process.cwd()];

  // Every added, deleted or re-specified object, by revision.
  const specChanges: Array<{ revision: number; what: string }> = [];
  let delivered = q.store.revision();
  const unwatch = q.store.watch(q.store.revision(), (e: StoreEvent) => {
    delivered = e.revision;
    if (e.type === 'relist') specChanges.push({ revision: e.revision, what: 'relist' });
    else if (e.type !== 'modified' || e.specChanged)
      specChanges.push({ revision: e.revision, what: `${e.type} ${e.doc.kind} ${e.doc.id}` });
  });
  t.teardown(unwatch);

  const perOp = Math.ceil(total / ops.length);
  const plan = ops.map((o, i) => ({ o, draws: fc.sample(drawArb(o, pools), { seed: seed + i, numRuns: perOp }) }));
  // Logging out ends the session it is sent with: each logout gets a session of its own, opened
  // now, before the fuzzed failed logins throttle the address (fuzz-out-*: accounts apart from the
  // fuzzed ones, whose logins a wrong old password sent to POST /user/password throttles too).
  const logouts = new Map<Caller, Client[]>([
    ['admin', []],
    ['user', []],
  ]);
  for (const { o, draws } of plan) {
    if (o.path !== '/user/logout') continue;
    for (const d of draws) {
      const name = d.caller === 'admin' ? 'fuzz-out-admin' : 'fuzz-out-user';
      if (d.caller === 'admin' || d.caller === 'user')
        logouts.get(d.caller)!.push(await retrying(() => login(q, name, `${name}-password`)));
    }
  }

  /** The session a draw is sent with. */
  const sessionFor = (o: Operation, d: Draw): Client | null => {
    if (!['admin', 'user', 'agent'].includes(d.caller)) return null;
    if (o.path === '/user/logout' && d.caller !== 'agent') return logouts.get(d.caller)!.pop()!;
    return sessions.get(d.caller) ?? null;
  };

  const send = async (o: Operation, d: Draw, client: Client | null): Promise<Answer> => {
    const headers: Record<string, string> = {};
    const extra: Record<string, string> = {};
    if (d.caller === 's3') Object.assign(headers, { 'X-S3-Access-Key': rgw.accessKey, 'X-S3-Secret-Key': rgw.secretKey });
    else if (d.caller === 's3-query') Object.assign(extra, { accessKey: rgw.accessKey, secretKey: rgw.secretKey });
    else if (d.caller === 's3-bad') Object.assign(headers, { 'X-S3-Access-Key': rgw.accessKey, 'X-S3-Secret-Key': 'not-the-secret' });
    if (client?.jar.size) headers.cookie = [...client.jar].map(([k, v]) => `${k}=${v}`).join('; ');
    const token = tokens.get(d.caller);
    if (token) headers.authorization = `Bearer ${token.token}`;
    let body: string | undefined;
    if (d.body.kind === 'json') {
      let value = d.body.value;
      // A long-poll may wait up to 30 s by the schema; the fuzzer does not wait that long.
      if (o.path === '/node/runs/claim' && value && typeof value === 'object' && typeof (value as { waitMs?: unknown }).waitMs === 'number')
        value = { ...value, waitMs: Math.min((value as { waitMs: number }).waitMs, 50) };
      body = stringify(value) ?? 'null';
      headers['content-type'] = 'application/json';
    } else if (d.body.kind !== 'none') {
      body = d.body.value;
      headers['content-type'] = d.body.type;
    }
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(), o.path === '/gateways/rgw/users' && o.method === 'post' ? PATIENCE_RGW_USER_MS : 20_000);
    try {
      const res = await retrying(() =>
        fetch(new URL(urlOf(o, d, extra), q.url), {
          method: o.method.toUpperCase(),
          headers,
          body,
          signal: abort.signal,
          redirect: 'manual',
        }),
      );
      const type = (res.headers.get('content-type') ?? '').split(';')[0]!.trim();
      // A stream is judged by its status and headers; its body never ends.
      const text = type === 'text/event-stream' ? (abort.abort(), '') : await res.text();
      if (client && o.path !== '/user/logout') {
        for (const c of res.headers.getSetCookie().map(parseSetCookie)) {
          if (c.value === '') client.jar.delete(c.name);
          else client.jar.set(c.name, c.value);
        }
      }
      return { status: res.status, type, text };
    } finally {
      clearTimeout(timer);
    }
  };

  const failures: string[] = [];
  const fail = (o: Operation, d: Draw, a: Answer, why: string): void => {
    if (failures.length < 40)
      failures.push(
        `${why}: ${o.method.toUpperCase()} ${urlOf(o, d).slice(0, 300)} as ${d.caller}, body ${JSON.stringify(d.body).slice(0, 300)} → ${a.status} ${a.text.slice(0, 400)}`,
      );
  };

  let sent = 0;
  const statuses = new Map<number, number>();
  // Interleaved, in an order of the seed's: a template broken by one request is rendered by later
  // ones of other routes, a user created by one is read by another.
  const order = fc.sample(
    fc.shuffledSubarray(
      plan.flatMap(({ o, draws }) => draws.map((d) => ({ o, d }))),
      { minLength: perOp * ops.length },
    ),
    { seed, numRuns: 1 },
  )[0]!;
  for (const { o, d } of order) {
    const key = `${o.method.toUpperCase()} ${o.path}`;
    const documented = Object.keys(o.op.responses).map(Number);
    const client = sessionFor(o, d);
    const before = q.store.revision();
    let a: Answer;
    try {
      a = await send(o, d, client);
    } catch (err) {
      const waiting = (err as Error).name === 'AbortError' && o.path === '/gateways/rgw/users';
      if (!waiting) fail(o, d, { status: 0, type: '', text: '' }, `no answer (${String(err)})`);
      sent += 1;
      continue;
    }
    sent += 1;
    statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
    const after = q.store.revision();
    const problem = a.status >= 400 ? problemOf(a) : null;

    if (a.status >= 500 && !(a.status === 503 && AVAILABILITY_CODES.has(String(problem?.code)))) fail(o, d, a, '5xx');
    if (a.status >= 400 && (!problem || typeof problem.code !== 'string')) fail(o, d, a, 'not problem+json with a code');
    if (a.status >= 400 && a.text.length > MAX_PROBLEM_BYTES) fail(o, d, a, `problem of ${a.text.length} bytes`);
    // A raw, empty or non-string segment may make the path another route's, or none: its status
    // is then judged by the other properties only.
    const pathChanged = Object.values(d.params).some((p) => p.raw || typeof p.value !== 'string' || ['', '.', '..'].includes(p.value));
    // 431 is the HTTP server's, before any operation (the document's description says so).
    if (!documented.includes(a.status) && !pathChanged && a.status !== 431) fail(o, d, a, `undocumented status ${a.status}`);
    const media = o.op.responses[String(a.status)]?.content;
    if (a.status < 300 && a.status !== 204 && media && !pathChanged && !(a.type in media))
      fail(o, d, a, `undocumented media type ${a.type}`);
    if (/\n\s+at \S|\bat \S+ \(\S+:\d+:\d+\)|node:internal|\/(dist|src)\/\S+\.(js|ts)\b/.test(a.text))
      fail(o, d, a, 'stack trace or source path');
    for (const s of internals) if (a.text.includes(s)) fail(o, d, a, `internal ${s.slice(0, 40)}`);
    if (!(a.status < 300 && SECRET_ANSWERS.has(key)))
      for (const s of secrets) if (a.text.includes(s)) fail(o, d, a, `secret ${s.slice(0, 4)}…`);

    if (a.status >= 400 && a.status < 500) {
      await waitFor('the watch to catch up', () => delivered >= after, 10_000);
      const changed = specChanges.filter((c) => c.revision > before && c.revision <= after);
      if (changed.length) fail(o, d, a, `4xx changed ${changed.map((c) => c.what).join(', ')}`);
    }
    if (a.status < 300 && o.method !== 'get') {
      if (key === 'POST /node/credential' && d.caller === 'agent') agentSecret = (JSON.parse(a.text) as { secret: string }).secret;
      await readSecrets();
    }
    // A token that was revoked is made again, and a session that ended (a password change, a
    // revocation) is opened again.
    if (a.status === 401 && TOKEN_CALLERS.includes(d.caller)) {
      await newToken(d.caller);
      await readSecrets();
    } else if (
      a.status === 401 &&
      ['admin', 'user', 'agent'].includes(d.caller) &&
      !key.startsWith('POST /user/') &&
      !o.path.startsWith('/s3/') &&
      !o.path.startsWith('/images/{imageId}/files')
    ) {
      sessions.set(d.caller, (await relogin(d.caller))!);
    }
  }
  t.log(`seed ${seed}: ${sent} requests over ${ops.length} operations; statuses ${JSON.stringify(Object.fromEntries(statuses))}`);
  t.true(sent >= total, `${sent} requests`);
  t.deepEqual(failures, [], `FUZZ_SEED=${seed}`);
});
