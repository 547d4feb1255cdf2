// Events worth reading (#16 part 6): every event names its object next to the ids, over a real
// /events stream, and a run started for an API request carries that request's id in its events
// and in their log lines, so one is found from the other.
import test from 'ava';
import { EventSource } from 'eventsource';
import { Progress } from '../../reconcilers/image/download.js';
import type { Level } from '../../src/log.js';
import { ManualClock } from '../../src/model/clock.js';
import { EventBus, type AnyBusEvent } from '../../src/tasks/bus.js';
import type { EventMap } from '../../src/tasks/types.js';
import { Client } from '../http/client.js';
import type { InvokeResults } from '../http/bodies.js';
import { ADMIN_PASSWORD, allActive, startLab, waitFor } from './harness.js';

type Payload = Record<string, unknown> & {
  target?: Record<string, unknown>;
  node?: { hostname?: unknown } | null;
};

/** The names each event type must carry beside its ids (each a non-empty string). One row per
 * type of EventMap: a type added without its row does not compile. */
const NAMES: Record<keyof EventMap, (p: Payload) => unknown[]> = {
  'task.state.changed': (p) => runNames(p),
  'task.log': (p) => [p.taskName, ...runNames(p)],
  'task.question.asked': (p) => [p.prompt, ...runNames(p)],
  'task.question.answered': (p) => [p.prompt, p.answeredBy, ...runNames(p)],
  'node.state.changed': (p) => [p.hostname, p.name],
  'image.download.progress': (p) => [p.name],
  'disruption.lease.taken': (p) => [p.what, ...(p.domains as unknown[]), ...(p.hostnames as unknown[])],
  'disruption.lease.released': (p) => [p.what, ...(p.domains as unknown[]), ...(p.hostnames as unknown[])],
  'node.fenced': (p) => [p.hostname, p.name],
  'node.approval.required': (p) => [p.hostname, p.name],
  'node.credential.conflict': (p) => [p.hostname, p.name],
  'specs.applied': (p) => [p.file, ...(['created', 'updated', 'pruned', 'orphaned'] as const).flatMap((k) => names(p[k]))],
  'specs.failed': (p) => [p.file],
  'specs.recovered': (p) => [p.file],
  'specs.pending': (p) => [p.file, p.kind, p.name],
  'specs.pending.cleared': (p) => [p.file, p.kind, p.name],
};

/** A run's target by name, a disk by device path and serial too, a node-level run's hostname. */
function runNames(p: Payload): unknown[] {
  const t = p.target ?? {};
  const disk = t.kind === 'Disk' ? [t.devicePath, t.serial] : [];
  return [t.name, ...disk, ...(p.node ? [p.node.hostname] : [])];
}
const names = (refs: unknown): unknown[] => (refs as Array<{ name: unknown }>).map((r) => r.name);

/** The names an event lacks: empty when it has every name its row asks for. */
function missingNames(e: { type: string; payload: unknown }): string[] {
  const row = NAMES[e.type as keyof EventMap] as ((p: Payload) => unknown[]) | undefined;
  if (!row) return [`${e.type}: no row in the table`];
  return row(e.payload as Payload).flatMap((v, i) => (typeof v === 'string' && v !== '' ? [] : [`${e.type}: name ${i} is ${String(v)}`]));
}

interface Seen {
  id: string;
  type: string;
  at?: string;
  payload: Payload;
}

test.serial("event names: a disk wipe's runs and question, over /events, carry the request id and the disk's device path", async (t) => {
  const logged: Array<{ level: Level; message: string; fields?: Record<string, unknown> }> = [];
  // Three machines: the lab's third holds a disk with an old filesystem (a wipe asks first).
  const q = await startLab(t, 3, { log: (level, message, fields) => logged.push({ level, message, fields }) });
  const nodes = await allActive(q, 3);
  const c = new Client(q.url);
  t.is((await c.post('/user/login', { username: 'admin', password: ADMIN_PASSWORD })).status, 200);
  const cookie = [...c.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const es = new EventSource(`${q.url}/events`, { fetch: (url, init) => fetch(url, { ...init, headers: { ...init.headers, cookie } }) });
  t.teardown(() => es.close());
  const seen: Seen[] = [];
  es.onmessage = (m) => seen.push({ id: m.lastEventId, ...(JSON.parse(m.data as string) as Omit<Seen, 'id'>) });
  await new Promise<void>((resolve, reject) => {
    es.onopen = () => resolve();
    es.onerror = (e) => reject(new Error(`EventSource error ${String((e as { code?: number }).code)}`));
  });

  const all = (await c.get<Array<{ id: string; nodeId: string; devicePath: string; serial: string; hasFilesystem: boolean }>>('/disks'))
    .json;
  const dirty = all.find((d) => d.hasFilesystem && !d.serial.endsWith('-SYS'))!;
  const node = nodes.find((n) => n.id === dirty.nodeId);
  const invoked = await c.post<InvokeResults>(
    '/invoke/disk',
    { operation: 'disk.wipe', diskIds: [dirty.id] },
    { headers: { 'X-Request-Id': 'wipe-req-7' } },
  );
  t.is(invoked.headers.get('x-request-id'), 'wipe-req-7');
  t.is(invoked.json.results[0]?.status, 'scheduled');

  const asked = await waitFor('the question on /events', async () => seen.find((e) => e.type === 'task.question.asked'));
  const disk = { kind: 'Disk', id: dirty.id, devicePath: dirty.devicePath, serial: dirty.serial };
  t.like(asked.payload, { requestId: 'wipe-req-7', target: disk, options: ['yes', 'no'] });
  t.true(String(asked.payload.prompt).includes(dirty.devicePath), 'the question says what it would destroy');
  const answer = await c.post(
    `/task/question/${String(asked.payload.questionId)}/answer`,
    { answer: 'yes' },
    { headers: { 'X-Request-Id': 'answer-req-8' } },
  );
  t.is(answer.status, 200);

  const isWipe = (e: Seen) => e.type === 'task.state.changed' && e.payload.taskName === 'disk.wipe';
  const done = await waitFor(
    'the wipe completed on /events',
    async () => seen.find((e) => isWipe(e) && e.payload.state === 'completed'),
    30_000,
  );
  t.like(done.payload, { requestId: 'wipe-req-7', target: disk, node: { id: node!.id, hostname: node!.spec.hostname } });
  t.regex(done.at ?? '', /^\d{4}-\d\d-\d\dT.*Z$/, 'the envelope says when');
  const diskRuns = seen.filter((e) => e.type === 'task.state.changed' && e.payload.target?.id === dirty.id);
  t.true(diskRuns.length >= 6, 'the confirmation run and the wipe, each pending, running, completed');
  t.true(
    diskRuns.every((e) => e.payload.requestId === 'wipe-req-7'),
    'every run the request started says so',
  );
  t.like(
    seen.find((e) => e.type === 'task.question.answered'),
    { payload: { answeredBy: 'admin', requestId: 'wipe-req-7', answerRequestId: 'answer-req-8', target: disk } },
  );

  // The event's log line: the same id as on /events, the request's id, the disk's names.
  const line = logged.find((l) => l.message === 'task.state.changed' && l.fields?.eventId === Number(done.id));
  t.like(line, { level: 'info', fields: { requestId: 'wipe-req-7', runId: done.payload.runId, target: disk } });
  // And the request itself, by the same id.
  t.like(
    logged.find((l) => l.message === 'request' && l.fields?.requestId === 'wipe-req-7'),
    { level: 'info', fields: { method: 'POST', route: '/invoke/disk', status: 200, user: 'admin' } },
  );

  // The table: every event the lab published names its object.
  const types = new Set(q.events.map((e) => e.type));
  for (const type of [
    'task.state.changed',
    'task.log',
    'task.question.asked',
    'task.question.answered',
    'node.state.changed',
    'node.approval.required',
  ])
    t.true(types.has(type), `the lab published ${type}`);
  t.deepEqual(
    q.events.flatMap((e: AnyBusEvent) => missingNames(e)),
    [],
  );
});

test('event names: the table has a row for every event type and refuses a payload without its names', (t) => {
  t.deepEqual(missingNames({ type: 'node.fenced', payload: { nodeId: 'n', hostname: 'h1', name: 'rack1-h1' } }), []);
  t.deepEqual(missingNames({ type: 'node.fenced', payload: { nodeId: 'n', hostname: 'h1' } }), ['node.fenced: name 1 is undefined']);
  t.deepEqual(missingNames({ type: 'task.state.changed', payload: { target: { kind: 'Disk', name: 'h/S1', serial: 'S1' } } }), [
    'task.state.changed: name 1 is undefined',
  ]);
  t.deepEqual(missingNames({ type: 'made.up', payload: {} }), ['made.up: no row in the table']);
});

test('event names: an image download names its image', (t) => {
  const bus = new EventBus();
  const events: AnyBusEvent[] = [];
  bus.subscribe((e) => events.push(e));
  new Progress(
    { bus, clock: new ManualClock(0), progressEveryMs: 100, stateDir: '/nowhere', stallMs: 1000 },
    'img-1',
    10,
    'ubuntu-24.04',
  ).report(10, true);
  t.like(events[0], { type: 'image.download.progress', payload: { imageId: 'img-1', name: 'ubuntu-24.04', done: true } });
  t.deepEqual(missingNames(events[0]!), []);
});
