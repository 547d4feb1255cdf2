// PUT/GET/DELETE /nodes/{id}/bmc over real HTTP against the lab: who may call them (an admin
// writes, a user reads, an agent neither), what a bad body gets (400, nothing changed), and that
// no answer, event or stored byte shows the password.
import test from 'ava';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kind, type NodeSpec } from '../../src/model/kinds.js';
import { Client } from './client.js';
import type { ProblemBody } from './bodies.js';
import { ADMIN_PASSWORD, allActive, startLab } from '../lab/harness.js';

const PASSWORD = 'Bmc-pw-4417';
const BMC = { address: '198.51.100.9', username: 'ops', password: PASSWORD };

async function login(url: string, username: string, password: string): Promise<Client> {
  const c = new Client(url);
  const r = await c.post('/user/login', { username, password });
  if (r.status !== 200) throw new Error(`login ${username}: ${r.status}`);
  return c;
}

test('node bmc routes: an admin declares, changes and forgets a BMC; answers say passwordSet, never the password', async (t) => {
  const q = await startLab(t, 1);
  const [n] = await allActive(q, 1);
  const admin = await login(q.url, 'admin', ADMIN_PASSWORD);
  const path = `/nodes/${n!.id}/bmc`;
  t.deepEqual((await admin.get(path)).json, { bmc: null, fencing: 'none' });
  t.deepEqual((await admin.request('PUT', path, { json: { ...BMC, fencing: 'bmc' } })).json, { status: 'updated' });
  t.deepEqual((await admin.get(path)).json, {
    bmc: { address: BMC.address, port: 623, username: 'ops', passwordSet: true },
    fencing: 'bmc',
  });
  // Another address and port, the password kept.
  t.is((await admin.request('PUT', path, { json: { address: 'bmc-1.example', port: 6230, username: 'ops' } })).status, 200);
  const stored = await q.store.mustGet<NodeSpec>(Kind.Node, n!.id);
  t.deepEqual(stored.spec.bmc, { address: 'bmc-1.example', port: 6230, username: 'ops', password: PASSWORD });
  t.is(stored.spec.fencing, 'bmc', 'fencing unchanged when not given');
  const details = JSON.stringify((await admin.get('/nodes/details')).json);
  t.regex(details, /"bmc":\{"address":"bmc-1\.example","port":6230,"username":"ops","passwordSet":true\},"fencing":"bmc"/);
  t.false(details.includes(PASSWORD));
  t.deepEqual((await admin.request('DELETE', path)).json, { status: 'deleted' });
  t.deepEqual((await admin.get(path)).json, { bmc: null, fencing: 'none' });
  t.false(JSON.stringify(q.events).includes(PASSWORD));
});

test('node bmc routes: a new BMC without a password, a bad field or an unknown node is refused and changes nothing', async (t) => {
  const q = await startLab(t, 1);
  const [n] = await allActive(q, 1);
  const admin = await login(q.url, 'admin', ADMIN_PASSWORD);
  const path = `/nodes/${n!.id}/bmc`;
  const before = (await q.store.mustGet<NodeSpec>(Kind.Node, n!.id)).metadata.resourceVersion;
  const noPassword = await admin.request<ProblemBody>('PUT', path, { json: { address: BMC.address, username: 'ops' } });
  t.is(noPassword.status, 400);
  t.deepEqual(noPassword.json.errors, [{ path: '/body/password', message: 'is required for a new BMC' }]);
  for (const json of [
    { ...BMC, address: 'a b; rm -rf /' },
    { ...BMC, username: '-H evil' },
    { ...BMC, password: 'x'.repeat(21) },
    { ...BMC, password: 'line\nbreak' },
    { ...BMC, port: 0 },
    { ...BMC, fencing: 'always' },
    { ...BMC, extra: 1 },
  ]) {
    const r = await admin.request<ProblemBody>('PUT', path, { json });
    t.is(r.status, 400, JSON.stringify(json));
    t.is(r.json.code, 'VALIDATION_FAILED');
    t.false(r.text.includes(PASSWORD), 'the refusal does not echo the password');
  }
  t.is((await admin.request('PUT', '/nodes/00000000-0000-4000-8000-000000000000/bmc', { json: BMC })).status, 404);
  t.is((await q.store.mustGet<NodeSpec>(Kind.Node, n!.id)).metadata.resourceVersion, before, 'nothing was written');
});

test('node bmc routes: a user reads but may not write, an agent may do neither', async (t) => {
  const q = await startLab(t, 1);
  const [n] = await allActive(q, 1);
  const admin = await login(q.url, 'admin', ADMIN_PASSWORD);
  const path = `/nodes/${n!.id}/bmc`;
  await admin.request('PUT', path, { json: BMC });
  await admin.post('/users', { username: 'viewer', password: 'viewer-password', name: 'V', email: 'v@example.com' });
  const viewer = await login(q.url, 'viewer', 'viewer-password');
  const read = await viewer.get(path);
  t.is(read.status, 200);
  t.false(read.text.includes(PASSWORD));
  t.is((await viewer.request('PUT', path, { json: { ...BMC, address: '198.51.100.66' } })).status, 403);
  t.is((await viewer.request('DELETE', path)).status, 403);
  const agent = await login(q.url, `agent:${n!.id}`, q.lab!.machine(1).disk.agentSecret!.secret);
  t.is((await agent.get(path)).status, 403);
  t.is((await agent.request('PUT', path, { json: BMC })).status, 403);
  t.is((await new Client(q.url).get(path)).status, 401);
  t.deepEqual((await q.store.mustGet<NodeSpec>(Kind.Node, n!.id)).spec.bmc?.address, BMC.address);
});

test('node bmc routes: the password is sealed in the store files, never plaintext on disk', async (t) => {
  const stateDir = await mkdtemp(join(tmpdir(), 'quarry-bmc-'));
  t.teardown(() => rm(stateDir, { recursive: true, force: true }));
  const q = await startLab(t, 1, { stateDir });
  const [n] = await allActive(q, 1);
  const admin = await login(q.url, 'admin', ADMIN_PASSWORD);
  t.is((await admin.request('PUT', `/nodes/${n!.id}/bmc`, { json: BMC })).status, 200);
  await q.stop();
  const files = (await readdir(join(stateDir, 'store'), { recursive: true })).map((f) => join(stateDir, 'store', f));
  let bytes = 0;
  for (const f of files) {
    const text = await readFile(f).then(
      (b) => b.toString('latin1'),
      () => '',
    );
    bytes += text.length;
    t.false(text.includes(PASSWORD), f);
  }
  t.true(bytes > 0, 'the store wrote something');
});
