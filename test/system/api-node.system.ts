// The whole chain on one real node, driven through the API only: a real Quarry (DRIVER=real,
// memory store, HTTP on 127.0.0.1:0) and the real agent program (startAgent: its own session,
// real lsblk/ip inventory restricted to two loop devices, the real steps and Runner). An admin
// declares a monitor, a manager, an OSD, an MDS and a gateway; the loops hand the node-level
// steps to the agent and run the master-level ones (keys, `osd new`) with the master's own CLI.
import test from 'ava';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startAgent } from '../../src/agent/main.js';
import { CephHost } from '../../src/agent/ceph-host.js';
import type { AgentConfig } from '../../src/agent/config.js';
import { CephClient } from '../../src/clients/ceph.js';
import { loadConfig } from '../../src/config.js';
import { ZxRunner } from '../../src/exec/zx-runner.js';
import { CredentialFile } from '../../src/fleet/credential-file.js';
import { silentLogger } from '../../src/log.js';
import { startQuarry } from '../../src/main.js';
import { CLUSTER_ID, CephKind, type ClusterSpec, type ClusterStatus } from '../../src/model/ceph-kinds.js';
import { createMemoryStore } from '../../src/store/index.js';
import { MemoryLogStore } from '../../src/tasks/logs.js';
import { Client } from '../http/client.js';
import type { ClusterMetrics, NodeCephState } from '../http/bodies.js';
import { freePortWindow, loopDevice, stopAll, TEST_CONF, unmountUnder, until } from './node-sandbox.js';

const ADMIN_PASSWORD = 'system-admin-password';

test('api: monitor, manager, OSD, MDS and gateway on one real node through the API and the agent program', async (t) => {
  const runner = new ZxRunner();
  const dir = await mkdtemp(join(tmpdir(), 'qceph-api-'));
  const devices: string[] = [];
  const port = await freePortWindow();
  const agentConf: AgentConfig = {
    masterUrl: '',
    credentialFile: join(dir, 'agent', 'credential.json'),
    dataDir: join(dir, 'node', 'data'),
    runDir: join(dir, 'node', 'run'),
    logDir: join(dir, 'node', 'log'),
    publicAddr: '127.0.0.1',
    portRange: { min: port + 10, max: port + 99 },
    extraConf: TEST_CONF,
    hostname: 'qceph-n1',
    disks: devices,
    heartbeatMs: 500,
    claimWaitMs: 2_000,
    parallelSteps: 4,
    // Never this machine's own reboot: this test sends no power step, and one sent would fail.
    rebootCommand: ['false'],
    poweroffCommand: ['false'],
    bootIdFile: '/proc/sys/kernel/random/boot_id',
  };
  const stops: Array<() => Promise<unknown>> = [];
  t.teardown(async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await stopAll([new CephHost({ runner, ...agentConf })]);
    // The monitor's store is on its own disk, mounted at its data dir (docs/real-components.md).
    await unmountUnder(runner, dir);
    for (const d of devices) await runner.run('losetup', ['-d', d], { timeoutMs: 10_000 });
    await rm(dir, { recursive: true, force: true });
  });
  // One disk for the monitor's store, one for the OSD: each must be eligible (≥ 5 GiB).
  for (const i of [0, 1]) devices.push(await loopDevice(runner, join(dir, `disk${i}.img`), 6));

  const started = Date.now();
  const q = await startQuarry({
    config: loadConfig({
      DRIVER: 'real',
      LAB_NODES: '0',
      PORT: '0',
      HOST: '127.0.0.1',
      STATE_DIR: join(dir, 'master'),
      ADMIN_PASSWORD,
      HEARTBEAT_TIMEOUT_MS: '10000',
      RESYNC_MS: '5000',
    }),
    log: silentLogger,
    store: await createMemoryStore(),
    logs: new MemoryLogStore(),
    print: () => undefined,
    auth: { scrypt: { N: 2 ** 10, r: 8, p: 1 } },
    retryBaseMs: 1_000,
    runTimeoutMs: 180_000,
    // A start's grace is generous: on a loaded 2-core machine an OSD may take seconds to show
    // in the agent's report, and a restart in that window would kill a booting OSD.
    cephTiming: { pollMs: 1_000, queryTimeoutMs: 15_000, startGraceMs: 20_000, blockedRecheckMs: 1_000, monGatherMs: 1_000 },
  });
  stops.push(() => q.stop());
  // The cluster's settings have no API yet: a private port window, one copy of each object.
  await q.store.mutateSpec<ClusterSpec>(CephKind.Cluster, CLUSTER_ID, (c) => ({
    ...c.spec,
    monPort: port,
    publicNetwork: '127.0.0.0/8',
    poolDefaults: { size: 1, minSize: 1 },
  }));

  // The node network-boots and installs (the gateway's boot answers), which writes its first credential.
  const boot = await q.gateway.pxeBoot('02:00:00:00:0c:01');
  await q.gateway.fetchImage(boot.nodeId);
  new CredentialFile(agentConf.credentialFile).saveAgentSecret({ ...boot.credential!, rotated: false });
  let agent = await startAgent({ ...agentConf, masterUrl: q.url }, silentLogger);
  stops.push(() => agent.stop());

  // On a failure, what the loops did and saw: the first thing anyone debugging CI needs.
  t.teardown(async () => {
    if (t.passed) return;
    for (const r of (await q.tasks.recent(50)).reverse())
      t.log(`${r.spec.taskName} ${JSON.stringify(r.spec.args)} ${r.status.state} ${r.status.error ?? ''}`);
    const c = await q.store.get<ClusterSpec, ClusterStatus>(CephKind.Cluster, CLUSTER_ID);
    t.log(JSON.stringify(c?.status.conditions));
    for (const f of await readdir(agentConf.logDir).catch(() => [] as string[])) {
      const tail = (await readFile(join(agentConf.logDir, f), 'utf8')).trim().split('\n').slice(-8).join('\n');
      t.log(`${f}:\n${tail}`);
    }
  });
  const admin = new Client(q.url);
  t.is((await admin.post('/user/login', { username: 'admin', password: ADMIN_PASSWORD })).status, 200);
  const nodeId = boot.nodeId;
  await until(
    'the node active',
    () => admin.get('/nodes/details'),
    (r) => Array.isArray(r.json) && r.json.some((n: { id: string; status: string }) => n.id === nodeId && n.status === 'active'),
  );
  const disks = await until(
    'both disks',
    () => admin.get<Array<{ id: string; devicePath: string }>>('/disks').then((r) => r.json),
    (ds) => devices.every((d) => ds.some((x) => x.devicePath === d)),
  );
  const diskAt = (path: string) => disks.find((d) => d.devicePath === path)!.id;

  const scheduled = async (path: string, body: unknown) => {
    const r = await admin.post(path, body);
    t.is(r.status, 200, `${path}: ${r.text}`);
  };
  const firstCall = Date.now();
  await scheduled('/ceph/mon/create', { nodeId, diskId: diskAt(devices[0]!) });
  await until(
    'monitor quorum in /ceph/metrics',
    () => admin.get<ClusterMetrics>('/ceph/metrics'),
    (r) => r.status === 200 && r.json.monCount === 1,
    60_000,
  );
  for (const operation of ['ceph.create-mgr', 'ceph.create-mds', 'ceph.create-rgw'])
    await scheduled('/invoke/node', { operation, nodeIds: [nodeId] });
  await scheduled('/ceph/osd', { nodeId, diskId: diskAt(devices[1]!) });

  const metrics = await until(
    'the OSD up and in',
    () => admin.get<ClusterMetrics | undefined>('/ceph/metrics'),
    (r) => r.json?.osdUp === 1 && r.json.osdIn === 1,
    180_000,
  );
  const state = await until(
    'every daemon running on the node',
    () => admin.get<NodeCephState | undefined>(`/ceph/nodes/${nodeId}/state`),
    (r) => r.json !== undefined && r.json.mon && r.json.mgr && r.json.mds && r.json.rgw && r.json.osdIds.length === 1,
    180_000,
  );
  const secs = (from: number): string => ((Date.now() - from) / 1000).toFixed(1);
  t.log(`every daemon running ${secs(firstCall)} s after the first API call (${secs(started)} s after Quarry started)`);

  // Observed equals real: the master's own CLI (its files written from the store) agrees.
  const ceph = new CephClient({
    runner,
    conf: join(dir, 'master', 'ceph', 'ceph.conf'),
    name: 'client.admin',
    keyring: join(dir, 'master', 'ceph', 'ceph.client.admin.keyring'),
  });
  const status = await until(
    'mgr active',
    () => ceph.status(),
    (s) => s.mgrAvailable,
  );
  t.deepEqual(status.quorumNames.length, 1);
  t.like(status, { osdUp: 1, osdIn: 1, monCount: 1 });
  t.deepEqual(state.json?.osdIds, [0]);
  t.is(metrics.json?.osdCount, 1);
  await until(
    'rgw answering S3 on 7480',
    () => fetch('http://127.0.0.1:7480/').then((r) => r.status),
    (c) => c === 200,
  );

  // The agent stops (an upgrade, a crash) and comes back: the daemons never noticed.
  const host = new CephHost({ runner, ...agentConf });
  const pids = await Promise.all((['mon', 'mgr', 'mds'] as const).map((type) => host.pidOf(type, boot.hostname)));
  await agent.stop();
  t.deepEqual(await host.report(), { mon: true, mgr: true, mds: true, rgw: true, nfs: false, osds: [0] });
  agent = await startAgent({ ...agentConf, masterUrl: q.url }, silentLogger);
  t.deepEqual(await Promise.all((['mon', 'mgr', 'mds'] as const).map((type) => host.pidOf(type, boot.hostname))), pids);

  // An OSD killed outright is reported gone and started again by the OSD loop through the agent.
  const osdPid = (await host.pidOf('osd', '0'))!;
  process.kill(osdPid, 'SIGKILL');
  await until(
    'osd.0 restarted',
    () => host.pidOf('osd', '0'),
    (p) => p !== null && p !== osdPid,
    120_000,
  );
  await until(
    'the restart run completed',
    () => q.tasks.recent(100),
    (runs) =>
      runs.some(
        (r) =>
          r.spec.taskName === 'ceph.daemon.restart' &&
          r.spec.args.daemon === 'osd' &&
          r.spec.args.id === 0 &&
          r.status.state === 'completed',
      ),
  );
  await until(
    'the OSD up again',
    () => ceph.osdStat(),
    (o) => o.numUpOsds === 1,
    120_000,
  );
});
