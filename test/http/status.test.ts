// GET /status over HTTP: any logged-in user reads it, nobody else; its shape from stored status
// (a Node, its monitor, a Disk whose OSD Ceph calls down, and the Cluster's health checks).
import test from 'ava';
import { Daemon } from '../../src/catalogue/index.js';
import { CLUSTER_ID, CephKind } from '../../src/model/ceph-kinds.js';
import { Kind } from '../../src/model/kinds.js';
import { statusRoutes } from '../../src/http/router.js';
import { Convergence, type StatusSummary } from '../../src/services/convergence.js';
import { ensureCluster } from '../../src/services/cluster.js';
import { createMemoryStore } from '../../src/store/index.js';
import { node } from '../builders.js';
import { startHarness } from './harness.js';

const at = '2026-01-01T00:00:00.000Z';
const ready = (on: boolean, reason: string) => [
  { type: 'Ready', status: on ? 'True' : 'False', reason, message: '', lastTransitionTime: at, observedGeneration: 1 },
];

async function seeded() {
  const store = await createMemoryStore();
  const created = await store.create({
    kind: Kind.Node,
    name: 'h1',
    spec: node()
      .withSpec({ hostname: 'h1', daemons: { [Daemon.mon]: { diskId: '0d8e7c4e-7b4c-4e7e-9a3c-1f2e3d4c5b6a' } } })
      .build().spec,
  });
  await store.updateStatus(Kind.Node, created.id, {
    phase: 'active',
    observedGeneration: 1,
    conditions: ready(true, 'Active'),
    ceph: { [Daemon.mon]: { phase: 'running', reason: 'Running', message: '' } },
    daemons: { [Daemon.mon]: true, osds: [] },
  });
  const disk = await store.create({
    kind: Kind.Disk,
    name: 'SER1',
    spec: { nodeId: created.id, serial: 'SER1', osd: true, wipeGeneration: 0 },
  });
  await store.updateStatus(Kind.Disk, disk.id, {
    devicePath: '/dev/sdb',
    observedGeneration: 1,
    osdId: 0,
    osd: { phase: 'failed', reason: 'Failed', message: 'osd.0 is not running' },
  });
  await ensureCluster(store);
  await store.updateStatus(CephKind.Cluster, CLUSTER_ID, {
    phase: 'ready',
    observedGeneration: 1,
    conditions: ready(true, 'Quorum'),
    metrics: {
      health: 'HEALTH_WARN',
      monCount: 1,
      osdCount: 1,
      osdUp: 0,
      osdIn: 1,
      pgCount: 0,
      poolCount: 0,
      usedBytes: 0,
      availableBytes: 0,
      totalBytes: 0,
    },
    healthChecks: [
      { code: 'OSD_DOWN', severity: 'HEALTH_WARN', message: '1 osds down', count: 1, detail: ['osd.0 (root=default,host=h1) is down'] },
      { code: 'MGR_DOWN', severity: 'HEALTH_WARN', message: 'no active mgr', count: 1, detail: [] },
    ],
  });
  return { store, disk };
}

test('status GET /status answers any logged-in user and refuses a caller without a session', async (t) => {
  const { store } = await seeded();
  const h = await startHarness({ store, areas: [statusRoutes(new Convergence(store))] });
  t.teardown(() => h.close().then(() => store.close()));
  t.is((await h.client().get('/status')).status, 401);
  await h.createUser('viewer');
  t.is((await (await h.login('viewer', 'viewer-password')).get('/status')).status, 200);
  t.is((await (await h.admin()).get('/status')).status, 200);
});

test('status GET /status counts ready per kind and lists a down OSD with its check', async (t) => {
  const { store, disk } = await seeded();
  const h = await startHarness({ store, areas: [statusRoutes(new Convergence(store))] });
  t.teardown(() => h.close().then(() => store.close()));
  const s = (await (await h.admin()).get<StatusSummary>('/status')).json;
  t.false(s.converged);
  t.is(s.health.status, 'HEALTH_WARN');
  const count = (kind: string) => s.convergence.find((c) => c.kind === kind);
  t.deepEqual(count('Node'), { kind: 'Node', ready: 1, total: 1 });
  t.deepEqual(count('Daemon'), { kind: 'Daemon', ready: 1, total: 1 });
  t.deepEqual(count('Disk'), { kind: 'Disk', ready: 0, total: 1 });
  t.deepEqual(count('Cluster'), { kind: 'Cluster', ready: 1, total: 1 });
  t.is(s.blockedCount, 1);
  t.deepEqual(s.blocked, [
    {
      kind: 'Disk',
      id: disk.id,
      name: 'h1:/dev/sdb',
      reason: 'Failed',
      message: 'osd.0 is not running',
      since: null,
      checks: [{ code: 'OSD_DOWN', severity: 'HEALTH_WARN', message: '1 osds down', detail: ['osd.0 (root=default,host=h1) is down'] }],
    },
  ]);
  t.deepEqual(
    s.health.checks.map((c) => [c.code, c.objects.map((o) => `${o.kind}/${o.name}`)]),
    [
      ['OSD_DOWN', ['Disk/h1:/dev/sdb']],
      ['MGR_DOWN', ['Cluster/ceph']],
    ],
  );
});
