// The whole of Quarry over real HTTP: the lab drives runs, the tasks endpoints and /events show
// them, and every route of the composed table is private but for the contract's five.
import test from 'ava';
import { EventSource } from 'eventsource';
import { Validator } from '@seriousme/openapi-schema-validator';
import { Kind, type NodeSpec } from '../../src/model/kinds.js';
import { Client } from './client.js';
import type { OpenApiDoc, ProblemBody } from './bodies.js';
import { assertPrivateRoutesRefuse, assertTokenMatrix, matrixTokens } from './route-checks.js';
import { ADMIN_PASSWORD, allActive, startLab, waitFor, type LabQuarry } from '../lab/harness.js';

async function admin(q: LabQuarry): Promise<Client> {
  const c = new Client(q.url);
  const r = await c.post('/user/login', { username: 'admin', password: ADMIN_PASSWORD });
  if (r.status !== 200) throw new Error(`login: ${r.status}`);
  return c;
}

async function restart(q: LabQuarry, machine: number): Promise<string> {
  const node = await q.nodeOf(machine);
  await q.store.mutateSpec<NodeSpec>(Kind.Node, node.id, (d) => ({ ...d.spec, restartGeneration: d.spec.restartGeneration + 1 }));
  return node.id;
}

test('quarry api: every route of the composed table refuses a request without a session', async (t) => {
  const q = await startLab(t, 0);
  const checked = await assertPrivateRoutesRefuse(t, q.http.routes, q.url);
  t.true(q.http.routes.some((r) => r.path === '/task/runs/recent') && q.http.routes.some((r) => r.path === '/events'));
  t.true(checked >= 15);
});

test('quarry api: every user route of the composed table with an API token: read refused on writes, write passes, revoked and expired 401', async (t) => {
  // The wall clock, movable: the expired token is made to expire by moving it.
  let offset = 0;
  const clock = { now: () => Date.now() + offset, iso: () => new Date(Date.now() + offset).toISOString() };
  const q = await startLab(t, 0, { clock });
  const tokens = await matrixTokens(await admin(q), (ms) => (offset += ms));
  const checked = await assertTokenMatrix(t, q.http.routes, q.url, tokens);
  t.true(checked >= 15);
  t.true(
    q.http.routes.some((r) => r.readOnly && r.path === '/specs/plan'),
    'the dry run is marked as changing nothing',
  );
});

test('quarry api: a node-level run shows in the task endpoints with its agent log', async (t) => {
  const q = await startLab(t, 1);
  await allActive(q, 1);
  const nodeId = await restart(q, 1);
  const c = await admin(q);
  const run = await waitFor('completed restart run', async () => {
    const r = await c.get('/task/runs/recent?limit=10');
    return (r.json as Array<{ taskName: string; state: string; nodeId: string }>).find(
      (x) => x.taskName === 'node.restart' && x.state === 'completed',
    );
  });
  t.is(run.nodeId, nodeId);
  const one = await c.get<{ id: string }>(`/task/run/${(run as unknown as { id: string }).id}`);
  t.is(one.status, 200);
  t.deepEqual(Object.keys(one.json).sort(), [
    'completedAt',
    'createdAt',
    'error',
    'id',
    'nodeHostname',
    'nodeId',
    'startedAt',
    'state',
    'targetId',
    'taskName',
  ]);
  const logs = await c.get(`/task/run/${one.json.id}/logs`);
  t.true((logs.json as Array<{ message: string }>).some((l) => l.message.includes('systemctl reboot')));
  const missing = await c.get<ProblemBody>('/task/run/00000000-0000-4000-8000-000000000000');
  t.is(missing.status, 404);
  t.is(missing.json.code, 'NOT_FOUND');
});

test('quarry api: a question holds its run until an admin answers it with one of its options', async (t) => {
  const q = await startLab(t, 0);
  const c = await admin(q);
  const run = await q.tasks.start({
    taskName: 'disk.wipe',
    target: { kind: 'Disk', id: 'd1', generation: 1 },
    script: async (ctx) => ({ answer: await ctx.ask('Wipe /dev/sdb? It holds data.', ['yes', 'no']) }),
  });
  const question = await waitFor(
    'pending question',
    async () => (await c.get<Array<{ id: string }> | undefined>('/task/questions/pending')).json?.[0],
  );
  t.like(question, { runId: run.id, taskName: 'disk.wipe', options: ['yes', 'no'] });
  const bad = await c.post(`/task/question/${question.id}/answer`, { answer: 'maybe' });
  t.is(bad.status, 400);
  t.is((await c.get<{ state: string }>(`/task/run/${run.id}`)).json.state, 'running');
  const ok = await c.post(`/task/question/${question.id}/answer`, { answer: 'no' });
  t.deepEqual(ok.json, { status: 'answered' });
  const done = await q.tasks.whenFinished(run.id);
  t.is(done.status.state, 'completed');
  t.deepEqual(done.status.result, { answer: 'no' });
  t.deepEqual((await c.get('/task/questions/pending')).json, []);
});

test('quarry api: only an admin cancels a run, and a finished run cannot be canceled', async (t) => {
  const q = await startLab(t, 0);
  // A node-level run for a node with no agent stays pending: nothing will claim it.
  const nodeId = '11111111-1111-4111-8111-111111111111';
  const run = await q.tasks.start({
    taskName: 'node.restart',
    target: { kind: 'Node', id: nodeId, generation: 1 },
    node: { id: nodeId, hostname: 'x' },
    timeoutMs: 60_000,
  });
  const c = await admin(q);
  await c.post('/users', { username: 'viewer', password: 'viewer-password', name: 'Viewer', email: 'viewer@example.com' });
  const viewer = new Client(q.url);
  await viewer.post('/user/login', { username: 'viewer', password: 'viewer-password' });
  t.is((await viewer.post(`/task/run/${run.id}/cancel`)).status, 403);
  t.is((await viewer.get<{ state: string }>(`/task/run/${run.id}`)).json.state, 'pending', 'a viewer may read');
  t.deepEqual((await c.post(`/task/run/${run.id}/cancel`)).json, { status: 'canceled' });
  t.is((await c.get<{ state: string }>(`/task/run/${run.id}`)).json.state, 'canceled');
  const again = await c.post<ProblemBody>(`/task/run/${run.id}/cancel`);
  t.is(again.status, 409);
  t.is(again.json.code, 'CONFLICT');
});

test('quarry api: /events streams task state changes to a real EventSource with the session cookie', async (t) => {
  const q = await startLab(t, 0);
  const c = await admin(q);
  const cookie = [...c.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const es = new EventSource(`${q.url}/events`, { fetch: (url, init) => fetch(url, { ...init, headers: { ...init.headers, cookie } }) });
  t.teardown(() => es.close());
  const seen: Array<{ id: string; type: string; payload: Record<string, unknown> }> = [];
  es.onmessage = (m) =>
    seen.push({ id: m.lastEventId, ...(JSON.parse(m.data as string) as { type: string; payload: Record<string, unknown> }) });
  await new Promise<void>((resolve, reject) => {
    es.onopen = () => resolve();
    es.onerror = (e) => reject(new Error(`EventSource error ${String((e as { code?: number }).code)}`));
  });
  const run = await q.tasks.start({ taskName: 'demo.step', target: { kind: 'Node', id: 'n', generation: 1 }, script: async () => {} });
  await waitFor('task events', () => seen.filter((e) => e.type === 'task.state.changed' && e.payload.runId === run.id).length >= 3);
  const states = seen.filter((e) => e.type === 'task.state.changed' && e.payload.runId === run.id).map((e) => e.payload.state);
  t.deepEqual(states, ['pending', 'running', 'completed']);
  t.true(
    seen.every((e, i) => i === 0 || Number(e.id) > Number(seen[i - 1]!.id)),
    'ids increase',
  );
  t.false(
    seen.some((e) => e.type === 'task.log'),
    'log lines are not relayed',
  );
});

test('quarry api: the composed OpenAPI document is valid 3.1 and lists exactly the route table', async (t) => {
  const q = await startLab(t, 0);
  const doc = (await (await admin(q)).get<OpenApiDoc>('/openapi.json')).json;
  const validator = new Validator();
  const res = await validator.validate(doc);
  t.true(res.valid, JSON.stringify(res.errors ?? null).slice(0, 2000));
  const documented = Object.entries(doc.paths).flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`));
  t.deepEqual(documented.sort(), q.http.routes.map((r) => `${r.method} ${r.path}`).sort());
});
