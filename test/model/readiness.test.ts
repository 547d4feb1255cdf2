// Ready per kind (src/model/readiness.ts): each kind's rule, and Ceph's health checks attached
// to the objects they name, a HEALTH_ERR or down check overriding any Ready.
import test from 'ava';
import { Daemon } from '../../src/catalogue/index.js';
import type { HealthCheckSeen } from '../../src/model/ceph-kinds.js';
import type { CommonStatus, Condition } from '../../src/model/conditions.js';
import type { Doc } from '../../src/model/document.js';
import type { DiskSpec, DiskStatusFields, NodeSpec, NodeStatusFields } from '../../src/model/kinds.js';
import type { DiskDoc } from '../../src/model/operations.js';
import { daemonReady, diskReady, fromConditions, imageReady, nodeReady, readiness } from '../../src/model/readiness.js';
import { NODE_ID, node } from '../builders.js';

const at = '2026-01-01T00:00:00.000Z';
const cond = (type: string, status: 'True' | 'False', reason: string, message = ''): Condition => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: at,
  observedGeneration: 1,
});
const meta = (generation = 1) => ({ generation, resourceVersion: 1, createdAt: at, updatedAt: at, labels: {}, source: null });
const doc = (status: CommonStatus, generation = 1): Doc<unknown, CommonStatus> => ({
  kind: 'Filesystem',
  id: 'fs-1',
  name: 'cephfs',
  metadata: meta(generation),
  spec: {},
  status,
});
const disk = (spec: Partial<DiskSpec>, status: DiskStatusFields): DiskDoc => ({
  kind: 'Disk',
  id: 'disk-1',
  name: 'SER1',
  metadata: meta(),
  spec: { nodeId: NODE_ID, serial: 'SER1', osd: true, wipeGeneration: 0, ...spec },
  status: { observedGeneration: 1, devicePath: '/dev/sdb', ...status },
});
const running = { phase: 'running' as const, reason: 'Running', message: '' };

/** A node declared in maintenance: in it, or still entering it (Progressing). */
const inMaintenance = (progressing: boolean, daemons: NodeSpec['daemons'] = {}, status: Partial<NodeStatusFields> = {}) =>
  node('maintenance')
    .withSpec({ maintenance: true, daemons })
    .withStatus({
      observedGeneration: 1,
      conditions: [cond('Ready', 'False', 'Maintenance'), cond('Progressing', progressing ? 'True' : 'False', 'Entering')],
      ...status,
    })
    .build();

test('readiness conditions: Ready=True for the current generation is ready; an older generation is not observed', (t) => {
  t.like(fromConditions(doc({ observedGeneration: 1, conditions: [cond('Ready', 'True', 'Active')] })), { ready: true, reason: 'Active' });
  t.like(fromConditions(doc({ observedGeneration: 1, conditions: [cond('Ready', 'True', 'Active')] }, 2)), {
    ready: false,
    reason: 'NotObserved',
  });
  t.like(fromConditions(doc({})), { ready: false, reason: 'NotObserved' });
});

test('readiness conditions: a True Blocked condition is the reason given over Ready=False', (t) => {
  const v = fromConditions(
    doc({ observedGeneration: 1, conditions: [cond('Ready', 'False', 'Pending'), cond('Blocked', 'True', 'NoMds', 'no MDS is declared')] }),
  );
  t.like(v, { ready: false, reason: 'NoMds', message: 'no MDS is declared', since: at });
});

test('readiness image: downloaded when wanted, removed when not', (t) => {
  const image = (downloaded: boolean, phase: string, ready: boolean) => ({
    ...doc({ observedGeneration: 1, phase, conditions: [cond('Ready', ready ? 'True' : 'False', phase)] }),
    spec: { downloaded },
  });
  t.true(imageReady(image(true, 'downloaded', true)).ready);
  t.false(imageReady(image(true, 'downloading', false)).ready);
  t.like(imageReady(image(false, 'removed', false)), { ready: true, reason: 'Removed' });
  t.like(imageReady(image(false, 'removing', false)), { ready: false, reason: 'removing' });
});

test('readiness node: active is ready, a node declared off is ready once offline', (t) => {
  const active = node('active')
    .withStatus({ observedGeneration: 1, conditions: [cond('Ready', 'True', 'Active')] })
    .build();
  t.true(nodeReady(active).ready);
  const off = node('offline')
    .withSpec({ power: 'off' })
    .withStatus({ observedGeneration: 1, conditions: [cond('Ready', 'False', 'Offline')] })
    .build();
  t.like(nodeReady(off), { ready: true, reason: 'PoweredOff' });
  const lost = node('offline')
    .withStatus({ observedGeneration: 1, conditions: [cond('Ready', 'False', 'Offline', 'no heartbeat')] })
    .build();
  t.like(nodeReady(lost), { ready: false, reason: 'Offline', message: 'no heartbeat' });
});

test('readiness node: a node declared in maintenance is ready once in it, its daemons stopped on purpose', (t) => {
  const n = (progressing: boolean) =>
    inMaintenance(
      progressing,
      { [Daemon.mgr]: {} },
      { ceph: { [Daemon.mgr]: { phase: 'pending', reason: 'Stopped', message: '' } }, daemons: { [Daemon.mgr]: false } },
    );
  t.like(nodeReady(n(false)), { ready: true, reason: 'InMaintenance' });
  t.like(daemonReady(n(false), Daemon.mgr), { ready: true, reason: 'StoppedForMaintenance' });
  t.like(nodeReady(n(true)), { ready: false }, 'still entering it');
  t.like(daemonReady(n(true), Daemon.mgr), { ready: false });
});

test('readiness disk: the OSD of a node declared in maintenance and in it is ready, stopped on purpose; entering, it is not', (t) => {
  const n = (progressing: boolean) => inMaintenance(progressing, {}, { daemons: { osds: [] } });
  const d = disk({ osd: true }, { osdId: 4, osd: running, conditions: [cond('Blocked', 'True', 'NodeInMaintenance', 'in maintenance')] });
  t.like(diskReady(d, n(false)), { ready: true, reason: 'StoppedForMaintenance' });
  t.like(diskReady(d, n(true)), { ready: false, reason: 'NodeInMaintenance' });
  const never = disk({ osd: true }, { osdId: null, osd: { phase: 'pending', reason: 'Pending', message: '' } });
  t.like(diskReady(never, n(false)), { ready: false }, 'an OSD never made is not made by maintenance');
});

test('readiness daemon: running by its loop and reported by the agent, nothing less', (t) => {
  const n = (phase: 'running' | 'failed', reported: boolean) =>
    node('active')
      .withSpec({ daemons: { [Daemon.mgr]: {} } })
      .withStatus({ ceph: { [Daemon.mgr]: { phase, reason: 'x', message: 'it failed' } }, daemons: { [Daemon.mgr]: reported } })
      .build();
  t.like(daemonReady(n('running', true), Daemon.mgr), { ready: true });
  t.like(daemonReady(n('running', false), Daemon.mgr), { ready: false, reason: 'NotRunning' });
  t.like(daemonReady(n('failed', true), Daemon.mgr), { ready: false, reason: 'Failed', message: 'it failed' });
  t.like(daemonReady(node('active').build(), Daemon.mgr), { ready: false, reason: 'Pending' });
});

test('readiness disk: an OSD wanted is ready when running and reported; blocked says why', (t) => {
  const n = node('active')
    .withStatus({ daemons: { osds: [3] } })
    .build();
  t.like(diskReady(disk({}, { osd: running, osdId: 3 }), n), { ready: true, reason: 'Running' });
  t.like(diskReady(disk({}, { osd: running, osdId: 3 }), node('active').build()), { ready: false, reason: 'NotRunning' });
  t.like(diskReady(disk({}, { osd: running, osdId: 3 }), null), { ready: true }, 'null: the agent report is left out');
  t.like(diskReady(disk({}, { osd: { phase: 'starting', reason: 'x', message: 'creating' }, osdId: null }), n), {
    ready: false,
    reason: 'Starting',
  });
  t.like(diskReady(disk({}, { conditions: [cond('Blocked', 'True', 'NoQuorum', 'waiting for quorum')] }), n), {
    ready: false,
    reason: 'NoQuorum',
  });
  t.like(diskReady({ ...disk({}, {}), metadata: meta(2) }, n), { ready: false, reason: 'NotObserved' });
});

test('readiness disk: a removal is ready once the OSD is gone; a disk without an OSD once its wipe is done', (t) => {
  const removing = disk(
    { osd: false, osdRemoval: 'remove' },
    { osd: { phase: 'draining', reason: 'x', message: '12 PGs left' }, osdId: 3 },
  );
  t.like(diskReady(removing, null), { ready: false, reason: 'Draining', message: '12 PGs left' });
  t.like(diskReady(disk({ osd: false, osdRemoval: 'remove' }, { osd: { phase: 'removed', reason: 'x', message: '' }, osdId: 3 }), null), {
    ready: true,
  });
  t.like(diskReady(disk({ osd: false }, {}), null), { ready: true, reason: 'NothingWanted' });
  t.like(diskReady(disk({ osd: false, wipeGeneration: 1 }, { observedWipeGeneration: 0 }), null), { ready: false, reason: 'WipePending' });
});

const check = (code: string, severity: HealthCheckSeen['severity'], detail: string[]): HealthCheckSeen => ({
  code,
  severity,
  message: `${code} summary`,
  count: detail.length || 1,
  detail,
});

function world(checks: HealthCheckSeen[]) {
  const n = node('active')
    .withSpec({ daemons: { [Daemon.mon]: { diskId: 'x' } } })
    .withStatus({
      observedGeneration: 1,
      conditions: [cond('Ready', 'True', 'Active')],
      ceph: { [Daemon.mon]: running },
      daemons: { [Daemon.mon]: true, osds: [3] },
    })
    .build();
  const fs = { ...doc({ observedGeneration: 1, conditions: [cond('Ready', 'True', 'Active')] }) };
  const cluster = {
    ...doc({ observedGeneration: 1, conditions: [cond('Ready', 'True', 'Quorum')] }),
    kind: 'Cluster',
    id: 'default',
    name: 'ceph',
  };
  return readiness({
    nodes: [n],
    disks: [disk({}, { osd: running, osdId: 3 })],
    others: [
      { kind: 'Cluster', doc: cluster },
      { kind: 'Filesystem', doc: fs },
    ],
    checks,
  });
}

test('readiness health: with no check every object of a converged world is ready', (t) => {
  const rows = world([]);
  t.deepEqual(rows.map((r) => `${r.kind}:${r.name}:${r.ready}`).sort(), [
    'Cluster:ceph:true',
    `Daemon:${Daemon.mon}.node-1:true`,
    'Disk:node-1:/dev/sdb:true',
    'Filesystem:cephfs:true',
    'Node:node-1:true',
  ]);
});

test('readiness health: OSD_DOWN makes its disk not ready, MON_DOWN its monitor, MDS_ALL_DOWN its filesystem; the rest is the cluster', (t) => {
  const rows = world([
    check('OSD_DOWN', 'HEALTH_WARN', ['osd.3 (root=default,host=node-1) is down']),
    check('MON_DOWN', 'HEALTH_WARN', ['mon.node-1 (rank 0) addr [v2:10.0.0.1:3300/0] is down (out of quorum)']),
    check('MDS_ALL_DOWN', 'HEALTH_ERR', ['fs cephfs is offline because no MDS is active for it.']),
    check('MGR_DOWN', 'HEALTH_WARN', []),
    check('OSD_NEARFULL', 'HEALTH_WARN', ['osd.9 is near full']),
  ]);
  const of = (kind: string) => rows.find((r) => r.kind === kind)!;
  t.like(of('Disk'), { ready: false, reason: 'Down', message: 'OSD_DOWN: osd.3 (root=default,host=node-1) is down' });
  t.deepEqual(
    of('Disk').checks.map((c) => c.code),
    ['OSD_DOWN'],
  );
  t.like(of('Daemon'), { ready: false, reason: 'Down' });
  t.like(of('Filesystem'), { ready: false, reason: 'HealthError' });
  t.true(of('Node').ready, 'a check about its monitor is the monitor’s, not the node’s');
  t.deepEqual(
    of('Cluster').checks.map((c) => c.code),
    ['MGR_DOWN', 'OSD_NEARFULL'],
    'a check naming nothing Quarry holds (osd.9) or nothing at all is the cluster’s',
  );
  t.true(of('Cluster').ready, "the cluster's own Ready is its loop's (HEALTH_ERR there already)");
});

test('readiness health: a HEALTH_WARN check that is not a down check leaves Ready alone', (t) => {
  const rows = world([check('OSD_NEARFULL', 'HEALTH_WARN', ['osd.3 is near full'])]);
  const d = rows.find((r) => r.kind === 'Disk')!;
  t.true(d.ready);
  t.deepEqual(d.checks, [
    { code: 'OSD_NEARFULL', severity: 'HEALTH_WARN', message: 'OSD_NEARFULL summary', detail: ['osd.3 is near full'] },
  ]);
});

test('readiness health: down checks of a node in maintenance say what was asked; a HEALTH_ERR still overrides', (t) => {
  const n = inMaintenance(
    false,
    { [Daemon.mon]: { diskId: 'x' } },
    { ceph: { [Daemon.mon]: running }, daemons: { [Daemon.mon]: false, osds: [] } },
  );
  const rows = (checks: HealthCheckSeen[]) => readiness({ nodes: [n], disks: [disk({}, { osd: running, osdId: 3 })], others: [], checks });
  const down = rows([
    check('OSD_DOWN', 'HEALTH_WARN', [`osd.3 (root=default,host=${n.spec.hostname}) is down`]),
    check('OSD_HOST_DOWN', 'HEALTH_WARN', [`host ${n.spec.hostname} (root=default) (1 osds) is down`]),
    check('MON_DOWN', 'HEALTH_WARN', [`mon.${n.spec.hostname} (rank 0) addr [v2:10.0.0.1:3300/0] is down (out of quorum)`]),
  ]);
  t.deepEqual(
    down.map((r) => [r.kind, r.ready, r.reason]),
    [
      ['Node', true, 'InMaintenance'],
      ['Daemon', true, 'StoppedForMaintenance'],
      ['Disk', true, 'StoppedForMaintenance'],
    ],
  );
  t.deepEqual(
    down.map((r) => r.checks.length),
    [1, 1, 1],
    'the checks stay attached',
  );
  const err = rows([check('OSD_FULL', 'HEALTH_ERR', ['osd.3 is full'])]).find((r) => r.kind === 'Disk');
  t.like(err, { ready: false, reason: 'HealthError' });
});

test('readiness node: a daemon its spec no longer names still running keeps the node not ready until it stops', (t) => {
  const n = (mgrRunning: boolean) =>
    node('active')
      .withSpec({ daemons: {} })
      .withStatus({ observedGeneration: 1, conditions: [cond('Ready', 'True', 'Active')], daemons: { [Daemon.mgr]: mgrRunning } })
      .build();
  const v = nodeReady(n(true));
  t.like(v, { ready: false, reason: 'UndeclaredDaemon' });
  t.regex(v.message, /mgr still running/);
  t.like(nodeReady(n(false)), { ready: true });
});

test('readiness node: declared in maintenance and not in it yet (waiting for its lease) is not ready, with what holds it', (t) => {
  const waiting = (blocked: boolean) =>
    node('active')
      .withSpec({ maintenance: true })
      .withStatus({
        observedGeneration: 1,
        conditions: [
          cond('Ready', 'True', 'Active'),
          ...(blocked ? [cond('Blocked', 'True', 'DisruptionBudget', 'waiting for the lease held by node-2')] : []),
        ],
      })
      .build();
  t.like(nodeReady(waiting(true)), { ready: false, reason: 'DisruptionBudget' });
  t.like(nodeReady(waiting(false)), { ready: false, reason: 'EnteringMaintenance' });
});
