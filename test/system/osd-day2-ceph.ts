// What the OSD day-2 system test asks Ceph directly, through the master's CLI files (the conf
// and client.admin keyring Quarry writes from its store): objects written and read back with
// `rados`, with their checksums, and the OSD's place in `osd tree` and `osd dump`.
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { NetnsCluster } from './netns-cluster.js';

export const POOL = 'day2';

/** A `ceph` command's JSON answer (pool commands answer nothing: null). */
const ceph = async <T>(c: NetnsCluster, ...verb: string[]): Promise<T> => {
  const out = (await c.runner.run('ceph', c.ceph.args(verb), { timeoutMs: 60_000 })).stdout.trim();
  return (out ? JSON.parse(out) : null) as T;
};

const rados = (c: NetnsCluster, ...args: string[]) =>
  c.runner.run('rados', ['-c', c.cephConf, '-n', 'client.admin', '-k', join(dirname(c.cephConf), 'ceph.client.admin.keyring'), ...args], {
    timeoutMs: 60_000,
  });

const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** A size-3 replicated pool with the `rados` application (else POOL_APP_NOT_ENABLED). */
export async function createPool(c: NetnsCluster): Promise<void> {
  await ceph(c, 'osd', 'pool', 'create', POOL, '8', '8', 'replicated');
  await ceph(c, 'osd', 'pool', 'set', POOL, 'size', '3');
  await ceph(c, 'osd', 'pool', 'set', POOL, 'min_size', '2');
  await ceph(c, 'osd', 'pool', 'application', 'enable', POOL, 'rados');
}

/** `count` objects of random bytes (64 KiB to 1 MiB), each name → its sha256. */
export async function writeObjects(c: NetnsCluster, count: number): Promise<Map<string, string>> {
  const sums = new Map<string, string>();
  const file = join(c.dir, 'object.bin');
  for (let i = 0; i < count; i++) {
    const data = randomBytes(64 * 1024 * (1 + (i % 16)));
    await writeFile(file, data);
    await rados(c, '-p', POOL, 'put', `obj-${i}`, file);
    sums.set(`obj-${i}`, sha256(data));
  }
  await rm(file, { force: true });
  return sums;
}

/** Each object read back, name → its sha256 now. */
export async function readObjects(c: NetnsCluster, names: Iterable<string>): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const file = join(c.dir, 'object-read.bin');
  for (const name of names) {
    await rados(c, '-p', POOL, 'get', name, file);
    out.set(name, sha256(await readFile(file)));
  }
  await rm(file, { force: true });
  return out;
}

interface TreeNode {
  id: number;
  name: string;
  type: string;
  status?: string;
  children?: number[];
}

/** `osd tree`: each OSD id → the CRUSH host it is under, and its status. */
export async function osdTree(c: NetnsCluster): Promise<Map<number, { host: string | null; status: string }>> {
  const { nodes } = await ceph<{ nodes: TreeNode[] }>(c, 'osd', 'tree');
  const hostOf = new Map<number, string>();
  for (const h of nodes.filter((n) => n.type === 'host')) for (const k of h.children ?? []) hostOf.set(k, h.name);
  return new Map(nodes.filter((n) => n.type === 'osd').map((n) => [n.id, { host: hostOf.get(n.id) ?? null, status: n.status ?? '' }]));
}

/** `osd tree`'s racks: each rack's hosts (sorted), and the buckets right under the root. */
export async function crushTree(c: NetnsCluster): Promise<{ racks: Record<string, string[]>; rootChildren: string[] }> {
  const { nodes } = await ceph<{ nodes: TreeNode[] }>(c, 'osd', 'tree');
  const nameOf = (id: number) => nodes.find((n) => n.id === id)?.name ?? String(id);
  const racks = Object.fromEntries(
    nodes
      .filter((n) => n.type === 'rack')
      .map((r) => [r.name, (r.children ?? []).map(nameOf).sort()] as const)
      .sort((a, b) => a[0].localeCompare(b[0])),
  );
  const root = nodes.find((n) => n.type === 'root');
  return { racks, rootChildren: (root?.children ?? []).map(nameOf).sort() };
}

/** `osd dump`'s OSDs: id → up, in, state and uuid. */
export async function osdDump(c: NetnsCluster): Promise<Map<number, { up: boolean; in: boolean; state: string[]; uuid: string }>> {
  const { osds } = await ceph<{ osds: Array<{ osd: number; up: number; in: number; state: string[]; uuid: string }> }>(c, 'osd', 'dump');
  return new Map(osds.map((o) => [o.osd, { up: o.up === 1, in: o.in === 1, state: o.state, uuid: o.uuid }]));
}

/** Whether `ceph auth get <entity>` finds the key (a failed command: it does not). */
export async function authExists(c: NetnsCluster, entity: string): Promise<boolean> {
  return c.runner.run('ceph', c.ceph.args(['auth', 'get', entity]), { timeoutMs: 60_000 }).then(
    () => true,
    () => false,
  );
}

/** `blkid -p` of a device: what signature it finds (empty: none; blkid exits 2). */
export function blkidProbe(device: string): string {
  const r = spawnSync('blkid', ['-p', device], { encoding: 'utf8' });
  return r.status === 2 ? '' : `${r.stdout}${r.stderr}`.trim() || `blkid exit ${r.status}`;
}
