// Issue 14 on real daemons: OSD day 2 on the three namespace nodes, with data. The cluster comes
// up from a spec file in Quarry's watched folder (a monitor on each node's first disk, a
// manager, an OSD on every other disk: 6 OSDs); objects are written with `rados` and their
// checksums kept. Then an OSD is removed by `state: absent` in the file (drained, purged, its
// disk wiped and eligible again), and a dead disk (OSD killed, loop device detached) is replaced
// by a new one that takes the same OSD id. After each, every object reads back identical and
// every PG is active+clean. The tests share one cluster and run in order.
import test from 'ava';
import type { ExecutionContext } from 'ava';
import { untilHealthy, waitNodesReady, type Disk } from './cluster-bringup.js';
import { monStoresOnTheirDisks } from './cluster-mon-disk.js';
import { NetnsCluster, type ClusterNode } from './netns-cluster.js';
import { until } from './node-sandbox.js';
import { authExists, blkidProbe, createPool, crushTree, osdDump, osdTree, readObjects, writeObjects } from './osd-day2-ceph.js';
import { clusterSpec, distinctPhases, RACKS, SPEC_FILE, watchDisk, writeSpec } from './osd-day2-spec.js';

const DISKS_PER_NODE = 3;
const OSDS = 6;
const OBJECTS = 48;
const REMOVAL = ['draining', 'stopping', 'purging', 'zapping', 'removed'];

interface DiskView extends Disk {
  serial: string;
  reasons: string[];
  osdState: string | null;
  reason: string | null;
  message: string;
  progress: { pgs: number; startPgs: number; bytes: number; startBytes: number } | null;
  history: Array<{ event: string; osdId: number | null; otherSerial?: string }>;
  replacedBy: string | null;
  replaces: string | null;
}

let cluster: NetnsCluster | undefined;
let sums: Map<string, string> | undefined;
/** What the file adds per node id after `all: true`. */
const extra: Record<string, Array<Record<string, string>>> = {};

const need = <T>(v: T | undefined, what: string): T => {
  if (v === undefined) throw new Error(`${what} is not there: an earlier test failed`);
  return v;
};

const disks = (c: NetnsCluster) => c.admin.get<DiskView[]>('/disks').then((r) => r.json);
const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** On a failure, what the loops did, what the folder said and what the daemons said. */
function explainOnFailure(t: ExecutionContext): void {
  t.teardown(async () => {
    if (t.passed || !cluster?.q) return;
    for (const r of (await cluster.q.tasks.recent(40)).reverse())
      t.log(`${r.metadata.createdAt} ${r.spec.taskName} ${JSON.stringify(r.spec.args)} ${r.status.state} ${r.status.error ?? ''}`);
    t.log(`/specs/status: ${(await cluster.admin.get('/specs/status')).text}`);
    for (const d of await disks(cluster).catch(() => []))
      t.log(`${d.devicePath} osd.${d.osdId} ${d.osdState} ${d.reason ?? ''} ${d.message} eligible=${d.eligible} ${d.reasons.join(',')}`);
    for (const tail of await cluster.logTails()) t.log(tail);
  });
}

async function objectsIdentical(t: ExecutionContext, c: NetnsCluster): Promise<void> {
  const want = need(sums, 'the objects');
  const got = await readObjects(c, want.keys());
  t.deepEqual(got, want, 'every object reads back with the same sha256');
}

const clean = (c: NetnsCluster, osds: number, what: string) => untilHealthy(c, osds, what, 240_000);

test.before(async () => {
  cluster = await NetnsCluster.start({ nodes: 3, disksPerNode: DISKS_PER_NODE, diskGoneGraceMs: 5_000 });
});

// Also after a failure: nothing may survive the run.
test.after.always(async () => {
  if (!cluster) return;
  await cluster.stop();
  const left = await cluster.leftovers();
  if (left.length) throw new Error(`teardown left behind:\n${left.join('\n')}`);
});

test.serial('osd day 2: a spec file brings up three monitors on their disks, a manager and six OSDs to HEALTH_OK', async (t) => {
  explainOnFailure(t);
  const c = need(cluster, 'the cluster');
  await waitNodesReady(c, DISKS_PER_NODE);
  const started = Date.now();
  await writeSpec(c, await clusterSpec(c));
  // No pool yet (the manager makes device_health_metrics in its time): no PG is not clean.
  const s = await until(
    'HEALTH_OK with six OSDs',
    () => c.ceph.status(),
    (x) =>
      x.health === 'HEALTH_OK' &&
      x.quorumNames.length === 3 &&
      x.osdUp === OSDS &&
      x.osdIn === OSDS &&
      x.pgStates.every((p) => p.state === 'active+clean'),
    270_000,
  );
  t.log(`HEALTH_OK with ${OSDS} OSDs ${secs(Date.now() - started)} after the spec file was written`);
  t.is(s.quorumNames.length, 3);
  // Once made, an OSD's BlueStore shows as a filesystem: the file's `all` still names its disk.
  const file = (await c.admin.get<Array<{ file: string; state: string; orphans: unknown[] }>>('/specs/status')).json.find(
    (f) => f.file === SPEC_FILE,
  );
  t.like(file, { state: 'applied', orphans: [] });
  const ds = await disks(c);
  for (const n of c.nodes) {
    const mine = ds.filter((d) => d.nodeId === n.id);
    t.deepEqual(
      mine.filter((d) => d.isMon).map((d) => d.devicePath),
      [n.devices[0]],
      `${n.ns}: the monitor on its first disk`,
    );
    t.is(mine.filter((d) => d.osdId !== null && d.osdState === 'running').length, 2, `${n.ns}: an OSD on each other disk`);
  }
});

test.serial('osd day 2: objects written with rados into a size-3 pool, every PG active+clean', async (t) => {
  explainOnFailure(t);
  const c = need(cluster, 'the cluster');
  await createPool(c);
  sums = await writeObjects(c, OBJECTS);
  const s = await clean(c, OSDS, 'every PG active+clean with the pool');
  t.true(s.pgStates.every((p) => p.state === 'active+clean'));
  await objectsIdentical(t, c);
});

test.serial('osd day 2: labels put two nodes in rack r1 and one in r2: ceph osd tree shows them, and the node answers', async (t) => {
  explainOnFailure(t);
  const c = need(cluster, 'the cluster');
  const details = (
    await c.admin.get<Array<{ id: string; hostname: string; name: string; labels: Record<string, string> }>>('/nodes/details')
  ).json;
  // CRUSH names a host bucket by the machine's own hostname (not Quarry's): found by its OSDs.
  const [ds, osds] = await Promise.all([disks(c), osdTree(c)]);
  const hostOf = (i: number) => osds.get(ds.find((d) => d.nodeId === c.nodes[i]!.id && d.osdId !== null)!.osdId!)!.host!;
  const want = { r1: [hostOf(0), hostOf(1)].sort(), r2: [hostOf(2)] };
  const tree = await until(
    'the hosts under their racks in ceph osd tree',
    () => crushTree(c),
    (x) => JSON.stringify(x.racks) === JSON.stringify(want),
    120_000,
  );
  t.deepEqual(tree.racks, want);
  t.deepEqual(tree.rootChildren, ['r1', 'r2'], 'the racks hang from the root, the hosts no longer do');
  t.deepEqual(
    c.nodes.map((n) => details.find((d) => d.id === n.id)).map((d) => [d?.name, d?.labels]),
    RACKS.map((r, i) => [`day2-${i + 1}`, { rack: r }]),
  );
  // Ceph moved the data to match; nothing was lost on the way.
  await clean(c, OSDS, 'every PG active+clean under the racks');
  await objectsIdentical(t, c);
});

test.serial(
  "osd day 2: state absent in the file drains, stops, purges and zaps node 1's OSD; the disk is eligible, Ceph forgets the id, the data stays",
  async (t) => {
    explainOnFailure(t);
    const c = need(cluster, 'the cluster');
    const n1 = c.nodes[0]!;
    const disk = (await disks(c))
      .filter((d) => d.nodeId === n1.id && d.osdId !== null)
      .sort((a, b) => a.devicePath.localeCompare(b.devicePath))[0];
    if (!disk) return t.fail('node 1 has no OSD disk');
    const id = disk.osdId!;
    const watch = watchDisk(c, disk.id);
    const started = Date.now();
    extra[n1.id] = [{ serial: disk.serial, state: 'absent' }];
    await writeSpec(c, await clusterSpec(c, extra));
    // The drain as /disks shows it, sampled while waiting (the store's watch has every write).
    const progress: string[] = [];
    const done = await until(
      `osd.${id} removed and its disk eligible`,
      async () => {
        const d = (await disks(c)).find((x) => x.id === disk.id)!;
        if (d.progress && progress.at(-1) !== JSON.stringify(d.progress)) progress.push(JSON.stringify(d.progress));
        return d;
      },
      (d) => d.osdState === 'removed' && d.eligible,
      270_000,
    );
    watch.stop();
    const removedAt = watch.phases.find((p) => p.phase === 'removed')?.at ?? Date.now();
    t.log(`osd.${id} on ${disk.devicePath}: removed ${secs(removedAt - started)} after the file changed`);
    t.log(`phases: ${watch.phases.map((p) => `${p.phase} +${secs(p.at - started)}`).join(' → ')}`);
    if (watch.drains.length)
      t.log(`drain progress: ${watch.drains.map((d) => `pgs ${d.pgs}/${d.startPgs} bytes ${d.bytes}/${d.startBytes}`).join(' → ')}`);
    else t.log('no drain progress written: Ceph drained it before the first recheck');
    // A drain that lasted several rechecks shows its progress; an instant one need not.
    const at = (phase: string) => watch.phases.find((p) => p.phase === phase)?.at ?? 0;
    if (at('stopping') - at('draining') > 5_000) t.true(watch.drains.length > 0, 'a drain that took time showed its progress');
    t.log(`/disks progress seen: ${progress.join(' → ') || 'none'}`);
    // `zapping` only when the purge, started beside the zap, is done before it (the usual case:
    // a verified wipe takes longer than a monitor command).
    const seen = distinctPhases(watch).filter((p) => REMOVAL.includes(p));
    t.deepEqual(
      seen,
      REMOVAL.filter((p) => p !== 'zapping' || seen.includes(p)),
      'every phase of the removal, in order',
    );
    t.is(done.osdId, null);
    t.deepEqual(done.reasons, []);
    t.true(
      done.history.some((h) => h.event === 'removed' && h.osdId === id),
      JSON.stringify(done.history),
    );
    t.false((await osdTree(c)).has(id), `osd.${id} is gone from osd tree`);
    t.false((await osdDump(c)).has(id), `osd.${id} is gone from osd dump`);
    t.false(await authExists(c, `osd.${id}`), `auth get osd.${id} fails`);
    t.is(blkidProbe(disk.devicePath), '', `blkid -p finds no signature on ${disk.devicePath}`);
    await clean(c, OSDS - 1, 'every PG active+clean on five OSDs');
    await objectsIdentical(t, c);
  },
);

/** The node's agent stopped, its OSD on `device` killed and the loop device detached, then the
 * agent started again reporting `added` in its place. */
async function diskDies(c: NetnsCluster, n: ClusterNode, id: number, device: string, added: string): Promise<void> {
  await c.stopAgent(n);
  const pid = await n.host.pidOf('osd', String(id));
  if (pid) process.kill(pid, 'SIGKILL');
  await until(
    `osd.${id} gone`,
    () => n.host.pidOf('osd', String(id)),
    (p) => p === null,
    30_000,
  );
  // The kernel lets go of a loop device once the killed process's descriptors are closed.
  await until(
    `${device} detached`,
    () => c.detachDisk(n, device).then(() => true),
    (ok) => ok,
    30_000,
  );
  n.env.DISKS = n.devices.filter((d) => d !== device).join(',');
  if (!n.env.DISKS.includes(added)) throw new Error(`${added} is not among the node's disks`);
  c.startAgent(n);
}

test.serial(
  "osd day 2: a dead disk of node 2 is replaced by a new disk that takes the same OSD id under the node's host; history on both, data identical",
  async (t) => {
    explainOnFailure(t);
    const c = need(cluster, 'the cluster');
    const n2 = c.nodes[1]!;
    const old = (await disks(c))
      .filter((d) => d.nodeId === n2.id && d.osdId !== null)
      .sort((a, b) => a.devicePath.localeCompare(b.devicePath))[0];
    if (!old) return t.fail('node 2 has no OSD disk');
    const id = old.osdId!;
    // Attached first, so its number (its serial) differs from the old one's.
    const added = await c.addDisk(n2);
    t.not(added, old.devicePath);
    const watch = watchDisk(c, old.id);
    const started = Date.now();
    await diskDies(c, n2, id, old.devicePath, added);
    const fresh = await until(
      `a new disk ${added} running osd.${id}`,
      async () => (await disks(c)).find((d) => d.nodeId === n2.id && d.devicePath === added),
      (d) => d?.osdId === id && d.osdState === 'running',
      270_000,
    );
    const running = Date.now();
    t.log(`osd.${id}: back on ${added} ${secs(running - started)} after its disk ${old.devicePath} died`);
    const gone = await until(
      `the old disk replaced`,
      async () => (await disks(c)).find((d) => d.id === old.id),
      (d) => d?.osdState === 'replaced',
      60_000,
    );
    watch.stop();
    t.log(`old disk phases: ${watch.phases.map((p) => `${p.phase} +${secs(p.at - started)}`).join(' → ')}`);
    t.true(distinctPhases(watch).includes('destroyed'), `the old disk's OSD was destroyed first: ${JSON.stringify(distinctPhases(watch))}`);
    // The agent reports the daemon running before Ceph has it up: wait for Ceph's own view.
    const s = await clean(c, OSDS - 1, 'every PG active+clean after the replacement');
    t.log(`HEALTH_OK with every PG active+clean ${secs(Date.now() - started)} after the disk died`);
    t.true(s.pgStates.every((p) => p.state === 'active+clean'));
    const tree = (await osdTree(c)).get(id);
    t.deepEqual(tree, { host: n2.ns, status: 'up' }, `osd.${id} in osd tree, under ${n2.ns}`);
    const dump = (await osdDump(c)).get(id);
    t.true(dump?.up && dump.in && !dump.state.includes('destroyed'), JSON.stringify(dump));
    t.is(gone!.replacedBy, fresh!.serial);
    t.is(fresh!.replaces, old.serial, '/disks says which disk the new one replaced');
    t.true(
      fresh!.history.some((h) => h.event === 'replaces' && h.osdId === id && h.otherSerial === old.serial),
      JSON.stringify(fresh!.history),
    );
    t.true(
      gone!.history.some((h) => h.event === 'replaced-by' && h.otherSerial === fresh!.serial),
      JSON.stringify(gone!.history),
    );
    await objectsIdentical(t, c);
  },
);

test.serial("osd day 2: each monitor's store is on the disk the file named (findmnt)", async (t) => {
  explainOnFailure(t);
  await monStoresOnTheirDisks(t, need(cluster, 'the cluster'));
});

test.serial('osd day 2: teardown leaves no process, mount, loop device, namespace or directory', async (t) => {
  const c = need(cluster, 'the cluster');
  await c.stop();
  t.deepEqual(await c.leftovers(), []);
});
