// GET /metrics after a lab run: the example cluster spec converged, then one scrape read with a
// Prometheus text-format parser. Each series of docs/operations.md is there and has moved.
import test from 'ava';
import { copyFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Client } from '../http/client.js';
import { parseMetrics, samples, total } from '../helpers/prometheus.js';
import { waitFor } from '../lab/harness.js';
import { phaseReady, specsLab } from '../gitops/helpers.js';
import { Kind, type DiskStatusFields } from '../../src/model/kinds.js';

const EXAMPLES = join(process.cwd(), 'examples', 'specs');

test('metrics a lab run converging the example spec moves every series, and nodes and OSDs match the store', async (t) => {
  const q = await specsLab(t, 3);
  for (const f of await readdir(EXAMPLES)) await copyFile(join(EXAMPLES, f), join(q.dir, f));
  await q.until('lab-cluster.yaml', (x) => x.state === 'applied', 'applied');
  await waitFor(
    'every object of the file Ready',
    async () => {
      const status = q.specs.folder.status().find((x) => x.file === 'lab-cluster.yaml')!;
      const docs = await Promise.all(status.objects.map((o) => q.store.mustGet(o.kind, o.id)));
      return docs.every(phaseReady);
    },
    60_000,
  );
  const c = await q.admin();
  const events = new AbortController();
  // One open /events stream, counted as an SSE client.
  const stream = await fetch(`${q.url}/events`, {
    headers: { cookie: [...c.jar].map(([k, v]) => `${k}=${v}`).join('; ') },
    signal: events.signal,
  });
  t.teardown(() => events.abort());
  t.is(stream.status, 200);
  await c.get('/nodes');
  await c.get('/nodes');
  // A path no route knows, and a known route with an id: labelled by template, never the URL.
  t.is((await c.get('/no/such/path-7f3a')).status, 404);
  t.is((await c.get('/nodes/00000000-0000-4000-8000-00000000abcd')).status, 404);

  const completedRuns = async () => {
    const byTask = new Map<string, number>();
    for (const r of await q.store.list<{ taskName: string }, { state: string }>(Kind.TaskRun))
      if (r.status.state === 'completed') byTask.set(r.spec.taskName, (byTask.get(r.spec.taskName) ?? 0) + 1);
    return byTask;
  };
  const before = await completedRuns();
  const scrape = await c.get('/metrics');
  t.is(scrape.status, 200);
  t.regex(scrape.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  const m = parseMetrics(scrape.text);

  // Requests, by route template: the agents' and ours; never a raw URL.
  t.true(total(m, 'quarry_http_requests_total', { method: 'GET', route: '/nodes', status: '200' }) >= 2);
  t.true(total(m, 'quarry_http_request_duration_seconds', { method: 'GET', route: '/nodes' }) >= 2);
  t.true(total(m, 'quarry_http_requests_total', { method: 'POST', route: '/node/hardware' }) > 0);
  const routes = new Set(samples(m, 'quarry_http_requests_total').map((s) => s.labels?.route ?? ''));
  for (const r of routes) t.true(r === 'unmatched' || (r.startsWith('/') && !/[0-9a-f]{8}-[0-9a-f]{4}-/.test(r)), r);
  t.true(
    [...routes].some((r) => r.includes('{')),
    'templates with parameters',
  );
  t.true(total(m, 'quarry_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }) >= 1);
  t.true(total(m, 'quarry_http_requests_total', { method: 'GET', route: '/nodes/{nodeId}', status: '404' }) >= 1);
  t.false(scrape.text.includes('path-7f3a') || scrape.text.includes('abcd"'));

  // Loops: a depth and an error series for every loop; reconcile durations observed where work was done.
  for (const { name: loop } of q.manager.describe()) {
    t.is(samples(m, 'quarry_reconcile_queue_depth', { loop }).length, 1, loop);
    t.is(samples(m, 'quarry_reconcile_errors_total', { loop }).length, 1, loop);
  }
  for (const loop of ['node', 'cluster', 'network', 'image']) t.true(total(m, 'quarry_reconcile_duration_seconds', { loop }) > 0, loop);

  // Task runs by step name and final state: between the store's counts before and after the scrape.
  const after = await completedRuns();
  t.true(after.size > 0);
  for (const [task, n] of after) {
    const counted = total(m, 'quarry_task_runs_total', { task, state: 'completed' });
    t.true(counted >= (before.get(task) ?? 0) && counted <= n, `${task}: ${counted} of ${before.get(task) ?? 0}..${n}`);
  }
  t.truthy(m.get('quarry_task_runs_running'));

  // Store writes timed, by operation.
  t.true(total(m, 'quarry_store_write_duration_seconds', { op: 'status' }) > 0);
  t.true(total(m, 'quarry_store_write_duration_seconds', { op: 'create' }) > 0);

  // Nodes by phase and OSDs by state: what the store holds.
  const nodes = await q.nodes();
  for (const phase of new Set(nodes.map((n) => n.status.phase ?? 'unknown')))
    t.is(total(m, 'quarry_nodes', { phase }), nodes.filter((n) => (n.status.phase ?? 'unknown') === phase).length, phase);
  t.is(total(m, 'quarry_nodes'), nodes.length);
  const disks = await q.store.list<unknown, DiskStatusFields>(Kind.Disk);
  const running = disks.filter((d) => d.status.osd?.phase === 'running').length;
  t.true(running > 0);
  t.is(total(m, 'quarry_osds', { state: 'running' }), running);

  // Ceph's health: one status at 1, the store's.
  const health = (await q.store.mustGet<unknown, { metrics?: { health: string } }>('Cluster', 'default')).status.metrics?.health;
  t.is(total(m, 'quarry_ceph_health'), 1);
  t.is(total(m, 'quarry_ceph_health', { status: health ?? 'UNKNOWN' }), 1);

  t.true(total(m, 'quarry_sse_clients') >= 1);
  // prom-client's process metrics.
  t.truthy(m.get('process_cpu_user_seconds_total'));
  t.truthy(m.get('nodejs_heap_size_used_bytes'));
});

test('metrics needs a session, and a non-admin user may scrape', async (t) => {
  const q = await specsLab(t, 0);
  t.is((await new Client(q.url).get('/metrics')).status, 401);
  const admin = await q.admin();
  t.is(
    (await admin.post('/users', { username: 'viewer', password: 'viewer-password-1', name: 'v', email: 'v@example.com', isAdmin: false }))
      .status,
    201,
  );
  const viewer = new Client(q.url);
  t.is((await viewer.post('/user/login', { username: 'viewer', password: 'viewer-password-1' })).status, 200);
  const r = await viewer.get('/metrics');
  t.is(r.status, 200);
  t.truthy(parseMetrics(r.text).get('quarry_http_requests_total'));
});
