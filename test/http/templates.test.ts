// The template endpoints through HTTP against a whole Quarry: listing, sources and their
// versions, replacement (compiled first), settings, the context preview, names that would
// leave the folder, who may write, and the render time limit.
import test from 'ava';
import { readFile, readdir } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { defaultTemplatesDir } from '../../src/render/ceph-conf.js';
import { Client } from './client.js';
import type { ProblemBody } from './bodies.js';
import { admin, login } from './agent-helpers.js';
import { allActive, startLab } from '../lab/harness.js';

/** A template as GET /templates lists it. */
interface Listed {
  name: string;
  path: string;
  postHook: string;
  description: string;
  version: number;
}

/** The context POST /templates/context answers, the fields read here. */
interface Context {
  node: unknown;
  master: { url: string };
  cluster: { fsid: string };
  network: unknown;
  image: { kernelUrl: string };
}

const put = <T = unknown>(c: Client, path: string, source: string) =>
  c.request<T>('PUT', path, { body: source, headers: { 'content-type': 'text/plain' } });

test('templates GET /templates lists every shipped templates/*.ejs with its settings', async (t) => {
  const q = await startLab(t, 0);
  const c = await admin(q);
  const shipped = (await readdir(defaultTemplatesDir))
    .filter((f) => f.endsWith('.ejs'))
    .map((f) => f.slice(0, -4))
    .sort();
  const r = await c.get<Listed[]>('/templates');
  t.is(r.status, 200);
  t.deepEqual(
    r.json.map((x) => x.name),
    shipped,
  );
  for (const name of ['ipxe-boot', 'ipxe-default', 'cloud-init', 'quarry-agent.service', 'ceph.conf']) t.true(shipped.includes(name), name);
  const unit = r.json.find((x) => x.name === 'quarry-agent.service')!;
  t.is(unit.path, '/etc/systemd/system/quarry-agent.service');
  t.regex(unit.postHook, /systemctl daemon-reload/);
  t.regex(unit.description, /agent/);
  t.is(unit.version, 1);
  t.is((await new Client(q.url).get('/templates')).status, 401);
});

test('templates a replaced source is a new version and the old one stays readable', async (t) => {
  const q = await startLab(t, 0);
  const c = await admin(q);
  const file = await readFile(new URL('ipxe-default.ejs', defaultTemplatesDir), 'utf8');
  const v1 = await c.get('/templates/render/ipxe-default');
  t.is(v1.status, 200);
  t.regex(v1.headers.get('content-type') ?? '', /^text\/plain/);
  t.is(v1.text, file);
  t.is(v1.headers.get('x-template-version'), '1');
  const next = '#!ipxe\necho custom default\nchain <%- master.url %>/boot/config?mac=${net0/mac}\n';
  const r = await put(c, '/templates/ipxe-default', next);
  t.is(r.status, 200);
  t.deepEqual(r.json, { status: 'updated', version: 2 });
  const now = await c.get('/templates/render/ipxe-default');
  t.is(now.text, next);
  t.is(now.headers.get('x-template-version'), '2');
  const old = await c.get('/templates/render/ipxe-default?version=1');
  t.is(old.text, file);
  t.is(old.headers.get('x-template-current-version'), '2');
  t.is((await c.get('/templates/render/ipxe-default?version=3')).status, 404);
  // What is served follows the current version.
  const served = await new Client(q.url).get('/boot/default');
  t.regex(served.text, /^#!ipxe\necho custom default\nchain http:\/\/127\.0\.0\.1:\d+\/boot\/config\?mac=\$\{net0\/mac\}\n$/);
  t.is((await c.get<Listed[]>('/templates')).json.find((x) => x.name === 'ipxe-default')?.version, 2);
});

test('templates a PUT of ceph.conf changes GET /ceph/cluster/config and its hash', async (t) => {
  const q = await startLab(t, 0);
  const c = await admin(q);
  const before = Buffer.from((await c.get<{ config: string }>('/ceph/cluster/config')).json.config, 'base64').toString();
  t.regex(before, /^# Rendered by Quarry/);
  const source = (await c.get('/templates/render/ceph.conf')).text.replace('[osd]', '[osd]\nosd_max_backfills = 2');
  t.is((await put(c, '/templates/ceph.conf', source)).status, 200);
  const after = Buffer.from((await c.get<{ config: string }>('/ceph/cluster/config')).json.config, 'base64').toString();
  t.regex(after, /\[osd\]\nosd_max_backfills = 2\n/);
  t.is((await c.get<{ hash: string }>('/ceph/cluster/config/hash')).json.hash, createHash('sha256').update(after).digest('hex'));
  // The public render of ceph.conf sees the same context.
  t.is((await new Client(q.url).get('/templates/rendered/ceph.conf')).text, after);
});

test('templates a source that does not compile is refused with its line, and nothing changes', async (t) => {
  const q = await startLab(t, 0);
  const c = await admin(q);
  const cases: Array<[string, number]> = [
    ['line one\nline two\n<% if (node) { %>\nfour <%= node.id ) %>\n<% } %>\n', 4],
    ['#!ipxe\n\n<%= master.url \nchain x\n', 3],
    ['a\nb\nc\n<% for (const x of [1]) { %>\n', 5],
  ];
  for (const [source, line] of cases) {
    const r = await put<ProblemBody>(c, '/templates/cloud-init', source);
    t.is(r.status, 400, source);
    t.is(r.json.code, 'TEMPLATE_INVALID');
    t.regex(r.json.detail, new RegExp(`line ${line}\\b`), source);
    t.deepEqual(
      r.json.errors.map((e) => e.path),
      [`/body/line/${line}`],
    );
  }
  const now = await c.get('/templates/render/cloud-init');
  t.is(now.headers.get('x-template-version'), '1');
  t.is(now.text, await readFile(new URL('cloud-init.ejs', defaultTemplatesDir), 'utf8'));
  const empty = await put(c, '/templates/cloud-init', '');
  t.is(empty.status, 400);
});

test('templates names that could leave the templates folder are refused', async (t) => {
  const q = await startLab(t, 0);
  const c = await admin(q);
  // fetch would resolve `..` and `%2E%2E` away; a raw request sends them as they are.
  const { hostname, port } = new URL(q.url);
  const cookie = [...c.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const raw = (path: string) =>
    new Promise<number>((resolve, reject) => {
      request({ hostname, port, path, headers: { cookie } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      })
        .on('error', reject)
        .end();
    });
  for (const name of ['..', '%2E%2E', '%2e%2e']) {
    t.is(await raw(`/templates/render/${name}`), 400, name);
    t.is(await raw(`/templates/rendered/${name}`), 400, name);
  }
  for (const name of ['..%2F..%2Fetc%2Fpasswd', 'a%00b', '.hidden', 'a..b', 'ceph.conf%2F..', 'x'.repeat(65)]) {
    for (const [method, path] of [
      ['GET', `/templates/render/${name}`],
      ['GET', `/templates/rendered/${name}`],
      ['PUT', `/templates/${name}`],
    ] as const) {
      const r = method === 'PUT' ? await put(c, path, 'x') : await c.get(path);
      t.true(r.status === 400 || r.status === 404, `${method} ${path}: ${r.status}`);
      t.not(r.status, 200);
    }
    t.is((await c.get<ProblemBody | undefined>(`/templates/render/${name}`)).json?.code, 'VALIDATION_FAILED', name);
  }
  t.is((await c.get('/templates/render/nosuch')).status, 404);
  t.is((await new Client(q.url).get('/templates/rendered/nosuch')).status, 404);
});

test('templates only admins replace sources or change settings; settings answer updated', async (t) => {
  const q = await startLab(t, 0);
  const c = await admin(q);
  t.is((await c.post('/users', { username: 'viewer', password: 'viewer-password-1', name: 'V', email: 'v@example.com' })).status, 201);
  const viewer = await login(q, 'viewer', 'viewer-password-1');
  t.is((await put(viewer, '/templates/ipxe-default', '#!ipxe\n')).status, 403);
  t.is((await viewer.request('PUT', '/templates/ipxe-default/settings', { json: { path: '/x' } })).status, 403);
  t.is((await put(new Client(q.url), '/templates/ipxe-default', '#!ipxe\n')).status, 401);
  t.is((await viewer.get('/templates/render/ipxe-default')).status, 200);
  const s = await c.request('PUT', '/templates/cloud-init/settings', { json: { path: '/srv/user-data', postHook: 'cloud-init clean' } });
  t.is(s.status, 200);
  t.deepEqual(s.json, { status: 'updated' });
  const listed = (await c.get<Listed[]>('/templates')).json.find((x) => x.name === 'cloud-init');
  t.like(listed, { path: '/srv/user-data', postHook: 'cloud-init clean', version: 1 });
  t.is((await c.request('PUT', '/templates/cloud-init/settings', { json: { owner: 'x' } })).status, 400);
  t.is((await c.request('PUT', '/templates/nosuch/settings', { json: { path: '/x' } })).status, 404);
  t.is((await c.request('PUT', '/templates/cloud-init', { body: 'x', headers: { 'content-type': 'application/json' } })).status, 415);
});

test('templates a render past its time limit is stopped with a clear error while the server keeps answering', async (t) => {
  // Long enough for a loaded test process (several labs at once) to answer the list meanwhile.
  const q = await startLab(t, 0, { env: { TEMPLATE_TIMEOUT_MS: '5000' } });
  const c = await admin(q);
  t.is((await put(c, '/templates/spin', '<% while (true) {} %>')).status, 200);
  const order: string[] = [];
  const spinning = new Client(q.url).get<ProblemBody>('/templates/rendered/spin').then((r) => (order.push('spin'), r));
  // Asked after the endless render started, answered before it was stopped.
  await new Promise((r) => setTimeout(r, 100));
  const list = await c.get('/templates');
  order.push('list');
  const r = await spinning;
  t.is(list.status, 200);
  t.deepEqual(order, ['list', 'spin']);
  t.is(r.status, 422);
  t.is(r.json.code, 'TEMPLATE_TIMEOUT');
  t.regex(r.json.detail, /spin did not finish rendering within 5000 ms/);
  // A fresh thread renders the next one.
  t.regex((await new Client(q.url).get('/boot/default')).text, /^#!ipxe/);
  t.is((await put(c, '/templates/boom', 'a\n<%= nosuch.field %>\n')).status, 200);
  const boom = await new Client(q.url).get<ProblemBody>('/templates/rendered/boom');
  t.is(boom.status, 422);
  t.is(boom.json.code, 'TEMPLATE_FAILED');
  t.regex(boom.json.detail, /line 2.*nosuch is not defined/);
  // No template reads files of the master.
  t.is((await put(c, '/templates/peek', "<%- include('/etc/passwd') %>")).status, 200);
  const peek = await new Client(q.url).get<ProblemBody>('/templates/rendered/peek');
  t.is(peek.status, 422);
  t.regex(peek.json.detail, /include\(\) is not available/);
  t.false(peek.text.includes('root:'));
});

test('templates POST /templates/context answers the requested kinds for a node', async (t) => {
  const q = await startLab(t, 1);
  const [node] = await allActive(q, 1);
  const c = await admin(q);
  const r = await c.post<Context>('/templates/context', { nodeId: node!.id, kinds: ['node', 'cluster', 'master', 'image', 'network'] });
  t.is(r.status, 200);
  t.deepEqual(Object.keys(r.json).sort(), ['cluster', 'image', 'master', 'network', 'node']);
  t.like(r.json.node, { id: node!.id, hostname: node!.spec.hostname, mac: node!.spec.macs[0], status: 'active' });
  t.regex(r.json.master.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  t.regex(r.json.cluster.fsid, /^[0-9a-f-]{36}$/);
  t.is(r.json.network, null);
  t.regex(r.json.image.kernelUrl, /^http:\/\/127\.0\.0\.1:\d+\/images\/lab\/files\/vmlinuz\?expires=\d+&signature=[0-9a-f]{64}$/);
  t.deepEqual(Object.keys((await c.post<Context>('/templates/context', { nodeId: node!.id, kinds: ['master'] })).json), ['master']);
  t.is((await c.post('/templates/context', { nodeId: '00000000-0000-4000-8000-000000000000', kinds: ['node'] })).status, 404);
  t.is((await c.post('/templates/context', { nodeId: node!.id, kinds: ['keyrings'] })).status, 400);
  t.is((await c.post('/templates/context', { nodeId: node!.id })).status, 400);
});
