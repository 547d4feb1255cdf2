// The disruption budget against the lab's Ceph (issue #15): a restart of every node in one request
// goes one failure domain at a time with quorum and every PG active throughout (sampled on every
// store write), two requests racing for the budget both end restarted and never together, and a
// lease held when Quarry stops is found again by the next Quarry, neither leaked nor doubled.
import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { InvokeResults } from '../http/bodies.js';
import { Kind, type NodeSpec, type NodeStatusFields } from '../../src/model/kinds.js';
import type { Doc } from '../../src/model/document.js';
import { DISRUPTION_BUDGET_ID, DisruptionKind, type DisruptionBudgetStatus } from '../../src/model/disruption-kinds.js';
import { isActive } from '../../src/sim/ceph/placement.js';
import type { SimCephCluster as SimCeph } from '../../src/sim/ceph/cluster.js';
import { startLab, waitFor, type LabQuarry } from './harness.js';
import { osdCluster } from './ceph-cluster.js';

type NodeDoc = Doc<NodeSpec, NodeStatusFields>;
/** The example spec's shape: three monitors, two OSDs on each host, a size-3 pool with data. */
const cluster = osdCluster;

/** What the sampler saw: on every store write, the lab's quorum and PGs, and the budget's leases. */
interface Samples {
  count: number;
  quorumLost: number;
  inactive: Set<string>;
  /** Most failure domains held at once, and most nodes rebooting at once. */
  maxDomains: number;
  maxRebooting: number;
  /** Most leases one holder had at once in the document (a doubled lease would be 2). */
  maxPerHolder: number;
}

function sample(q: LabQuarry, ceph: SimCeph, t: Parameters<typeof startLab>[0]): Samples {
  const s: Samples = { count: 0, quorumLost: 0, inactive: new Set(), maxDomains: 0, maxRebooting: 0, maxPerHolder: 0 };
  const rebooting = new Set<string>();
  const unwatch = q.store.watch(q.store.revision(), (e) => {
    if (e.type === 'relist') return;
    s.count++;
    if (!ceph.hasQuorum()) s.quorumLost++;
    for (const pg of ceph.pgs()) if (!isActive(pg.state)) s.inactive.add(`${pg.pgid} ${pg.state}`);
    if (e.doc.kind === DisruptionKind.DisruptionBudget) {
      const leases = (e.doc.status as DisruptionBudgetStatus).leases ?? [];
      s.maxDomains = Math.max(s.maxDomains, new Set(leases.flatMap((l) => l.domains ?? [])).size);
      const per = new Map<string, number>();
      for (const l of leases) per.set(l.holderId, (per.get(l.holderId) ?? 0) + 1);
      s.maxPerHolder = Math.max(s.maxPerHolder, ...per.values(), 0);
    }
    if (e.doc.kind === Kind.Node) {
      const phase = (e.doc.status as NodeStatusFields).phase;
      if (phase === 'rebooting') rebooting.add(e.doc.id);
      else rebooting.delete(e.doc.id);
      s.maxRebooting = Math.max(s.maxRebooting, rebooting.size);
    }
  });
  t.teardown(unwatch);
  return s;
}

const leases = async (q: LabQuarry) =>
  (await q.store.get<unknown, DisruptionBudgetStatus>(DisruptionKind.DisruptionBudget, DISRUPTION_BUDGET_ID))?.status.leases ?? [];

const restarted = (q: LabQuarry, ids: string[], bound = 120_000) =>
  waitFor(
    `${ids.length} nodes restarted and the leases given back`,
    async () => {
      const ns = (await q.nodes()).filter((n) => ids.includes(n.id));
      const back = ns.every((n) => n.status.observedRestartGeneration === n.spec.restartGeneration && n.status.phase === 'active');
      return back && (await leases(q)).length === 0 ? ns : undefined;
    },
    bound,
  );

const leaseEvents = (q: LabQuarry, type: string) =>
  q.events.filter((e) => e.type === type).map((e) => e.payload as { holderId: string; kind: string; domains: string[] });

test.serial(
  'disruption budget: a restart of every node in one request goes one failure domain at a time, quorum and PGs kept',
  async (t) => {
    const { q, c, nodes } = await cluster(t, 4);
    const s = sample(q, q.lab!.ceph, t);
    const ids = nodes.map((n) => n.id);
    const boots = new Map(nodes.map((n) => [n.id, n.status.bootId]));
    const r = await c.post<InvokeResults>('/invoke/node', { operation: 'node.restart', nodeIds: ids });
    t.true(
      r.json.results.every((x) => x.status === 'scheduled'),
      r.text,
    );
    // The others wait, and say which lease holds them.
    const waiting = await waitFor('a node waiting for the budget', async () =>
      (await q.nodes()).find(
        (n) =>
          n.status.disruption?.state === 'waiting' &&
          n.status.conditions?.some((x) => x.type === 'Blocked' && x.reason === 'DisruptionBudget'),
      ),
    );
    t.regex(waiting.status.disruption?.reason ?? '', /held by restart of|NotOkToStop/);
    // /nodes/details shows who holds a lease and who waits, with what holds it.
    type Detail = { id: string; disruption: { state: string; kind: string; heldBy?: string[] } | null };
    const details = () => c.get<Detail[]>('/nodes/details').then((x) => x.json);
    const seen = await waitFor('a lease held and a node waiting, in /nodes/details', async () => {
      const all = await details();
      const held = all.find((d) => d.disruption?.state === 'held');
      const wait = all.find((d) => d.disruption?.state === 'waiting' && (d.disruption.heldBy ?? []).length > 0);
      return held && wait ? { held, wait } : undefined;
    });
    t.is(seen.held.disruption?.kind, 'restart');
    t.regex(seen.wait.disruption?.heldBy?.[0] ?? '', /^restart of .* since /);
    const done = await restarted(q, ids);
    for (const n of done) t.not(n.status.bootId, boots.get(n.id), `${n.spec.hostname} booted again`);
    t.true(s.count > 0);
    t.is(s.quorumLost, 0, 'quorum never lost');
    t.deepEqual([...s.inactive], [], 'no PG ever inactive');
    t.is(s.maxDomains, 1, 'one failure domain at a time');
    t.is(s.maxRebooting, 1, 'one node rebooting at a time');
    const taken = leaseEvents(q, 'disruption.lease.taken');
    t.deepEqual(taken.map((e) => e.holderId).sort(), [...ids].sort(), 'one lease per node');
    t.true(taken.every((e) => e.kind === 'restart' && e.domains.length === 1));
    t.is(leaseEvents(q, 'disruption.lease.released').length, 4);
    // The run log says which lease admitted the restart and what Ceph said: the first run under
    // the lease, which is the noout for its OSDs (#15 part 3); the restart then goes on that lease.
    const recent = (await c.get('/task/runs/recent?limit=1000')).json as Array<{ id: string; taskName: string; state: string }>;
    const logOf = async (id: string) => ((await c.get(`/task/run/${id}/logs`)).json as Array<{ message: string }>).map((l) => l.message);
    const restartRun = recent.find((x) => x.taskName === 'node.restart' && x.state === 'completed')!;
    t.true(
      (await logOf(restartRun.id)).some((l) => /sent under the disruption lease it holds: restart of/.test(l)),
      (await logOf(restartRun.id)).join('\n'),
    );
    const admitted = await Promise.all(recent.filter((x) => x.taskName === 'ceph.osd.noout').map((x) => logOf(x.id)));
    const lines = admitted.find((l) => l.some((x) => /admitted by the disruption budget/.test(x))) ?? [];
    t.true(
      lines.some((l) => /admitted by the disruption budget: lease "restart of/.test(l)),
      lines.join('\n'),
    );
    t.true(
      lines.some((l) => /Ceph: osd ok-to-stop osd\.\d+.*: ok/.test(l)),
      lines.join('\n'),
    );
    // /nodes/details shows the field, null once the node holds nothing.
    t.true((await details()).every((d) => d.disruption === null));
  },
);

test.serial('disruption budget: with four domains allowed at once, Ceph alone keeps the restarts one host at a time', async (t) => {
  const { q, c, nodes } = await cluster(t, 4);
  // Size 3 over four hosts: any two hosts hold every replica but one of some PG, below min_size 2.
  await q.store.create({
    kind: DisruptionKind.DisruptionBudget,
    id: DISRUPTION_BUDGET_ID,
    name: 'disruption-budget',
    spec: { maxDisruptions: 1, maxUnavailable: 4 },
    status: { leases: [] },
  });
  const s = sample(q, q.lab!.ceph, t);
  const ids = nodes.map((n) => n.id);
  await c.post<InvokeResults>('/invoke/node', { operation: 'node.restart', nodeIds: ids });
  const refused = await waitFor('a node held back by Ceph', async () =>
    (await q.nodes()).find((n) => /NotOkToStop/.test(n.status.disruption?.reason ?? '')),
  );
  t.regex(refused.status.disruption?.reason ?? '', /(OsdNotOkToStop|MonNotOkToStop): stopping .*held by restart of/);
  await restarted(q, ids);
  t.is(s.quorumLost, 0);
  t.deepEqual([...s.inactive], []);
  t.is(s.maxRebooting, 1, 'Ceph never agreed to two hosts at once');
});

test.serial('disruption budget: two requests racing for the budget both end restarted, never together', async (t) => {
  const { q, c, nodes } = await cluster(t, 3);
  const s = sample(q, q.lab!.ceph, t);
  const [a, b] = [nodes[0]!, nodes[1]!];
  const [ra, rb] = await Promise.all([
    c.post<InvokeResults>('/invoke/node', { operation: 'node.restart', nodeIds: [a.id] }),
    c.post<InvokeResults>('/invoke/node', { operation: 'node.restart', nodeIds: [b.id] }),
  ]);
  t.is(ra.json.results[0]?.status, 'scheduled');
  t.is(rb.json.results[0]?.status, 'scheduled');
  await restarted(q, [a.id, b.id]);
  t.is(s.quorumLost, 0);
  t.deepEqual([...s.inactive], []);
  t.is(s.maxDomains, 1, 'the two monitors never down together');
  t.is(s.maxRebooting, 1);
  t.is(leaseEvents(q, 'disruption.lease.taken').length, 2);
});

test.serial('disruption budget: the node of the only active MDS waits for a standby, then restarts', async (t) => {
  const { q, c, nodes } = await cluster(t, 3);
  const [, b, third] = nodes as [NodeDoc, NodeDoc, NodeDoc];
  t.is((await c.post('/ceph/fs', { name: 'share', metadataPool: 'share_metadata', dataPool: 'share_data' })).status, 200);
  t.is((await c.post('/ceph/mds', { nodeId: b.id })).status, 200);
  const fsmap = q.lab!.ceph.fsmap;
  await waitFor('an active MDS', () => [...fsmap.mds.values()].some((m) => m.running && m.fsId !== undefined), 30_000);
  await waitFor(
    'its node reports it',
    async () => (await q.store.mustGet<NodeSpec, NodeStatusFields>(Kind.Node, b.id)).status.daemons?.mds,
  );
  await c.post<InvokeResults>('/invoke/node', { operation: 'node.restart', nodeIds: [b.id] });
  const held = await waitFor('held back by mds ok-to-stop', async () => {
    const n = await q.store.mustGet<NodeSpec, NodeStatusFields>(Kind.Node, b.id);
    return /MdsNotOkToStop/.test(n.status.disruption?.reason ?? '') ? n : undefined;
  });
  t.regex(held.status.disruption?.reason ?? '', /stopping mds\.\S+: insufficent standby MDS daemons/);
  t.is(held.status.observedRestartGeneration ?? 0, 0);
  t.deepEqual(await leases(q), [], 'no lease taken while Ceph says no');
  // A standby elsewhere: Ceph agrees, and the restart goes.
  t.is((await c.post('/ceph/mds', { nodeId: third.id })).status, 200);
  const [after] = await restarted(q, [b.id]);
  t.not(after?.status.bootId, b.status.bootId);
});

test.serial('disruption budget: a lease held when Quarry stops is found again, not leaked or doubled', async (t) => {
  const stateDir = await mkdtemp(join(tmpdir(), 'quarry-budget-restart-'));
  t.teardown(() => rm(stateDir, { recursive: true, force: true }));
  const { q, c, nodes } = await cluster(t, 3, { stateDir });
  const ceph = q.lab!.ceph;
  const ids = nodes.map((n) => n.id);
  let holder: string | undefined;
  const unwatch = q.store.watch(q.store.revision(), (e) => {
    if (e.type === 'relist' || e.doc.kind !== DisruptionKind.DisruptionBudget) return;
    holder ??= (e.doc.status as DisruptionBudgetStatus).leases?.[0]?.holderId;
  });
  t.teardown(unwatch);
  await c.post<InvokeResults>('/invoke/node', { operation: 'node.restart', nodeIds: ids });
  await waitFor('a lease taken', () => holder);
  const kept = (await leases(q)).map((l) => l.holderId);
  await q.stop();
  t.deepEqual(kept, [holder], 'the lease is in the store as Quarry stops');
  const q2 = await startLab(t, 3, { stateDir, store: undefined, lab: { ceph } });
  // The new lab boots every machine again (its daemons all stop with the old one), so quorum is
  // not sampled across the restart of Quarry: the leases are.
  const s = sample(q2, ceph, t);
  await restarted(q2, ids);
  t.is(s.maxPerHolder, 1, 'never two leases for one holder');
  t.is(s.maxDomains, 1);
  // The holder's lease was recovered: the new Quarry gave it back without taking it again first.
  const mine = q2.events.filter((e) => e.type.startsWith('disruption.lease.') && (e.payload as { holderId: string }).holderId === holder);
  t.is(mine[0]?.type, 'disruption.lease.released');
  const takenAgain = leaseEvents(q2, 'disruption.lease.taken').map((e) => e.holderId);
  t.deepEqual(takenAgain.sort(), ids.filter((id) => id !== holder).sort(), 'the other two took theirs in the new Quarry');
});
