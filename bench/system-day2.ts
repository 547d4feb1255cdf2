// Day 2 on the real cluster of `npm run bench -- system`, once it is HEALTH_OK: one more disk per
// node with an OSD on each (six OSDs, two per CRUSH host, so a drained OSD's PGs have somewhere
// to go in a size-3 pool) and objects written with `rados`; then a real removal
// (`ceph.remove-osd` on an OSD of node 1: declare → phase `removed`, the drain moving real data)
// and a real replacement (`ceph.replace-osd` on an OSD of node 2 and `ceph.create-osd` on a new
// disk put in that node: declare → the new disk running the same OSD id). Small helpers of its
// own: the system test's (test/system) have no disk to add yet.
import { createHash, randomBytes } from 'node:crypto';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Kind, type DiskSpec, type DiskStatusFields } from '../src/model/kinds.js';
import { untilHealthy, type Disk } from '../test/system/cluster-bringup.js';
import type { ClusterNode, NetnsCluster } from '../test/system/netns-cluster.js';
import { loopDevice, until } from '../test/system/node-sandbox.js';

const POOL = 'bench-day2';
const OBJECTS = Number(process.env.BENCH_SYSTEM_OBJECTS ?? 32);
const OBJECT_BYTES = 1 << 20;
const REPLACEMENT_BOUND_MS = Number(process.env.BENCH_SYSTEM_REPLACEMENT_MS ?? 180_000);

interface DiskRow extends Disk {
  osdState: string | null;
}

export interface SystemDay2 {
  objects: number;
  objectBytes: number;
  /** declare → removed, and → HEALTH_OK with every PG active+clean again. */
  removalMs: number;
  removalHealthyMs: number;
  /** What the drain started from (status.drain), when it was written. */
  drained: { pgs: number; bytes: number } | null;
  removalPhases: string;
  /** declare → the new disk running the old id, and → HEALTH_OK again. */
  replacementMs: number;
  replacementHealthyMs: number;
  replacementPhases: string;
  sameId: boolean;
  objectsIdentical: boolean;
  /** Why the replacement did not finish, if it did not. */
  replacementFailure: string | null;
}

const disks = (c: NetnsCluster) => c.admin.get<DiskRow[]>('/disks').then((r) => r.json);
const diskDoc = (c: NetnsCluster, id: string) => c.q.store.mustGet<DiskSpec, DiskStatusFields>(Kind.Disk, id);
const run = (c: NetnsCluster, cmd: string, args: string[]) => c.runner.run(cmd, args, { timeoutMs: 60_000 });
const ceph = (c: NetnsCluster, ...verb: string[]) => run(c, 'ceph', c.ceph.args(verb));
const rados = (c: NetnsCluster, ...args: string[]) =>
  run(c, 'rados', ['-c', c.cephConf, '-n', 'client.admin', '-k', join(dirname(c.cephConf), 'ceph.client.admin.keyring'), ...args]);
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** A new loop device in the node, reported once its agent restarts (it reads DISKS at start);
 * listed in node.devices, so the cluster's stop() detaches it. */
async function addDisk(c: NetnsCluster, n: ClusterNode): Promise<string> {
  const device = await loopDevice(c.runner, join(c.dir, n.ns, `disk-bench-${n.devices.length}.img`), 6);
  n.devices.push(device);
  n.env.DISKS = n.devices.join(',');
  await c.stopAgent(n);
  c.startAgent(n);
  return device;
}

async function eligibleDisk(c: NetnsCluster, n: ClusterNode, device: string): Promise<DiskRow> {
  const row = await until(
    `${device} of ${n.ns} reported eligible`,
    () => disks(c).then((ds) => ds.find((d) => d.nodeId === n.id && d.devicePath === device)),
    (d) => d?.eligible === true,
    120_000,
  );
  return row!;
}

async function invoke(c: NetnsCluster, operation: string, diskIds: string[]): Promise<void> {
  const r = await c.admin.post<{ results: Array<{ status: string }> }>('/invoke/disk', { operation, diskIds });
  if (r.status !== 200 || r.json.results.some((x) => x.status !== 'scheduled')) throw new Error(`${operation}: ${r.status} ${r.text}`);
}

/** The OSD phases of a disk as the store saw each write ("phase +s"), and its drain's start. */
function watchPhases(c: NetnsCluster, diskId: string, started: number) {
  const seen: string[] = [];
  let drained: { pgs: number; bytes: number } | null = null;
  const stop = c.q.store.watch(c.q.store.revision(), (e) => {
    if (e.type === 'relist' || e.doc.kind !== Kind.Disk || e.doc.id !== diskId) return;
    const status = e.doc.status as DiskStatusFields;
    const phase = status.osd?.phase;
    if (phase && !seen.at(-1)?.startsWith(`${phase} `)) seen.push(`${phase} +${((Date.now() - started) / 1000).toFixed(1)} s`);
    if (status.drain && !drained) drained = { pgs: status.drain.startPgs, bytes: status.drain.startBytes };
  });
  return { seen, drained: () => drained, stop };
}

async function writeObjects(c: NetnsCluster): Promise<Map<string, string>> {
  await ceph(c, 'osd', 'pool', 'create', POOL, '16', '16', 'replicated');
  await ceph(c, 'osd', 'pool', 'set', POOL, 'size', '3');
  await ceph(c, 'osd', 'pool', 'application', 'enable', POOL, 'rados');
  const file = join(c.dir, 'bench-object.bin');
  const sums = new Map<string, string>();
  for (let i = 0; i < OBJECTS; i++) {
    const data = randomBytes(OBJECT_BYTES);
    await writeFile(file, data);
    await rados(c, '-p', POOL, 'put', `obj-${i}`, file);
    sums.set(`obj-${i}`, sha(data));
  }
  await rm(file, { force: true });
  return sums;
}

async function objectsIdentical(c: NetnsCluster, sums: Map<string, string>): Promise<boolean> {
  const file = join(c.dir, 'bench-object-read.bin');
  let same = true;
  for (const [name, want] of sums) {
    await rados(c, '-p', POOL, 'get', name, file);
    same &&= sha(await readFile(file)) === want;
  }
  await rm(file, { force: true });
  return same;
}

/** The OSD disk of a node that got its OSD first (its lowest device path that holds one). */
async function osdDiskOf(c: NetnsCluster, n: ClusterNode): Promise<DiskRow> {
  const row = (await disks(c))
    .filter((d) => d.nodeId === n.id && d.osdId !== null)
    .sort((a, b) => a.devicePath.localeCompare(b.devicePath))[0];
  if (!row) throw new Error(`${n.ns} has no OSD disk`);
  return row;
}

/** `osds`: the OSDs the bring-up made (one per node). */
export async function systemDay2(c: NetnsCluster, osds: number): Promise<SystemDay2> {
  const [n1, n2] = c.nodes as [ClusterNode, ClusterNode];
  // A second OSD on each node.
  const added = [];
  for (const n of c.nodes) added.push(await eligibleDisk(c, n, await addDisk(c, n)));
  await invoke(
    c,
    'ceph.create-osd',
    added.map((d) => d.id),
  );
  const six = osds + c.nodes.length;
  await untilHealthy(c, six, `HEALTH_OK with ${six} OSDs`);
  const sums = await writeObjects(c);
  await untilHealthy(c, six, 'every PG active+clean with the objects');

  // Removal: declare → removed (drain, safe-to-destroy, stop, purge, verified wipe).
  const victim = await osdDiskOf(c, n1);
  let started = Date.now();
  const removal = watchPhases(c, victim.id, started);
  await invoke(c, 'ceph.remove-osd', [victim.id]);
  await until(
    `osd.${victim.osdId} removed`,
    () => diskDoc(c, victim.id),
    (d) => d.status.osd?.phase === 'removed',
    600_000,
  );
  const removalMs = Date.now() - started;
  await untilHealthy(c, six - 1, `HEALTH_OK with ${six - 1} OSDs after the removal`);
  const removalHealthyMs = Date.now() - started;
  removal.stop();
  console.log(
    `  day 2 removal: ${(removalMs / 1000).toFixed(1)} s to removed, ${(removalHealthyMs / 1000).toFixed(1)} s to HEALTH_OK (${removal.seen.join(' → ')})`,
  );

  // Replacement: a new disk in node 2 takes the id of the OSD the operator replaces there.
  const fresh = await eligibleDisk(c, n2, await addDisk(c, n2));
  const old = await osdDiskOf(c, n2);
  started = Date.now();
  const replacement = watchPhases(c, old.id, started);
  await invoke(c, 'ceph.replace-osd', [old.id]);
  await invoke(c, 'ceph.create-osd', [fresh.id]);
  // Bounded, and reported rather than thrown: the removal's numbers are worth printing anyway.
  let failure = null as string | null;
  const running = await until(
    `a new disk running osd.${old.osdId}`,
    () => diskDoc(c, fresh.id),
    (d) => d.status.osd?.phase === 'running' && (d.status.osdId ?? null) !== null,
    REPLACEMENT_BOUND_MS,
  ).catch(async (err: unknown) => {
    const d = await diskDoc(c, fresh.id);
    failure = `${err instanceof Error ? err.message.split(';')[0] : String(err)}: ${d.status.osd?.phase} ${d.status.osd?.message ?? ''}`;
    return d;
  });
  const replacementMs = Date.now() - started;
  if (!failure) await untilHealthy(c, six - 1, `HEALTH_OK with ${six - 1} OSDs after the replacement`);
  const replacementHealthyMs = Date.now() - started;
  replacement.stop();
  return {
    objects: OBJECTS,
    objectBytes: OBJECT_BYTES,
    removalMs,
    removalHealthyMs,
    drained: removal.drained(),
    removalPhases: removal.seen.join(' → '),
    replacementMs,
    replacementHealthyMs,
    replacementPhases: replacement.seen.join(' → '),
    sameId: running.status.osdId === old.osdId,
    objectsIdentical: await objectsIdentical(c, sums),
    replacementFailure: failure,
  };
}
