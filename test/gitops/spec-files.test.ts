// GET/PUT/DELETE /specs/files over a lab: a write lands in the folder and is applied by it, a bad
// one is refused with line and column and leaves the folder as it was.
import test from 'ava';
import { readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ProblemBody } from '../http/bodies.js';
import { Client } from '../http/client.js';
import { network, specsLab } from './helpers.js';

interface Written {
  file: string;
  applied: { state: string; objects: Array<{ kind: string; name: string }> };
  plan: { created: Array<{ kind: string; name: string }> };
}
interface Listed {
  files: Array<{ file: string; size: number | null; state: string | null; lastError: { errors: Array<{ line: number }> } | null }>;
}

const YAML = { 'content-type': 'application/yaml' };

test('spec files PUT writes the file into the folder, and answers what the folder applied', async (t) => {
  const q = await specsLab(t, 0);
  const c = await q.admin();
  const text = network('lab', '10.9.0.0/16', '10.9.0.1');
  const r = await c.request<Written>('PUT', '/specs/files/net.yaml', { body: text, headers: YAML });
  t.is(r.status, 200, r.text);
  t.is(r.json.file, 'net.yaml');
  t.is(r.json.applied.state, 'applied');
  t.deepEqual(
    r.json.applied.objects.map((o) => `${o.kind}/${o.name}`),
    ['Network/10.9.0.0/16'],
  );
  t.deepEqual(
    r.json.plan.created.map((o) => `${o.kind}/${o.name}`),
    ['Network/10.9.0.0/16'],
  );
  t.is(await readFile(join(q.dir, 'net.yaml'), 'utf8'), text);
  t.deepEqual(
    (await readdir(q.dir)).filter((f) => f.startsWith('.')),
    [],
    'no temporary file is left',
  );
  const again = await c.request<Written>('PUT', '/specs/files/net.yaml', { body: text, headers: YAML });
  t.is(again.status, 200, 'the same text again is applied again (and changes nothing)');
  t.deepEqual(again.json.plan.created, []);
  const one = await c.request('GET', '/specs/files/net.yaml');
  t.is(one.status, 200);
  t.is(one.text, text);
  const list = await c.get<Listed>('/specs/files');
  t.like(
    list.json.files.find((f) => f.file === 'net.yaml'),
    { size: Buffer.byteLength(text), state: 'applied', lastError: null },
  );
});

test('spec files PUT of a bad file is 400 SPEC_INVALID with line and column, and writes nothing', async (t) => {
  const q = await specsLab(t, 0);
  const c = await q.admin();
  const good = network('lab', '10.9.0.0/16', '10.9.0.1');
  t.is((await c.request('PUT', '/specs/files/net.yaml', { body: good, headers: YAML })).status, 200);
  const bad = network('lab', '10.9.0.0/16', 'not-an-address');
  const r = await c.request<ProblemBody & { errors: Array<{ path: string; line: number; column: number }> }>(
    'PUT',
    '/specs/files/net.yaml',
    {
      body: bad,
      headers: YAML,
    },
  );
  t.is(r.status, 400);
  t.is(r.json.code, 'SPEC_INVALID');
  t.like(r.json.errors[0], { path: '/body/spec/gateway', line: 6 });
  t.true(r.json.errors[0]!.column > 1);
  t.is(await readFile(join(q.dir, 'net.yaml'), 'utf8'), good, 'the file on disk is unchanged');
  const broken = await c.request<ProblemBody>('PUT', '/specs/files/new.yaml', { body: 'kind: [', headers: YAML });
  t.is(broken.status, 400);
  t.false((await readdir(q.dir)).includes('new.yaml'));
});

test('spec files names with a path, .., a hidden name or another extension are refused', async (t) => {
  const q = await specsLab(t, 0);
  const c = await q.admin();
  const text = network('lab', '10.9.0.0/16', '10.9.0.1');
  for (const name of ['..%2Fx.yaml', '.hidden.yaml', 'a..yaml', 'x.json', 'sub%2Fx.yaml', 'x.yaml%00']) {
    const r = await c.request<ProblemBody>('PUT', `/specs/files/${name}`, { body: text, headers: YAML });
    t.is(r.status, 400, name);
  }
  t.deepEqual(await readdir(q.dir), []);
});

test('spec files DELETE removes the file and the folder prunes what it declared', async (t) => {
  const q = await specsLab(t, 0);
  const c = await q.admin();
  t.is((await c.request('PUT', '/specs/files/net.yaml', { body: network('lab', '10.9.0.0/16', '10.9.0.1'), headers: YAML })).status, 200);
  const r = await c.request<{ applied: { state: string } }>('DELETE', '/specs/files/net.yaml');
  t.is(r.status, 200, r.text);
  t.is(r.json.applied.state, 'deleted');
  t.deepEqual(await q.store.list('Network'), []);
  t.is((await c.request('DELETE', '/specs/files/net.yaml')).status, 404);
  t.is((await c.request('GET', '/specs/files/net.yaml')).status, 404);
});

test('spec files writes and the text need an admin', async (t) => {
  const q = await specsLab(t, 0);
  const c = await q.admin();
  await c.post('/users', { username: 'viewer', password: 'viewer-password', name: 'Viewer', email: 'viewer@example.com' });
  t.is((await c.request('PUT', '/specs/files/net.yaml', { body: network('lab', '10.9.0.0/16', '10.9.0.1'), headers: YAML })).status, 200);
  const viewer = new Client(q.url);
  t.is((await viewer.post('/user/login', { username: 'viewer', password: 'viewer-password' })).status, 200);
  t.is((await viewer.request('PUT', '/specs/files/x.yaml', { body: network('x', '10.8.0.0/16', '10.8.0.1'), headers: YAML })).status, 403);
  t.is((await viewer.request('GET', '/specs/files/net.yaml')).status, 403);
  t.is((await viewer.request('DELETE', '/specs/files/net.yaml')).status, 403);
  t.is((await viewer.get('/specs/files')).status, 200);
});

test('spec files a read token lists and plans, and may not write', async (t) => {
  const q = await specsLab(t, 0);
  const c = await q.admin();
  const made = async (scope: string) => (await c.post<{ token: string }>('/user/tokens', { name: `t-${scope}`, scope })).json.token;
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const read = await made('read');
  const text = network('lab', '10.9.0.0/16', '10.9.0.1');
  const refused = await c.request<ProblemBody>('PUT', '/specs/files/net.yaml', { body: text, headers: { ...YAML, ...bearer(read) } });
  t.is(refused.status, 403);
  t.regex(refused.json.detail, /read-only/);
  t.deepEqual(await readdir(q.dir), []);
  const bare = new Client(q.url);
  t.is((await bare.request('GET', '/specs/files', { headers: bearer(read) })).status, 200);
  t.is((await bare.request('POST', '/specs/plan?file=net.yaml', { body: text, headers: { ...YAML, ...bearer(read) } })).status, 200);
  const write = await made('write');
  t.is((await bare.request('PUT', '/specs/files/net.yaml', { body: text, headers: { ...YAML, ...bearer(write) } })).status, 200);
  t.is((await bare.request('DELETE', '/specs/files/net.yaml', { headers: bearer(read) })).status, 403);
});
