// The operator's bring-up of a whole cluster through the API only, on a NetnsCluster: three
// monitors, a manager, an OSD on every eligible disk, two MDS (one active, one standby: a lone
// MDS is Ceph's MDS_INSUFFICIENT_STANDBY warning), a filesystem with its pools, a gateway and
// an RGW user. Everything is declared at once; the loops order the work. Shared by the system
// test and `npm run bench -- system`.
import type { Client, Reply } from '../http/client.js';
import type { CephStatus } from '../../src/clients/ceph.js';
import type { NetnsCluster } from './netns-cluster.js';
import { until } from './node-sandbox.js';
import type { InvokeResults } from '../http/bodies.js';

export const FS = { name: 'cephfs', metadataPool: 'cephfs_metadata', metadataPG: 8, dataPool: 'cephfs_data', dataPG: 8 };
export const RGW_PORT = 7480;

export interface Disk {
  id: string;
  nodeId: string;
  devicePath: string;
  eligible: boolean;
  isMon: boolean;
  osdId: number | null;
}

export interface BringUp {
  /** ms from the first API call to HEALTH_OK with every PG active+clean. */
  healthyAfterMs: number;
  status: CephStatus;
  userKeys: { accessKey: string; secretKey: string };
  gatewayUrl: string;
  /** Each change of health (its checks) or of PG states while waiting, with its time. */
  path: string[];
}

async function ok<T>(r: Promise<Reply<T>>, what: string): Promise<Reply<T>> {
  const reply = await r;
  if (reply.status >= 300) throw new Error(`${what}: ${reply.status} ${reply.text}`);
  return reply;
}

/** HEALTH_OK is not enough on its own (docs/real-components.md): PGs still creating can show it. */
export const healthy = (s: CephStatus, osds: number): boolean =>
  s.health === 'HEALTH_OK' &&
  s.quorumNames.length === 3 &&
  s.osdUp === osds &&
  s.osdIn === osds &&
  s.pgCount > 0 &&
  s.pgStates.every((p) => p.state === 'active+clean');

/** Waits for HEALTH_OK with `osds` OSDs up and in and every PG active+clean. */
export const untilHealthy = (c: NetnsCluster, osds: number, what: string, ms = 300_000): Promise<CephStatus> =>
  until(
    what,
    () => c.ceph.status(),
    (s) => healthy(s, osds),
    ms,
  );

export async function waitNodesReady(c: NetnsCluster, disksPerNode: number): Promise<Disk[]> {
  const ids = c.nodes.map((n) => n.id);
  await until(
    'every node active',
    () => c.admin.get('/nodes/details'),
    (r) =>
      ids.every((id) => Array.isArray(r.json) && r.json.some((n: { id: string; status: string }) => n.id === id && n.status === 'active')),
    120_000,
  );
  return until(
    'every disk reported',
    () => c.admin.get<Disk[]>('/disks').then((r) => r.json),
    (ds) => ds.length === ids.length * disksPerNode,
    60_000,
  );
}

export async function bringUp(c: NetnsCluster, disks: Disk[]): Promise<BringUp> {
  const api = c.admin;
  const [n1, n2, n3] = c.nodes as [(typeof c.nodes)[0], (typeof c.nodes)[0], (typeof c.nodes)[0]];
  const diskOf = (nodeId: string, k: number) =>
    disks.filter((d) => d.nodeId === nodeId).sort((a, b) => a.devicePath.localeCompare(b.devicePath))[k]!;
  const started = Date.now();
  for (const n of c.nodes) await ok(api.post('/ceph/mon/create', { nodeId: n.id, diskId: diskOf(n.id, 0).id }), 'mon create');
  await ok(api.post('/ceph/mgr', { nodeId: n1.id }), 'mgr');
  for (const n of [n1, n2]) await ok(api.post('/ceph/mds', { nodeId: n.id }), 'mds');
  await ok(api.post('/gateways/rgw/deploy', { nodeId: n3.id }), 'rgw deploy');
  // An OSD on every disk that is still eligible once the monitors took theirs.
  const eligible = (await ok(api.get<Disk[]>('/disks'), 'disks')).json.filter((d) => d.eligible).map((d) => d.id);
  const osds = await ok(api.post<InvokeResults>('/invoke/disk', { operation: 'ceph.create-osd', diskIds: eligible }), 'create-osd');
  const rejected = osds.json.results.filter((r) => r.status !== 'scheduled');
  if (rejected.length || eligible.length !== c.nodes.length)
    throw new Error(`OSDs: ${eligible.length} eligible, rejected ${JSON.stringify(rejected)}`);
  await ok(api.post('/ceph/fs', FS), 'fs');
  // 201 with the keys once RGW has the user, 202 while it waits for a gateway: ask again.
  const userKeys = await userWithKeys(api, 'qsys-user', 'Quarry system test');

  // What stood between the cluster and HEALTH_OK, and when: the bring-up's critical path.
  const path: string[] = [];
  const status = await until(
    'HEALTH_OK with every PG active+clean',
    () => c.ceph.status(),
    (s) => {
      const what =
        s.health === 'HEALTH_OK' ? s.pgStates.map((p) => `${p.count} ${p.state}`).join(', ') : s.healthChecks.map((h) => h.code).join(' ');
      if (!path.at(-1)?.endsWith(` ${what}`)) path.push(`${((Date.now() - started) / 1000).toFixed(1)} s ${s.health} ${what}`);
      return healthy(s, eligible.length);
    },
    150_000,
  );
  const healthyAfterMs = Date.now() - started;
  const gatewayUrl = `http://${n3.addr}:${RGW_PORT}`;
  await until(
    'the gateway answering S3',
    () => fetch(`${gatewayUrl}/`).then((r) => r.status),
    (s) => s === 200,
    60_000,
  );
  return { healthyAfterMs, status, userKeys, gatewayUrl, path };
}

export async function userWithKeys(api: Client, userId: string, displayName: string): Promise<{ accessKey: string; secretKey: string }> {
  const r = await until(
    `RGW user ${userId}`,
    () => api.post<{ keys: Array<{ accessKey: string; secretKey: string }> }>('/gateways/rgw/users', { userId, displayName }),
    (x) => x.status !== 202,
    150_000,
  );
  if (r.status !== 201) throw new Error(`RGW user ${userId}: ${r.status} ${r.text}`);
  return r.json.keys[0]!;
}
