// The disk loop against the lab, through the HTTP API: OSDs on every eligible disk, the faults
// of issue 3 (a node lost mid-creation, a script that fails twice, a killed OSD), the ok-to-stop
// gate on node restarts, and a wipe that asks first. The store is read only where the API has
// no field for what is asserted (a node's Blocked condition). Each test runs a whole lab with
// Ceph, so they run one at a time: a crowded process misses heartbeats and nodes flap offline.
import test from 'ava';
import { Client } from '../http/client.js';
import type { InvokeResults, NodeCephState, NodeKeyrings } from '../http/bodies.js';
import { ADMIN_PASSWORD, allActive, startLab, waitFor, type LabQuarry } from './harness.js';

interface DiskView {
  id: string;
  nodeId: string;
  nodeHostname: string;
  devicePath: string;
  serial: string;
  isOsd: boolean;
  isMon: boolean;
  hasFilesystem: boolean;
  osdId: number | null;
  osdState: string | null;
  message: string;
  eligible: boolean;
  reasons: string[];
}
interface RunView {
  id: string;
  taskName: string;
  state: string;
  nodeId: string | null;
  targetId: string;
  error: string | null;
}

async function admin(q: LabQuarry): Promise<Client> {
  const c = new Client(q.url);
  const r = await c.post('/user/login', { username: 'admin', password: ADMIN_PASSWORD });
  if (r.status !== 200) throw new Error(`login ${r.status}`);
  return c;
}

const disks = async (c: Client): Promise<DiskView[]> => (await c.get<DiskView[]>('/disks')).json;
const disk = async (c: Client, id: string): Promise<DiskView> => (await disks(c)).find((d) => d.id === id)!;
const runs = async (c: Client, taskName: string): Promise<RunView[]> =>
  ((await c.get('/task/runs/recent?limit=1000')).json as RunView[]).filter((r) => r.taskName === taskName);
const metrics = async (c: Client) =>
  (await c.get('/ceph/metrics')).json as { osdCount: number; osdUp: number; health: string; poolCount: number } | undefined;

/** Three nodes whose monitors have quorum (and a manager, which ok-to-stop needs). */
async function cluster(t: Parameters<typeof startLab>[0], opts: { mgr?: boolean } = {}) {
  const q = await startLab(t, 3);
  await allActive(q, 3);
  // In machine order, so nodes[i] is lab machine i + 1.
  const nodes = [await q.nodeOf(1), await q.nodeOf(2), await q.nodeOf(3)];
  const c = await admin(q);
  for (const n of nodes) {
    const d = (await disks(c)).find((x) => x.nodeId === n.id && x.eligible)!;
    // A loaded test process may miss a heartbeat and call a node offline for a moment.
    await waitFor(
      `mon on ${n.spec.hostname}`,
      async () => (await c.post('/ceph/mon/create', { nodeId: n.id, diskId: d.id })).status === 200,
    );
  }
  if (opts.mgr) await c.post('/ceph/mgr', { nodeId: nodes[0]!.id });
  await waitFor(
    'quorum of three',
    async () => (await metrics(c))?.health !== undefined && q.lab!.ceph.mons.mons.filter((m) => m.running).length === 3,
    30_000,
  );
  if (opts.mgr) await waitFor('a manager', () => q.lab!.ceph.mgrs.available, 30_000);
  return { q, c, nodes };
}

async function createOsds(c: Client, ids: string[]): Promise<void> {
  const r = await c.post<InvokeResults>('/invoke/disk', { operation: 'ceph.create-osd', diskIds: ids });
  if (r.json.results.some((x) => x.status !== 'scheduled')) throw new Error(`not scheduled: ${r.text}`);
}

const running = (c: Client, id: string) =>
  waitFor(
    `osd on ${id} running`,
    async () => {
      const d = await disk(c, id);
      return d.osdState === 'running' && d.osdId !== null ? d : undefined;
    },
    30_000,
  );

test.serial('ceph osds: an OSD on every eligible disk of every node runs, and the API agrees with the cluster', async (t) => {
  const { q, c, nodes } = await cluster(t);
  const eligible = (await disks(c)).filter((d) => d.eligible);
  t.true(eligible.length >= 6, 'the lab has disks for OSDs besides the monitor disks');
  await createOsds(
    c,
    eligible.map((d) => d.id),
  );
  const m = await waitFor(
    'every OSD up',
    async () => {
      const x = await metrics(c);
      return x?.osdCount === eligible.length && x.osdUp === eligible.length ? x : undefined;
    },
    30_000,
  );
  t.is(m.osdCount, eligible.length);
  const after = await waitFor('every disk says running', async () => {
    const all = (await disks(c)).filter((d) => eligible.some((e) => e.id === d.id));
    return all.every((d) => d.osdState === 'running') ? all : undefined;
  });
  for (const d of after) t.like(d, { isOsd: true, osdState: 'running', message: '', eligible: false, reasons: ['holds-osd'] });
  t.is(new Set(after.map((d) => d.osdId)).size, eligible.length, 'one OSD id per disk');
  for (const n of nodes) {
    const mine = after
      .filter((d) => d.nodeId === n.id)
      .map((d) => d.osdId!)
      .sort((a, b) => a - b);
    t.deepEqual((await c.get<NodeCephState>(`/ceph/nodes/${n.id}/state`)).json.osdIds, mine);
    t.deepEqual(
      q.lab!.ceph.hosts.report(n.spec.hostname).osds.sort((a, b) => a - b),
      mine,
      'the cluster agrees on where each OSD runs',
    );
    const keys = (await c.get<NodeKeyrings>(`/ceph/nodes/${n.id}/keyrings`)).json.keyrings.map((k) => k.entity);
    for (const id of mine) t.true(keys.includes(`osd.${id}`), `the node holds the key of osd.${id}`);
  }
  q.lab!.ceph.createPool('rbd', 32);
  const withPool = await waitFor('health as the cluster says', async () => {
    const x = await metrics(c);
    return x?.poolCount === 1 && x.health === q.lab!.ceph.health().status ? x : undefined;
  });
  t.is(withPool.osdUp, eligible.length);
  t.is((await runs(c, 'ceph.osd.new')).length, eligible.length, 'one registration per OSD');
});

test.serial(
  'ceph osds: a node that goes offline during creation fails the run, the disk says why, and it converges when the node returns',
  async (t) => {
    const { q, c, nodes } = await cluster(t);
    const target = (await disks(c)).find((d) => d.nodeId === nodes[0]!.id && d.eligible)!;
    // Silent for longer than the lab's heartbeat timeout and run timeout (test/lab/harness.ts), with
    // room for a loaded machine to notice: 1.5 s against a 1 s timeout was missed under load.
    q.lab!.offlineDuringNext(1, 'ceph.osd.create', 15_000);
    await createOsds(c, [target.id]);
    const blocked = await waitFor('the disk says the node is away', async () => {
      const d = await disk(c, target.id);
      return d.osdState === 'blocked' && /offline/.test(d.message) ? d : undefined;
    });
    t.regex(blocked.message, /nothing is done to it until it is active/);
    const ok = await running(c, target.id);
    t.is(ok.message, '');
    const creates = await runs(c, 'ceph.osd.create');
    t.true(
      creates.some((r) => r.state === 'failed' && /timed out/.test(r.error ?? '')),
      'the run the node missed failed',
    );
    t.is(creates.filter((r) => r.state === 'completed').length, 1);
    t.is((await runs(c, 'ceph.osd.new')).length, 1, 'the OSD was registered once');
  },
);

test.serial('ceph osds: a creation script that fails twice backs off, then the OSD runs', async (t) => {
  const { q, c, nodes } = await cluster(t);
  const target = (await disks(c)).find((d) => d.nodeId === nodes[1]!.id && d.eligible)!;
  q.lab!.failNext(2, 'ceph.osd.create', 2);
  await createOsds(c, [target.id]);
  const d = await running(c, target.id);
  t.like(d, { isOsd: true, message: '' });
  const creates = await runs(c, 'ceph.osd.create');
  t.deepEqual(creates.map((r) => r.state).sort(), ['completed', 'failed', 'failed']);
  t.is((await metrics(c))?.osdCount, 1);
});

test.serial('ceph osds: a killed OSD is reported down and started again', async (t) => {
  const { q, c, nodes } = await cluster(t);
  const target = (await disks(c)).find((d) => d.nodeId === nodes[2]!.id && d.eligible)!;
  await createOsds(c, [target.id]);
  const { osdId } = await running(c, target.id);
  // The first restarts fail, so the OSD stays down long enough to be seen down.
  q.lab!.failNext(3, 'ceph.daemon.restart', 100);
  q.lab!.ceph.killOsd(osdId!);
  const down = await waitFor('the disk says its OSD is down', async () => {
    const d = await disk(c, target.id);
    return d.osdState === 'failed' ? d : undefined;
  });
  t.regex(down.message, new RegExp(`osd\\.${osdId} is not running; starting it again; attempt \\d+ failed`));
  await waitFor('metrics see it down', async () => (await metrics(c))?.osdUp === 0);
  q.lab!.machine(3).faults.failNext.delete('ceph.daemon.restart');
  await running(c, target.id);
  await waitFor('metrics see it up', async () => (await metrics(c))?.osdUp === 1);
  t.true((await runs(c, 'ceph.daemon.restart')).some((r) => r.state === 'completed' && r.targetId === target.id));
});

test.serial('ceph osds: a node whose OSDs are not ok to stop is not restarted, and nothing is sent until they are', async (t) => {
  const { q, c, nodes } = await cluster(t, { mgr: true });
  const eligible = (await disks(c)).filter((d) => d.eligible);
  await createOsds(
    c,
    eligible.map((d) => d.id),
  );
  await waitFor('every OSD up', async () => (await metrics(c))?.osdUp === eligible.length, 30_000);
  // Size 3 over three hosts: every PG has one OSD on each host, and needs two up.
  q.lab!.ceph.createPool('rbd', 32);
  const victim = (await disks(c)).find((d) => d.nodeId === nodes[1]!.id && d.osdId !== null)!;
  q.lab!.failNext(2, 'ceph.daemon.restart', 1_000);
  q.lab!.ceph.killOsd(victim.osdId!);
  await waitFor('the OSD is down', async () => (await metrics(c))?.osdUp === eligible.length - 1);
  const a = nodes[0]!;
  t.deepEqual((await c.post<InvokeResults>('/invoke/node', { operation: 'node.restart', nodeIds: [a.id] })).json.results, [
    { id: a.id, status: 'scheduled' },
  ]);
  const gate = await waitFor('restart blocked by ok-to-stop', async () => {
    const c0 = (await q.nodeOf(1)).status.conditions?.find((x) => x.type === 'Blocked');
    // The disruption budget (#15) holds it, with Ceph's reason in its message.
    return c0?.status === 'True' && c0.reason === 'DisruptionBudget' ? c0 : undefined;
  });
  t.regex(gate.message, /restart would stop osd\.\d+.*unsafe to stop osd\(s\) at this time.*nothing was sent/);
  t.deepEqual(await runs(c, 'node.restart'), [], 'no restart was sent');
  t.is((await q.nodeOf(1)).status.phase, 'active');
  // Once the other host's OSD runs again, Ceph says ok and the restart goes ahead.
  q.lab!.machine(2).faults.failNext.delete('ceph.daemon.restart');
  await waitFor('restart done', async () => (await q.nodeOf(1)).status.observedRestartGeneration === 1, 30_000);
  t.is((await runs(c, 'node.restart')).filter((r) => r.state === 'completed').length, 1);
});

test.serial('disk wipe: "no" leaves the disk untouched, "yes" wipes it and it becomes eligible', async (t) => {
  const q = await startLab(t, 3);
  await allActive(q, 3);
  const c = await admin(q);
  const node3 = await q.nodeOf(3);
  const dirty = (await disks(c)).find((d) => d.nodeId === node3.id && d.hasFilesystem && !d.serial.endsWith('-SYS'))!;
  t.deepEqual(dirty.reasons, ['has-filesystem']);
  const wipe = async () =>
    t.is(
      (await c.post<InvokeResults>('/invoke/disk', { operation: 'disk.wipe', diskIds: [dirty.id] })).json.results[0]?.status,
      'scheduled',
    );
  const question = () =>
    waitFor('the wipe question', async () =>
      ((await c.get('/task/questions/pending')).json as Array<{ id: string; taskName: string; prompt: string; options: string[] }>).find(
        (x) => x.taskName === 'disk.wipe.confirm',
      ),
    );

  await wipe();
  const q1 = await question();
  t.deepEqual(q1.options, ['yes', 'no']);
  for (const part of [dirty.devicePath, dirty.serial, node3.spec.hostname, 'a filesystem'])
    t.true(q1.prompt.includes(part), `the question names ${part}`);
  t.deepEqual((await c.post(`/task/question/${q1.id}/answer`, { answer: 'no' })).json, { status: 'answered' });
  const declined = await waitFor('the request acknowledged as declined', async () => {
    const d = await disk(c, dirty.id);
    return !d.reasons.includes('wipe-in-progress') ? d : undefined;
  });
  t.like(declined, { hasFilesystem: true, eligible: false });
  t.deepEqual(await runs(c, 'disk.wipe'), [], 'nothing was sent to the node');
  t.true(q.lab!.machine(3).spec.disks.find((d) => d.serial === dirty.serial)!.hasFilesystem, 'the disk still holds its filesystem');
  const cond = (await q.store.mustGet('Disk', dirty.id)).status as { conditions?: Array<{ type: string; reason: string }> };
  t.is(cond.conditions?.find((x) => x.type === 'Wiped')?.reason, 'Declined');

  await wipe();
  const q2 = await question();
  t.not(q2.id, q1.id);
  await c.post(`/task/question/${q2.id}/answer`, { answer: 'yes' });
  const clean = await waitFor('the disk wiped and eligible', async () => {
    const d = await disk(c, dirty.id);
    return !d.hasFilesystem && d.eligible ? d : undefined;
  });
  t.deepEqual(clean.reasons, []);
  const wipes = await runs(c, 'disk.wipe');
  t.is(wipes.length, 1);
  t.like(wipes[0], { state: 'completed', nodeId: node3.id });
});
