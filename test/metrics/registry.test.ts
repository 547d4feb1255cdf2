// QuarryMetrics on its own: a registry per Quarry, counts that follow the store and the bus.
import test from 'ava';
import { QuarryMetrics } from '../../src/metrics/quarry-metrics.js';
import { Kind } from '../../src/model/kinds.js';
import { createMemoryStore } from '../../src/store/index.js';
import { EventBus } from '../../src/tasks/bus.js';
import { parseMetrics, total } from '../helpers/prometheus.js';
import { createNode } from '../runtime/fixtures.js';

test('metrics registry two Quarrys in one process count apart and both show the process metrics', async (t) => {
  const a = new QuarryMetrics();
  const b = new QuarryMetrics();
  t.teardown(() => {
    a.close();
    b.close();
  });
  a.requests.requestDone('GET', '/nodes/{nodeId}', 200, 0.002);
  a.requests.requestDone('GET', '/nodes/{nodeId}', 200, 0.004);
  const ma = parseMetrics(await a.scrape());
  const mb = parseMetrics(await b.scrape());
  t.is(total(ma, 'quarry_http_requests_total', { route: '/nodes/{nodeId}', status: '200' }), 2);
  t.is(total(ma, 'quarry_http_request_duration_seconds', { route: '/nodes/{nodeId}' }), 2);
  t.is(mb.get('quarry_http_requests_total')?.metrics.length ?? 0, 0);
  for (const m of [ma, mb]) t.truthy(m.get('process_resident_memory_bytes'));
});

test('metrics registry nodes by phase follow the store, task runs follow the bus, Ceph health is UNKNOWN before Ceph answers', async (t) => {
  const store = await createMemoryStore();
  const bus = new EventBus();
  const m = new QuarryMetrics();
  t.teardown(() => m.close());
  m.provide({ store, queueDepths: () => new Map([['node', 3]]), sseClients: () => 2 });
  m.followBus(bus);
  const n1 = await createNode(store, 1);
  await createNode(store, 2);
  await store.updateStatus(Kind.Node, n1.id, { phase: 'active' });
  let s = parseMetrics(await m.scrape());
  t.is(total(s, 'quarry_nodes', { phase: 'active' }), 1);
  t.is(total(s, 'quarry_nodes', { phase: 'unknown' }), 1);
  // Watched after the first scrape: a change, a deletion.
  await store.updateStatus(Kind.Node, n1.id, { phase: 'offline' });
  await store.delete(Kind.Node, (await createNode(store, 3)).id);
  s = parseMetrics(await m.scrape());
  t.is(total(s, 'quarry_nodes', { phase: 'active' }), 0);
  t.is(total(s, 'quarry_nodes', { phase: 'offline' }), 1);
  t.is(total(s, 'quarry_nodes'), 2);

  bus.publish('task.state.changed', { runId: 'r1', taskName: 'node.boot', state: 'running' });
  bus.publish('task.state.changed', { runId: 'r2', taskName: 'node.boot', state: 'running' });
  s = parseMetrics(await m.scrape());
  t.is(total(s, 'quarry_task_runs_running', { task: 'node.boot' }), 2);
  bus.publish('task.state.changed', { runId: 'r1', taskName: 'node.boot', state: 'completed' });
  bus.publish('task.state.changed', { runId: 'r2', taskName: 'node.boot', state: 'failed' });
  s = parseMetrics(await m.scrape());
  t.is(total(s, 'quarry_task_runs_running', { task: 'node.boot' }), 0);
  t.is(total(s, 'quarry_task_runs_total', { task: 'node.boot', state: 'completed' }), 1);
  t.is(total(s, 'quarry_task_runs_total', { task: 'node.boot', state: 'failed' }), 1);

  t.is(total(s, 'quarry_reconcile_queue_depth', { loop: 'node' }), 3);
  t.is(total(s, 'quarry_reconcile_errors_total', { loop: 'node' }), 0);
  m.reconciles.reconciled('node', 0.001, 'error');
  m.reconciles.reconciled('node', 0.001, 'conflict');
  m.storeWrites.written('status', 0.0002);
  s = parseMetrics(await m.scrape());
  t.is(total(s, 'quarry_reconcile_errors_total', { loop: 'node' }), 1);
  t.is(total(s, 'quarry_reconcile_duration_seconds', { loop: 'node' }), 2);
  t.is(total(s, 'quarry_store_write_duration_seconds', { op: 'status' }), 1);
  t.is(total(s, 'quarry_sse_clients'), 2);
  t.is(total(s, 'quarry_ceph_health', { status: 'UNKNOWN' }), 1);
  t.is(total(s, 'quarry_ceph_health'), 1);
});
