// Observed equals real, on a NetnsCluster after bring-up: what Quarry serves (/ceph/metrics,
// /nodes/details, /ceph/nodes/{id}/state, the conf and its hash) against what Ceph itself says
// (`ceph status`, `ceph osd tree`, `ceph mon dump`, each daemon's admin socket), and each
// node's keys against the cluster's cephx.
import type { ExecutionContext } from 'ava';
import { createHash } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { entityOf } from '../../src/agent/ceph-host.js';
import { CommandError } from '../../src/errors.js';
import type { NetnsCluster } from './netns-cluster.js';
import { until } from './node-sandbox.js';
import type { ClusterMetrics, NodeCephState, NodeKeyrings } from '../http/bodies.js';

interface NodeDetail {
  id: string;
  hostname: string;
  ip: string;
  status: string;
  hasMon: boolean;
  monExists: boolean;
  mgrExists: boolean;
  mdsExists: boolean;
  rgwExists: boolean;
  osdCount: number;
}

export async function metricsMatchStatus(t: ExecutionContext, c: NetnsCluster): Promise<void> {
  // The cluster loop polls, and Ceph moves on meanwhile (the gateway makes its pools when it
  // likes): each round compares Quarry's answer with a fresh `ceph status`.
  let status = await c.ceph.status();
  const m = await until(
    '/ceph/metrics as ceph status says',
    async () => {
      const r = await c.admin.get<ClusterMetrics | undefined>('/ceph/metrics');
      status = await c.ceph.status();
      return r;
    },
    (r) => r.json?.pgCount === status.pgCount && r.json.poolCount === status.poolCount && r.json.health === status.health,
    30_000,
  );
  t.like(m.json, {
    health: 'HEALTH_OK',
    monCount: status.quorumNames.length,
    osdCount: status.osdCount,
    osdUp: status.osdUp,
    osdIn: status.osdIn,
    totalBytes: status.totalBytes,
  });
}

export async function nodesMatchMaps(t: ExecutionContext, c: NetnsCluster): Promise<void> {
  const [tree, mons, details] = await Promise.all([
    c.ceph.osdTree(),
    c.ceph.monDump(),
    c.admin.get('/nodes/details').then((r) => r.json as NodeDetail[]),
  ]);
  t.deepEqual(mons.quorum?.length, 3, 'all three monitors in quorum');
  for (const n of c.nodes) {
    const d = details.find((x) => x.id === n.id)!;
    t.is(d.ip, n.addr);
    // Monitors are named after the node's hostname, at the node's address.
    const mon = mons.mons.find((m) => m.name === d.hostname);
    t.truthy(mon, `mon.${d.hostname} is in the monmap`);
    t.true(
      mon!.addrs.some((a) => a.addr.startsWith(`${n.addr}:`)),
      `mon.${d.hostname} at ${n.addr}`,
    );
    t.true(d.hasMon && d.monExists);
    // CRUSH: this node's OSDs sit under the host bucket of its hostname (its UTS name), all up.
    const bucket = tree.nodes.find((x) => x.type === 'host' && x.name === n.ns);
    const osds = tree.nodes.filter((x) => x.type === 'osd' && x.host === n.ns);
    t.truthy(bucket, `host ${n.ns} in the CRUSH map`);
    t.is(d.osdCount, osds.length, `${d.hostname}: OSD count`);
    t.true(osds.every((o) => o.status === 'up'));
    const state = (await c.admin.get<NodeCephState>(`/ceph/nodes/${n.id}/state`)).json;
    t.deepEqual(
      state.osdIds,
      osds.map((o) => o.id).sort((a, b) => a - b),
      `${d.hostname}: OSD ids`,
    );
    t.like(state, { mon: true, mgr: d.mgrExists, mds: d.mdsExists, rgw: d.rgwExists });
  }
}

/** The conf every node's daemons read begins with the master's, whose hash the API serves; and
 * each running daemon, asked over its admin socket, runs with the master's values. */
export async function confIsWhatDaemonsUse(t: ExecutionContext, c: NetnsCluster): Promise<void> {
  const conf = Buffer.from((await c.admin.get<{ config: string }>('/ceph/cluster/config')).json.config, 'base64').toString('utf8');
  const hash = (await c.admin.get<{ hash: string }>('/ceph/cluster/config/hash')).json.hash;
  t.is(hash, createHash('sha256').update(conf).digest('hex'));
  for (const n of c.nodes) {
    // The agent follows the master's conf on its heartbeat.
    const local = await until(
      `${n.ns}: ceph.conf current`,
      () => readFile(n.host.conf, 'utf8'),
      (s) => s.startsWith(conf),
      30_000,
    );
    t.true(local.startsWith(conf));
  }
  const global = Object.fromEntries([...conf.split('[osd]')[0]!.matchAll(/^(\w+) = (.+)$/gm)].map((m) => [m[1]!, m[2]!]));
  let checked = 0;
  for (const n of c.nodes) {
    for (const d of await n.host.daemons()) {
      // What the daemon itself runs with, asked over its admin socket.
      const entity = entityOf(d.type, d.id);
      const asok = join(n.host.opts.runDir, `ceph-${entity}.asok`);
      const running = JSON.parse(
        (await c.runner.run('ceph', ['--admin-daemon', asok, 'config', 'show'], { timeoutMs: 30_000 })).stdout,
      ) as Record<string, string>;
      for (const k of [
        'fsid',
        'osd_pool_default_size',
        'osd_pool_default_min_size',
        'auth_cluster_required',
        'auth_allow_insecure_global_id_reclaim',
      ]) {
        t.is(running[k], global[k], `${entity} ${k}`);
      }
      // mon_host is read once, at the daemon's start: one started before the last monitor
      // joined names fewer (it learns the others from the monmap), never one the conf lacks.
      const monHost = running.mon_host ?? '';
      t.true(monHost !== '' && addrs(monHost).every((a) => addrs(global.mon_host ?? '').includes(a)), `${entity} mon_host ${monHost}`);
      checked++;
    }
  }
  t.true(checked >= 9, `${checked} daemons asked`);
}

const addrs = (monHost: string): string[] => monHost.match(/\[[^\]]+\]/g) ?? [];

/** A node's key works for its own daemon's entity and for no other node's. */
export async function keysAreTheNodes(t: ExecutionContext, c: NetnsCluster): Promise<void> {
  const [n1, n2] = c.nodes as [(typeof c.nodes)[0], (typeof c.nodes)[0]];
  const hostOf = async (id: string) => (await c.admin.get<NodeDetail[]>('/nodes/details')).json.find((d) => d.id === id)!.hostname;
  const [h1, h2] = await Promise.all([hostOf(n1.id), hostOf(n2.id)]);
  const keys = (await c.admin.get<NodeKeyrings>(`/ceph/nodes/${n2.id}/keyrings`)).json.keyrings;
  const mds2 = keys.find((k) => k.entity === `mds.${h2}`)!;
  t.truthy(mds2, `node 2's keyrings hold mds.${h2}`);
  t.false(
    keys.some((k) => k.entity.endsWith(h1)),
    "node 2's keyrings hold nothing of node 1's daemons",
  );
  // The key its MDS runs with is the one Quarry serves for it.
  t.is((await readFile(join(n2.host.dataDirOf('mds', h2), 'keyring'), 'utf8')).trim(), mds2.keyring.trim());
  const file = join(c.dir, 'mds2.keyring');
  await writeFile(file, mds2.keyring, { mode: 0o600 });
  const as = (entity: string) =>
    c.runner.run('ceph', ['-c', c.cephConf, '--connect-timeout', '10', '-n', entity, '-k', file, '--format', 'json', 'mon', 'stat'], {
      timeoutMs: 30_000,
    });
  t.is((JSON.parse((await as(`mds.${h2}`)).stdout) as { num_mons: number }).num_mons, 3, 'its own entity authenticates');
  const refused = await as(`mds.${h1}`).catch((e: unknown) => e);
  t.true(refused instanceof CommandError, "node 1's entity with node 2's key is refused");
  t.regex((refused as CommandError).stderr, /permission denied/i);
  // Least privilege (issue #12): every node runs a monitor, none was handed client.admin; the
  // master's own key works, imported as mon. after the first monitors' mkfs.
  for (const n of c.nodes) {
    const held = (await c.admin.get<NodeKeyrings>(`/ceph/nodes/${n.id}/keyrings`)).json.keyrings.map((k) => k.entity);
    t.true(held.includes('mon.'), `${n.id} holds mon.`);
    t.false(held.includes('client.admin'), `${n.id} holds no client.admin`);
  }
  t.is((await c.ceph.monStat({ timeoutMs: 30_000 })).numMons, 3);
  const runs = (await c.admin.get('/task/runs/recent')).json as Array<{
    taskName: string;
    state: string;
    createdAt: string;
    completedAt: string | null;
  }>;
  const imports = runs.filter((r) => r.taskName === 'ceph.mon.import-admin-key');
  t.true(
    imports.some((r) => r.state === 'completed'),
    'the master imported client.admin',
  );
  for (const r of imports)
    t.log(
      `client.admin import: ${r.state} after ${((Date.parse(r.completedAt ?? r.createdAt) - Date.parse(r.createdAt)) / 1000).toFixed(1)} s`,
    );
}
