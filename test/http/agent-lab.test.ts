// The lab's agents speak the agent protocol over the master's real port: they enrol, rotate,
// renew their sessions, keep their secret across reboots, and no secret leaks anywhere.
import test from 'ava';
import { Kind, type AgentCredentialSpec, type NodeSpec, type SessionSpec } from '../../src/model/kinds.js';
import type { Logger } from '../../src/log.js';
import { allActive, startLab, waitFor, type LabQuarry } from '../lab/harness.js';
import { admin, hardware, login, nodeRun, readyAgent } from './agent-helpers.js';
import type { Reply } from './client.js';

const FAST_SCRYPT = { N: 2 ** 10, r: 8, p: 1 };

const agentSessions = async (q: LabQuarry, nodeId: string) =>
  (await q.store.list<SessionSpec>(Kind.Session)).filter((s) => s.spec.userId === `agent:${nodeId}`);

test('agent lab: every machine logs in over HTTP, rotates its installed secret and reports its node active', async (t) => {
  const logged: string[] = [];
  const log: Logger = (level, message, fields) => logged.push(JSON.stringify({ level, message, fields }));
  const q = await startLab(t, 3, { log });
  const nodes = await allActive(q, 3);
  for (const node of nodes) {
    const cred = await q.store.mustGet<AgentCredentialSpec>(Kind.AgentCredential, node.id);
    t.truthy(cred.spec.rotatedAt, 'rotated');
    t.is(cred.spec.initialSecret, null);
    t.is((await agentSessions(q, node.id)).length, 1, 'one session per agent, shared by its heartbeat and claim loop');
    const m = q.lab!.machine(node.id);
    t.like(m.disk.agentSecret, { username: `agent:${node.id}`, rotated: true });
  }
  t.is(logged.filter((l) => l.includes('agent credential used for the first time')).length, 3);
});

test('agent lab: an agent renews its expired access token, and logs in again when its session was ended', async (t) => {
  const q = await startLab(t, 1, { auth: { scrypt: FAST_SCRYPT, accessSeconds: 1 } });
  const [node] = await allActive(q, 1);
  const nodeId = node!.id;
  const [session] = await agentSessions(q, nodeId);
  const secret = q.lab!.machine(1).disk.agentSecret?.secret;
  // A refresh rotates the session's refresh token id, a spec change of its document.
  await waitFor('a token refresh', async () => ((await q.store.get<SessionSpec>(Kind.Session, session!.id))?.metadata.generation ?? 0) > 1);
  await q.http.auth.sessions.revokeUser(`agent:${nodeId}`);
  const fresh = await waitFor('a new session', async () => (await agentSessions(q, nodeId))[0]);
  t.not(fresh.id, session!.id);
  t.is(q.lab!.machine(1).disk.agentSecret?.secret, secret, 'a login again, not a new rotation');
  const reported = q.fleet.observe(nodeId).lastReportAt ?? 0;
  await waitFor('reports go on', () => (q.fleet.observe(nodeId).lastReportAt ?? 0) > reported);
  t.is((await q.nodeOf(1)).status.phase, 'active');
});

test('agent lab: a machine that reboots keeps its rotated secret and logs in with it', async (t) => {
  const q = await startLab(t, 1);
  const [node] = await allActive(q, 1);
  const before = await q.store.mustGet<AgentCredentialSpec>(Kind.AgentCredential, node!.id);
  const secret = q.lab!.machine(1).disk.agentSecret?.secret;
  await q.store.mutateSpec<NodeSpec>(Kind.Node, node!.id, (d) => ({ ...d.spec, restartGeneration: 1 }));
  await waitFor('restart acknowledged', async () => (await q.nodeOf(1)).status.observedRestartGeneration === 1);
  const after = await q.store.mustGet<AgentCredentialSpec>(Kind.AgentCredential, node!.id);
  t.is(after.spec.rotatedAt, before.spec.rotatedAt, 'no second rotation');
  t.is(q.lab!.machine(1).disk.agentSecret?.secret, secret);
  t.not((await q.nodeOf(1)).status.bootId, node!.status.bootId);
});

test('agent lab: the in-process link still drives the lab, without HTTP sessions', async (t) => {
  const q = await startLab(t, 2, { lab: { link: 'inprocess' } });
  const nodes = await allActive(q, 2);
  for (const n of nodes) t.deepEqual(await agentSessions(q, n.id), []);
});

test('agent lab: a secret shows in no answer but its rotation, in no log line and in no task run', async (t) => {
  const logged: string[] = [];
  const log: Logger = (level, message, fields) => logged.push(JSON.stringify({ level, message, fields }));
  const q = await startLab(t, 1, { log });
  await allActive(q, 1);
  const answers: Reply[] = [];
  const keep = async (r: Promise<Reply>) => {
    const reply = await r;
    answers.push(reply);
    return reply;
  };
  const a = await readyAgent(q, 7); // its rotation answer is not kept
  const relogged = await login(q, a.username, a.secret);
  await keep(relogged.post('/node/hardware', hardware(7)));
  await keep(relogged.post('/user/login', { username: a.username, password: a.initial })); // refused
  await keep(relogged.post('/user/login', { username: a.username, password: a.secret }));
  const run = await nodeRun(q, a.nodeId);
  await keep(relogged.post('/node/runs/claim', { waitMs: 1000 }));
  await keep(relogged.post(`/node/runs/${run.id}/finish`, { ok: true, result: { done: true } }));
  const c = await admin(q);
  for (const path of ['/task/runs/recent', `/task/run/${run.id}`, `/task/run/${run.id}/logs`, '/openapi.json', '/users', '/user/me'])
    await keep(c.get(path));
  for (const r of q.http.routes.filter((x) => x.method === 'GET' && !x.path.includes('{') && x.path !== '/events'))
    await keep(c.get(r.path));
  const labSecret = q.lab!.machine(1).disk.agentSecret?.secret ?? '';
  const secrets = [a.initial, a.secret, labSecret];
  t.true(secrets.every((s) => s.length === 43));
  for (const s of secrets) {
    for (const reply of answers) t.false(reply.text.includes(s), `answer ${reply.status}`);
    t.false(
      logged.some((l) => l.includes(s)),
      'log',
    );
    t.false(JSON.stringify(await q.tasks.recent(1000)).includes(s), 'task runs');
  }
  const cred = await q.store.mustGet<AgentCredentialSpec>(Kind.AgentCredential, a.nodeId);
  t.false(JSON.stringify(cred).includes(a.secret), 'only a hash is stored');
});
