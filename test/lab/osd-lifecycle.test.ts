// The OSD lifecycle against the lab's Ceph: a removal drains, passes safe-to-destroy, is stopped,
// purged and its disk zapped; a replacement and a dead disk destroy their OSD and a new disk
// takes the id over; an orphan is adopted without a step; the gates and faults (not safe to
// destroy, a node offline mid-drain, Quarry restarted mid-purge). A removal is declared on the
// Disk's spec (what a spec file's `state: absent` and `ceph.remove-osd` come to); the status is
// read from the store, where the lifecycle writes it. Each test runs a whole lab, one at a time.
import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InvokeResults } from '../http/bodies.js';
import { Kind, type DiskSpec, type DiskStatusFields } from '../../src/model/kinds.js';
import type { Doc } from '../../src/model/document.js';
import { DISRUPTION_BUDGET_ID, DisruptionKind, type DisruptionBudgetStatus } from '../../src/model/disruption-kinds.js';
import type { TaskRunSpec, TaskRunStatus } from '../../src/model/kinds.js';
import { allActive, startLab, waitFor, type LabQuarry } from './harness.js';
import { diskDocs, eligible, login as admin, monsAndManager } from './ceph-cluster.js';

type DiskDoc = Doc<DiskSpec, DiskStatusFields>;
const GiB = 1024 ** 3;

const diskDoc = async (q: LabQuarry, id: string) => q.store.mustGet<DiskSpec, DiskStatusFields>(Kind.Disk, id);

/** The disk's spec as a spec file or the API would set it (the loop's input). */
async function declare(q: LabQuarry, id: string, spec: Partial<DiskSpec>): Promise<void> {
  await q.store.mutateSpec<DiskSpec>(Kind.Disk, id, (d) => {
    // A field given as undefined is cleared (osdRemoval once the OSD is wanted again).
    const merged = Object.entries({ ...d.spec, ...spec } as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return Object.fromEntries(merged) as unknown as DiskSpec;
  });
}

async function runsOf(q: LabQuarry, diskId: string, taskName: string): Promise<Doc<TaskRunSpec, TaskRunStatus>[]> {
  const all = await q.store.list<TaskRunSpec, TaskRunStatus>(Kind.TaskRun);
  return all.filter((r) => r.spec.targetId === diskId && r.spec.taskName === taskName);
}

const phaseOf = async (q: LabQuarry, id: string) => (await diskDoc(q, id)).status.osd?.phase;
const blockedOf = async (q: LabQuarry, id: string) =>
  (await diskDoc(q, id)).status.conditions?.find((c) => c.type === 'Blocked' && c.status === 'True');

const phase = (q: LabQuarry, id: string, want: string, boundMs = 60_000) =>
  waitFor(`disk ${id} ${want}`, async () => ((await phaseOf(q, id)) === want ? diskDoc(q, id) : undefined), boundMs);

/** Three nodes with a monitor each, a manager, an OSD on `perNode` eligible disks of each node
 * and a size-3 pool holding data. */
async function cluster(t: Parameters<typeof startLab>[0], perNode: number, over: Parameters<typeof startLab>[2] = {}) {
  const q = await startLab(t, 3, { ...over, env: { DISK_GONE_GRACE_MS: '500', ...over.env } });
  const nodes = await allActive(q, 3);
  const c = await admin(q);
  const monDisks = await monsAndManager(q, c, nodes);
  const osdDisks: DiskDoc[] = [];
  for (const n of nodes)
    osdDisks.push(...(await diskDocs(q)).filter((d) => d.spec.nodeId === n.id && eligible(d) && !monDisks.has(d.id)).slice(0, perNode));
  const r = await c.post<InvokeResults>('/invoke/disk', { operation: 'ceph.create-osd', diskIds: osdDisks.map((d) => d.id) });
  if (r.json.results.some((x) => x.status !== 'scheduled')) throw new Error(`not scheduled: ${r.text}`);
  await waitFor(
    'every OSD running',
    async () => {
      const all = await Promise.all(osdDisks.map((d) => diskDoc(q, d.id)));
      return all.every((d) => d.status.osd?.phase === 'running' && d.status.osdId !== undefined && d.status.osdId !== null);
    },
    60_000,
  );
  q.lab!.ceph.createPool('rbd', 32);
  q.lab!.ceph.enableApplication('rbd', 'rbd');
  q.lab!.ceph.writeData('rbd', 30 * GiB);
  const withIds = await Promise.all(osdDisks.map((d) => diskDoc(q, d.id)));
  return { q, c, nodes, osds: withIds };
}

const cleanPgs = (q: LabQuarry) => q.lab!.ceph.pgs().every((p) => p.state === 'active+clean');
const leases = async (q: LabQuarry) =>
  (await q.store.get<unknown, DisruptionBudgetStatus>(DisruptionKind.DisruptionBudget, DISRUPTION_BUDGET_ID))?.status.leases ?? [];
const completed = async (q: LabQuarry, id: string, task: string) =>
  (await runsOf(q, id, task)).filter((r) => r.status.state === 'completed').length;

test.serial('osd lifecycle: a removal drains, is safe to destroy, stopped, purged, zapped; the disk is eligible again', async (t) => {
  const { q, osds } = await cluster(t, 2);
  const victim = osds[0]!;
  const id = victim.status.osdId!;
  await declare(q, victim.id, { osd: false, osdRemoval: 'remove' });
  const removed = await phase(q, victim.id, 'removed');
  t.is(removed.status.osdId, null);
  t.is(removed.status.osdUuid, undefined);
  t.deepEqual(
    removed.status.history?.slice(-2).map((h) => [h.event, h.osdId]),
    [
      ['removed', id],
      ['zapped', id],
    ],
  );
  t.false(q.lab!.ceph.osdmap.osds.has(id), 'purged: the id is gone from the cluster');
  for (const task of ['ceph.osd.out', 'ceph.osd.stop', 'ceph.osd.purge', 'ceph.osd.zap'])
    t.is(await completed(q, victim.id, task), 1, `${task} once`);
  // The purge and the zap side by side: both runs are recorded once the stop is done, the zap
  // before the purge has finished (not in the pass after it).
  const states = q.events
    .filter((e) => e.type === 'task.state.changed')
    .map((e) => e.payload as { taskName: string; state: string; target: { id: string } })
    .filter((e) => e.target.id === victim.id)
    .map((e) => `${e.taskName} ${e.state}`);
  const at = (what: string) => states.indexOf(what);
  t.true(at('ceph.osd.stop completed') >= 0 && at('ceph.osd.stop completed') < at('ceph.osd.zap pending'), JSON.stringify(states));
  t.true(at('ceph.osd.zap pending') < at('ceph.osd.purge completed'), `the zap is started beside the purge: ${JSON.stringify(states)}`);
  t.deepEqual(await leases(q), [], 'the drain lease is given back');
  await waitFor('every PG active+clean', () => cleanPgs(q));
  const blank = await waitFor('the agent reports the disk blank', async () => {
    const d = await diskDoc(q, victim.id);
    return d.status.hasFilesystem === false && d.status.label === undefined ? d : undefined;
  });
  t.true(eligible(blank), 'eligible again');
});

test.serial(
  'osd lifecycle: not safe to destroy blocks the drain with Ceph’s reason; withdrawn, the OSD is in and running again',
  async (t) => {
    // One OSD per node and a size-3 pool: its PGs have nowhere else to go.
    const { q, osds } = await cluster(t, 1);
    const victim = osds[0]!;
    await declare(q, victim.id, { osd: false, osdRemoval: 'remove' });
    const blocked = await waitFor('blocked: not safe to destroy', async () => {
      const b = await blockedOf(q, victim.id);
      return b?.reason === 'OsdNotSafeToDestroy' ? b : undefined;
    });
    t.regex(blocked.message, new RegExp(`osd\\.${victim.status.osdId} cannot be destroyed`));
    const d = await diskDoc(q, victim.id);
    t.is(d.status.osd?.phase, 'draining');
    t.truthy(d.status.drain, 'the drain shows what is left');
    t.is((await runsOf(q, victim.id, 'ceph.osd.stop')).length, 0, 'nothing stopped');
    t.is((await leases(q)).length, 1);
    await declare(q, victim.id, { osd: true, osdRemoval: undefined });
    await phase(q, victim.id, 'running');
    t.is(await completed(q, victim.id, 'ceph.osd.in'), 1);
    t.true(q.lab!.ceph.osdmap.osds.get(victim.status.osdId!)?.in, 'in again');
    await waitFor('the lease given back', async () => (await leases(q)).length === 0);
  },
);

test.serial('osd lifecycle: a replacement destroys the OSD, and a new disk of the node takes its id', async (t) => {
  const { q, osds } = await cluster(t, 2);
  const old = osds[0]!;
  const id = old.status.osdId!;
  await declare(q, old.id, { osd: false, osdRemoval: 'replace' });
  const destroyed = await phase(q, old.id, 'destroyed');
  t.is(destroyed.status.osdId, id, 'the id stays on the old disk until it is taken over');
  t.true(q.lab!.ceph.osdmap.osds.get(id)?.destroyed, 'Ceph keeps it destroyed');
  const machine = [1, 2, 3].find((i) => q.lab!.machine(i).hostname === (q.lab!.ceph.osdmap.osds.get(id)?.host ?? ''))!;
  const fresh = q.lab!.insertDisk(machine);
  const newDisk = await waitFor('the new disk is known', async () => (await diskDocs(q)).find((d) => d.spec.serial === fresh.serial));
  await declare(q, newDisk.id, { osd: true, replaces: old.id });
  const running = await phase(q, newDisk.id, 'running');
  t.is(running.status.osdId, id, 'the same id');
  t.like(running.status.history?.at(-1), { event: 'replaces', osdId: id, otherSerial: old.spec.serial });
  const replaced = await phase(q, old.id, 'replaced');
  t.is(replaced.status.osdId, null);
  t.like(replaced.status.history?.at(-1), { event: 'replaced-by', osdId: id, otherSerial: fresh.serial });
  const newRuns = await runsOf(q, newDisk.id, 'ceph.osd.new');
  t.deepEqual(
    newRuns.map((r) => r.spec.args.id),
    [id],
    'registered once, with the old id',
  );
  await waitFor('every PG active+clean', () => cleanPgs(q), 60_000);
});

test.serial('osd lifecycle: a dead disk is taken out and destroyed; a disk put in its place gets the same id', async (t) => {
  const { q, osds } = await cluster(t, 2);
  const dead = osds[0]!;
  const id = dead.status.osdId!;
  const machine = [1, 2, 3].find((i) => q.lab!.machine(i).spec.disks.some((d) => d.serial === dead.spec.serial))!;
  q.lab!.killDisk(machine, dead.spec.serial);
  const destroyed = await phase(q, dead.id, 'destroyed');
  t.is(destroyed.status.osdId, id);
  t.is((await runsOf(q, dead.id, 'ceph.osd.stop')).length, 0, 'no stop of a dead disk');
  t.is((await runsOf(q, dead.id, 'ceph.osd.zap')).length, 0, 'no zap of a dead disk');
  const fresh = q.lab!.insertDisk(machine);
  const newDisk = await waitFor('the new disk is known', async () => (await diskDocs(q)).find((d) => d.spec.serial === fresh.serial));
  await declare(q, newDisk.id, { osd: true });
  const running = await phase(q, newDisk.id, 'running');
  t.is(running.status.osdId, id, 'the destroyed id, taken over');
  await phase(q, dead.id, 'replaced');
});

test.serial('osd lifecycle: an orphan declared again is adopted as it runs, without a step', async (t) => {
  const { q, osds } = await cluster(t, 1);
  const d = osds[1]!;
  const before = (await q.store.list<TaskRunSpec, TaskRunStatus>(Kind.TaskRun)).filter((r) => r.spec.targetId === d.id).length;
  await declare(q, d.id, { osd: false });
  await phase(q, d.id, 'orphaned');
  t.true(q.lab!.ceph.osdmap.osds.get(d.status.osdId!)?.up, 'left running');
  await declare(q, d.id, { osd: true });
  const adopted = await phase(q, d.id, 'running');
  t.like(adopted.status.history?.at(-1), { event: 'adopted', osdId: d.status.osdId });
  const after = (await q.store.list<TaskRunSpec, TaskRunStatus>(Kind.TaskRun)).filter((r) => r.spec.targetId === d.id).length;
  t.is(after, before, 'no run: no restart, no creation');
});

test.serial('osd lifecycle: a node offline mid-drain holds the stop, and the removal converges when it returns', async (t) => {
  const { q, osds } = await cluster(t, 2);
  const victim = osds[0]!;
  const machine = [1, 2, 3].find((i) => q.lab!.machine(i).spec.disks.some((d) => d.serial === victim.spec.serial))!;
  // Silent past the heartbeat timeout and the run's deadline (test/lab/harness.ts).
  q.lab!.offlineDuringNext(machine, 'ceph.osd.stop', 15_000);
  await declare(q, victim.id, { osd: false, osdRemoval: 'remove' });
  const blocked = await waitFor(
    'the stop waits for the node',
    async () => {
      const b = await blockedOf(q, victim.id);
      return b?.reason === 'NodeNotActive' ? b : undefined;
    },
    60_000,
  );
  t.regex(blocked.message, /node is offline/);
  await phase(q, victim.id, 'removed', 90_000);
  const stops = (await runsOf(q, victim.id, 'ceph.osd.stop')).map((r) => r.status.state);
  t.true(stops.includes('completed'));
  t.is(await completed(q, victim.id, 'ceph.osd.purge'), 1, 'purged once');
  t.is(await completed(q, victim.id, 'ceph.osd.out'), 1, 'out once');
});

test.serial('osd lifecycle: Quarry restarted mid-purge purges once and finishes the removal', async (t) => {
  const stateDir = await mkdtemp(join(tmpdir(), 'quarry-osd-restart-'));
  t.teardown(() => rm(stateDir, { recursive: true, force: true }));
  const { q, osds } = await cluster(t, 2, { stateDir });
  const victim = osds[0]!;
  const id = victim.status.osdId!;
  const ceph = q.lab!.ceph;
  // The store's watch misses no write, so the moment `purging` is written is caught however
  // briefly it lasts (polling missed it on a loaded machine).
  let purging = false;
  const unwatch = q.store.watch(q.store.revision(), (e) => {
    if (e.type === 'relist' || e.doc.kind !== Kind.Disk || e.doc.id !== victim.id) return;
    purging ||= (e.doc.status as DiskStatusFields).osd?.phase === 'purging';
  });
  t.teardown(unwatch);
  await declare(q, victim.id, { osd: false, osdRemoval: 'remove' });
  // The phase is written before the purge run starts: stopped now, the purge has not run, runs,
  // or has just run; whichever, the next Quarry must purge (again: a purged OSD is success) and
  // repeat nothing before it. The lab's Ceph outlives the first Quarry, as a real cluster does.
  await waitFor('the purging phase written', () => purging, 90_000);
  await q.stop();
  const q2 = await startLab(t, 3, { stateDir, store: undefined, lab: { ceph }, env: { DISK_GONE_GRACE_MS: '500' } });
  const removed = await phase(q2, victim.id, 'removed', 90_000);
  t.is(removed.status.osdId, null);
  t.false(ceph.osdmap.osds.has(id));
  t.is(await completed(q2, victim.id, 'ceph.osd.out'), 1, 'out once, across the restart');
  t.is(await completed(q2, victim.id, 'ceph.osd.stop'), 1, 'stopped once');
  const purges = (await runsOf(q2, victim.id, 'ceph.osd.purge')).map((r) => r.status.state);
  t.true(purges.includes('completed'));
  t.true(
    purges.every((s) => s === 'completed' || s === 'failed'),
    'a purge cut short by the restart is failed as interrupted',
  );
  t.deepEqual(await leases(q2), []);
});

/** Each way an OSD can be taken away, then declared again: every row ends owned and running,
 * not blocked, with the cluster's PGs clean (issue 14: declare → absent → declare again). */
const redeclare: Array<{ row: string; away: Partial<DiskSpec>; until: string; sameId: boolean; pause?: boolean }> = [
  {
    row: 'removed (purged and wiped), declared again: a new OSD',
    away: { osd: false, osdRemoval: 'remove' },
    until: 'removed',
    sameId: false,
  },
  {
    row: 'withdrawn while it drains: in again, the same OSD',
    away: { osd: false, osdRemoval: 'remove' },
    until: 'draining',
    sameId: true,
    pause: true,
  },
  {
    row: 'a replacement withdrawn while it drains: the same OSD',
    away: { osd: false, osdRemoval: 'replace' },
    until: 'draining',
    sameId: true,
    pause: true,
  },
  { row: 'dropped from its file (orphaned), declared again: adopted', away: { osd: false }, until: 'orphaned', sameId: true },
];

test.serial('osd lifecycle: declare → absent → declare again converges to an owned, running OSD, for each way away', async (t) => {
  // Four lifecycles one after another in one lab: on a loaded machine more than ava's 60 s.
  t.timeout(240_000);
  const { q, osds } = await cluster(t, 2);
  for (const [i, r] of redeclare.entries()) {
    const d = osds[i]!;
    const id = d.status.osdId!;
    t.log(`${r.row} (osd.${id})`);
    if (r.pause) q.lab!.ceph.pauseBackfill();
    await declare(q, d.id, r.away);
    await phase(q, d.id, r.until);
    await declare(q, d.id, { osd: true, osdRemoval: undefined });
    q.lab!.ceph.pauseBackfill(false);
    const back = await phase(q, d.id, 'running').catch(async (err: unknown) => {
      const now = await diskDoc(q, d.id);
      const runs = (await q.store.list<TaskRunSpec, TaskRunStatus>(Kind.TaskRun)).filter((x) => x.spec.targetId === d.id);
      for (const x of runs)
        t.log(`${x.metadata.createdAt} ${x.spec.taskName} ${JSON.stringify(x.spec.args)} ${x.status.state} ${x.status.error ?? ''}`);
      t.log(JSON.stringify(q.lab!.ceph.osdmap.osds.get(id)));
      t.log(
        JSON.stringify({
          spec: now.spec,
          osd: now.status.osd,
          c: now.status.conditions,
          fs: now.status.hasFilesystem,
          id: now.status.osdId,
          uuid: now.status.osdUuid,
        }),
      );
      throw err;
    });
    t.true(back.spec.osd, `${r.row}: owned`);
    t.not(back.status.osdId, null, `${r.row}: an id`);
    if (r.sameId) t.is(back.status.osdId, id, `${r.row}: the same id`);
    t.true(q.lab!.ceph.osdmap.osds.get(back.status.osdId!)?.up, `${r.row}: up in Ceph`);
    t.true(q.lab!.ceph.osdmap.osds.get(back.status.osdId!)?.in, `${r.row}: in`);
    t.is((await blockedOf(q, d.id))?.reason, undefined, `${r.row}: not blocked`);
    await waitFor(`${r.row}: the lease given back`, async () => (await leases(q)).length === 0);
    await waitFor(`${r.row}: every PG active+clean`, () => cleanPgs(q));
  }
});
