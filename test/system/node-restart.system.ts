// Issue 15 on real daemons: the disruption budget over a real reboot of every node. The three
// namespace nodes come up from a spec file (a monitor on each node's first disk, a manager, an
// OSD on the other: three OSDs), objects go into a size-3 pool (min_size 2), then ONE
// `POST /invoke/node` asks node.restart of all three. Each reboot is the harness's simulation
// (netns-cluster.ts powerDown: agent and daemons stopped as systemd's reboot does, /run emptied,
// the monitor's disk unmounted, a new boot id, the agent started again); Quarry brings the daemons
// back. Shown: they go one by one (the leases on /events never overlap, nor do the machines'
// downtimes, and the others wait Blocked: DisruptionBudget), the quorum is kept throughout
// (sampled), every run log has Ceph's ok-to-stop, and in the end every PG is active+clean and
// every object reads back identical.
import test from 'ava';
import type { ExecutionContext } from 'ava';
import { Step } from '../../src/catalogue/index.js';
import { DISRUPTION_BUDGET_ID, DisruptionKind, type DisruptionBudgetStatus } from '../../src/model/disruption-kinds.js';
import { Kind, type NodeSpec, type NodeStatusFields } from '../../src/model/kinds.js';
import type { InvokeResults } from '../http/bodies.js';
import { untilHealthy, waitNodesReady } from './cluster-bringup.js';
import { monStoresOnTheirDisks } from './cluster-mon-disk.js';
import { NetnsCluster } from './netns-cluster.js';
import { until } from './node-sandbox.js';
import { createPool, readObjects, writeObjects } from './osd-day2-ceph.js';
import { clusterSpec, writeSpec } from './osd-day2-spec.js';
import {
  hasMajority,
  leaseSpans,
  listenLeases,
  monitorsKeepMajority,
  sampleMonitors,
  sampleQuorum,
  watchNodes,
} from './node-restart-watch.js';

const DISKS_PER_NODE = 2;
const OSDS = 3;
const OBJECTS = 24;

let cluster: NetnsCluster | undefined;
let sums: Map<string, string> | undefined;

const need = <T>(v: T | undefined, what: string): T => {
  if (v === undefined) throw new Error(`${what} is not there: an earlier test failed`);
  return v;
};

const secs = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** On a failure, what the loops did, each node's status and what the daemons said. */
function explainOnFailure(t: ExecutionContext): void {
  t.teardown(async () => {
    if (t.passed || !cluster?.q) return;
    for (const r of (await cluster.q.tasks.recent(40)).reverse())
      t.log(`${r.metadata.createdAt} ${r.spec.taskName} ${JSON.stringify(r.spec.args)} ${r.status.state} ${r.status.error ?? ''}`);
    for (const n of cluster.nodes) {
      const doc = await cluster.q.store.get<NodeSpec, NodeStatusFields>(Kind.Node, n.id);
      t.log(`${n.ns}: ${JSON.stringify({ phase: doc?.status.phase, disruption: doc?.status.disruption, power: n.power })}`);
      t.log(JSON.stringify(doc?.status.conditions?.filter((x) => x.status === 'True')));
    }
    for (const tail of await cluster.logTails()) t.log(tail);
  });
}

/** Each running daemon of every node (`<ns> <type>.<id>`) → its pid. */
async function daemonPids(c: NetnsCluster): Promise<Map<string, number>> {
  const out = new Map<string, number>();
  for (const n of c.nodes)
    for (const d of await n.host.daemons()) {
      const pid = await n.host.pidOf(d.type, d.id);
      if (pid !== null) out.set(`${n.ns} ${d.type}.${d.id}`, pid);
    }
  return out;
}

/** `up_from` of every OSD: the osdmap epoch it last came up in; it grows when Ceph saw it down. */
async function upFrom(c: NetnsCluster): Promise<Map<number, number>> {
  const dump = JSON.parse((await c.runner.run('ceph', c.ceph.args(['osd', 'dump']), { timeoutMs: 30_000 })).stdout) as {
    osds: Array<{ osd: number; up_from: number }>;
  };
  return new Map(dump.osds.map((o) => [o.osd, o.up_from]));
}

const leases = async (c: NetnsCluster) =>
  (await c.q.store.get<unknown, DisruptionBudgetStatus>(DisruptionKind.DisruptionBudget, DISRUPTION_BUDGET_ID))?.status.leases ?? [];

test.before(async () => {
  cluster = await NetnsCluster.start({ nodes: 3, disksPerNode: DISKS_PER_NODE });
});

// Also after a failure: nothing may survive the run.
test.after.always(async () => {
  if (!cluster) return;
  await cluster.stop();
  const left = await cluster.leftovers();
  if (left.length) throw new Error(`teardown left behind:\n${left.join('\n')}`);
});

test.serial('node restart: three monitors, a manager and three OSDs from a spec file, objects in a size-3 pool, HEALTH_OK', async (t) => {
  explainOnFailure(t);
  const c = need(cluster, 'the cluster');
  await waitNodesReady(c, DISKS_PER_NODE);
  await writeSpec(c, await clusterSpec(c));
  await untilHealthy(c, OSDS, 'HEALTH_OK with three OSDs', 270_000);
  await createPool(c);
  sums = await writeObjects(c, OBJECTS);
  const s = await untilHealthy(c, OSDS, 'every PG active+clean with the objects', 120_000);
  t.is(s.quorumNames.length, 3);
  t.is(sums.size, OBJECTS);
});

test.serial(
  'node restart: node.restart of all three nodes in one request reboots them one by one, quorum kept, ok-to-stop in every run log, PGs clean and objects identical after',
  async (t) => {
    explainOnFailure(t);
    const c = need(cluster, 'the cluster');
    const want = need(sums, 'the objects');
    const ids = c.nodes.map((n) => n.id);
    const nsOf = (id: string) => c.nodes.find((n) => n.id === id)!.ns;
    const bootOf = async (id: string) => (await c.q.store.get<NodeSpec, NodeStatusFields>(Kind.Node, id))?.status.bootId;
    const bootsBefore = new Map(await Promise.all(ids.map(async (id) => [id, await bootOf(id)] as const)));
    const pidsBefore = await daemonPids(c);
    const upFromBefore = await upFrom(c);

    const sse = listenLeases(c);
    t.teardown(() => sse.close());
    await until('the SSE client connected', async () => sse.open(), Boolean, 30_000);
    const nodes = watchNodes(c);
    t.teardown(() => nodes.stop());
    const quorum = sampleQuorum(c);
    t.teardown(() => quorum.stop());
    const mons = sampleMonitors(c);
    t.teardown(() => mons.stop());

    const started = Date.now();
    const r = await c.admin.post<InvokeResults>('/invoke/node', { operation: 'node.restart', nodeIds: ids });
    t.is(r.status, 200, r.text);
    t.deepEqual(
      r.json.results.map((x) => x.status),
      ['scheduled', 'scheduled', 'scheduled'],
      r.text,
    );

    await until(
      'every node rebooted, active with its daemons, every lease given back',
      async () => {
        const docs = await Promise.all(ids.map((id) => c.q.store.mustGet<NodeSpec, NodeStatusFields>(Kind.Node, id)));
        const back = docs.every((d) => d.status.observedRestartGeneration === d.spec.restartGeneration && d.status.phase === 'active');
        return back && (await leases(c)).length === 0 && c.nodes.every((n) => n.power.at(-1)?.upAt !== undefined);
      },
      Boolean,
      270_000,
    );
    const took = Date.now() - started;
    await quorum.stop();
    await mons.stop();
    nodes.stop();

    // One by one, as the harness saw the machines: each went down after the one before was up.
    const downs = c.nodes.flatMap((n) => n.power.map((p) => ({ ns: n.ns, ...p }))).sort((a, b) => a.askedAt - b.askedAt);
    t.deepEqual(downs.map((d) => d.action).sort(), ['reboot', 'reboot', 'reboot'], JSON.stringify(downs));
    t.deepEqual(downs.map((d) => d.ns).sort(), c.nodes.map((n) => n.ns).sort(), 'each node rebooted once');
    for (let i = 1; i < downs.length; i++)
      t.true(downs[i]!.askedAt > downs[i - 1]!.upAt!, `${downs[i]!.ns} went down after ${downs[i - 1]!.ns} was up again`);
    t.log(`reboots: ${downs.map((d) => `${d.ns} at ${secs(d.askedAt - started)} (up ${secs(d.upAt! - d.askedAt)} later)`).join(', ')}`);

    // One by one, as /events told it: a lease per node, each taken after the one before was given back.
    await until(
      'three leases taken and released on /events',
      async () => leaseSpans(sse.events),
      (s) => s.length === 3 && s.every((x) => x.released !== null),
      30_000,
    );
    const spans = leaseSpans(sse.events);
    t.deepEqual(spans.map((s) => s.holderId).sort(), [...ids].sort(), 'one lease per node');
    for (let i = 1; i < spans.length; i++)
      t.true(spans[i]!.taken > spans[i - 1]!.released!, 'a lease taken only once the one before was released');
    t.deepEqual(
      spans.map((s) => nsOf(s.holderId)),
      downs.map((d) => d.ns),
      'the machines rebooted in the order their leases were taken',
    );
    t.true(sse.events.every((e) => e.kind === 'restart' && e.domains.length === 1));

    // The two that went later each waited for the budget, saying which lease held them.
    for (const s of spans.slice(1)) {
      const seen = nodes.seen.get(s.holderId)!;
      t.true(
        seen.some((x) => x.blocked === 'DisruptionBudget' && x.disruption === 'waiting' && x.heldBy > 0),
        `${nsOf(s.holderId)}: ${JSON.stringify(seen)}`,
      );
    }
    for (const id of ids) t.not(await bootOf(id), bootsBefore.get(id), `${nsOf(id)} reported from a new boot`);

    // The quorum, sampled all along: a majority of the monmap in every answer.
    const q = quorum.samples;
    t.true(q.length >= 10, `${q.length} samples`);
    t.deepEqual(
      q.filter((s) => !hasMajority(s)),
      [],
      `quorum sizes seen: ${q.map((s) => s.quorum).join(' ')}`,
    );
    // Each monitor's own word, sampled all along: never two of the three down or out at once.
    const m = mons.samples;
    t.true(m.length >= 10, `${m.length} monitor samples`);
    const lost = m.filter((x) => !monitorsKeepMajority(x));
    t.deepEqual(lost, [], JSON.stringify(lost.slice(0, 5)));
    const oneDown = m.filter((x) => Object.values(x.states).some((st) => st !== 'leader' && st !== 'peon'));
    t.log(
      `monitor samples: ${m.length}, ${oneDown.length} with one monitor down or out of quorum (${[
        ...new Set(
          oneDown.flatMap((x) =>
            Object.entries(x.states)
              .filter(([, st]) => st !== 'leader' && st !== 'peon')
              .map(([n, st]) => `${n} ${st}`),
          ),
        ),
      ].join(', ')})`,
    );
    t.log(`quorum sizes over ${secs(took)}: ${[...new Set(q.map((s) => String(s.quorum)))].join(', ')} (${q.length} samples)`);

    // Every node's restart, as its runs tell it: under its lease noout first (the run that took
    // the lease: the budget's admission and Ceph's ok-to-stop in its log), then node.restart on
    // that lease, then noout cleared once the node was back.
    const recent = (await c.q.tasks.recent(500)).filter((x) => Date.parse(x.metadata.createdAt) >= started);
    const runs = recent.filter((x) => x.spec.taskName === Step.nodeRestart && x.status.state === 'completed');
    t.deepEqual(runs.map((x) => x.spec.nodeId).sort(), [...ids].sort(), 'one completed node.restart run per node');
    for (const run of runs) {
      const mine = recent
        .filter((x) => x.spec.targetId === run.spec.targetId && x.spec.taskName === Step.osdNoout && x.status.state === 'completed')
        .sort((a, b) => a.metadata.createdAt.localeCompare(b.metadata.createdAt));
      t.deepEqual(
        mine.map((x) => x.spec.args.set),
        [true, false],
        `${nsOf(run.spec.nodeId!)}: noout set, then cleared`,
      );
      t.true(mine[0]!.metadata.createdAt < run.metadata.createdAt && run.metadata.createdAt < mine[1]!.metadata.createdAt);
      const first = (await c.q.tasks.logs(mine[0]!.id)).map((l) => l.message).join('\n');
      t.regex(first, /admitted by the disruption budget: lease "restart of/, first);
      t.regex(first, /osd ok-to-stop osd\.\d+: ok/, first);
      t.regex(first, /mon ok-to-stop /, first);
      const all = (await c.q.tasks.logs(run.id)).map((l) => l.message).join('\n');
      t.regex(all, /sent under the disruption lease it holds/, all);
      t.regex(all, /the machine reboots once this run is reported completed/, all);
    }
    // Nothing left flagged: Ceph marks OSDs out again when they go down for good.
    const dump = JSON.parse(
      (await c.runner.run('ceph', c.ceph.args(['osd', 'dump', '--format', 'json']), { timeoutMs: 30_000 })).stdout,
    ) as {
      flags: string;
      osds: Array<{ osd: number; state: string[] }>;
    };
    t.false(dump.flags.split(',').includes('noout'), dump.flags);
    t.deepEqual(
      dump.osds.filter((o) => o.state.includes('noout')).map((o) => o.osd),
      [],
    );

    const s = await untilHealthy(c, OSDS, 'HEALTH_OK with every PG active+clean after the restarts', 180_000);
    t.is(s.quorumNames.length, 3);
    t.deepEqual(await readObjects(c, want.keys()), want, 'every object reads back with the same sha256');

    // The reboots were real for Ceph: every daemon runs again as a new process, started by the
    // loops through the agent (ceph.daemon.restart), and Ceph saw each OSD down and up again.
    const pidsAfter = await daemonPids(c);
    t.deepEqual([...pidsAfter.keys()].sort(), [...pidsBefore.keys()].sort(), 'the same daemons run');
    for (const [d, pid] of pidsBefore) t.not(pidsAfter.get(d), pid, `${d}: a new process`);
    const restarts = (await c.q.tasks.recent(500)).filter(
      (x) => x.spec.taskName === 'ceph.daemon.restart' && x.status.state === 'completed' && Date.parse(x.metadata.createdAt) >= started,
    );
    const restarted = new Set(restarts.map((x) => `${x.spec.nodeId} ${String(x.spec.args.daemon)}`));
    for (const id of ids) for (const d of ['mon', 'osd']) t.true(restarted.has(`${id} ${d}`), `${nsOf(id)}: its ${d} restarted by Quarry`);
    const upFromAfter = await upFrom(c);
    for (const [osd, epoch] of upFromBefore) t.true(upFromAfter.get(osd)! > epoch, `osd.${osd} marked down and up again`);
    // Each monitor's store is on its disk again: the new boot's agent mounted it.
    await monStoresOnTheirDisks(t, c);
    t.log(`all three restarted in ${secs(took)}`);
  },
);

test.serial(
  'node restart: node.shutdown powers a node off through its agent, node.power-on without a BMC says NoPowerControl, switched on by hand it comes back with its daemons',
  async (t) => {
    explainOnFailure(t);
    const c = need(cluster, 'the cluster');
    const want = need(sums, 'the objects');
    const n = c.nodes[2]!;
    const doc = () => c.q.store.mustGet<NodeSpec, NodeStatusFields>(Kind.Node, n.id);
    type Detail = { id: string; status: string; blocked: { reason: string; message: string } | null };
    const detail = async () => (await c.admin.get<Detail[]>('/nodes/details')).json.find((d) => d.id === n.id)!;
    const bootBefore = (await doc()).status.bootId;
    const started = Date.now();

    const r = await c.admin.post<InvokeResults>('/invoke/node', { operation: 'node.shutdown', nodeIds: [n.id] });
    t.deepEqual(
      r.json.results.map((x) => x.status),
      ['scheduled'],
      r.text,
    );
    await until(
      'the node offline, its shutdown acknowledged and its lease given back, the harness done powering it off',
      async () => ({ d: await doc(), leases: await leases(c), off: n.power.at(-1) }),
      // The agent falls silent first; the harness stops the daemons after it (downAt).
      ({ d, leases: l, off }) =>
        d.status.phase === 'offline' &&
        d.status.observedShutdownGeneration === d.spec.shutdownGeneration &&
        l.length === 0 &&
        off?.downAt !== undefined,
      120_000,
    );
    const off = n.power.at(-1);
    t.like(off, { action: 'poweroff', upAt: undefined });
    t.not(off?.downAt, undefined, 'the harness powered it off');
    const run = (await c.q.tasks.recent(200)).find(
      (x) => x.spec.taskName === 'node.shutdown' && x.spec.nodeId === n.id && Date.parse(x.metadata.createdAt) >= started,
    );
    t.is(run?.status.state, 'completed');
    const lines = (await c.q.tasks.logs(run!.id)).map((l) => l.message).join('\n');
    t.regex(lines, /the machine powers off once this run is reported completed/, lines);
    // Its lease was taken by the noout run that went first, with Ceph's word in its log.
    const noout = (await c.q.tasks.recent(200)).filter(
      (x) => x.spec.taskName === Step.osdNoout && x.spec.targetId === n.id && Date.parse(x.metadata.createdAt) >= started,
    );
    const setRun = noout.find((x) => x.spec.args.set === true);
    const setLog = setRun ? (await c.q.tasks.logs(setRun.id)).map((l) => l.message).join('\n') : '';
    t.regex(setLog, /osd ok-to-stop osd\.\d+: ok/, setLog);
    // Off for Ceph too: its monitor out of the quorum (two of three left), its OSD down.
    await until(
      'Ceph without the node: two monitors in quorum, two OSDs up',
      () => c.ceph.status(),
      (s) => s.quorumNames.length === 2 && s.osdUp === OSDS - 1,
      60_000,
    );

    // No BMC declared: the power-on is not silently nothing.
    const on = await c.admin.post<InvokeResults>('/invoke/node', { operation: 'node.power-on', nodeIds: [n.id] });
    t.deepEqual(
      on.json.results.map((x) => x.status),
      ['scheduled'],
      on.text,
    );
    const blocked = await until('the node saying it has no power control', detail, (d) => d.blocked?.reason === 'NoPowerControl', 60_000);
    t.regex(blocked.blocked!.message, /declare a BMC or power the machine on by hand/);
    t.is(blocked.status, 'offline');

    // Switched on by hand: it boots, the power-on is acknowledged, Quarry starts its daemons.
    await c.powerOn(n);
    await until(
      'the node active from a new boot, the power-on acknowledged',
      doc,
      (d) =>
        d.status.phase === 'active' && d.status.bootId !== bootBefore && d.status.observedPowerOnGeneration === d.spec.powerOnGeneration,
      120_000,
    );
    t.is((await detail()).blocked, null);
    const s = await untilHealthy(c, OSDS, 'HEALTH_OK with every PG active+clean after the power-on', 180_000);
    t.is(s.quorumNames.length, 3);
    t.deepEqual(await readObjects(c, want.keys()), want, 'every object reads back with the same sha256');
    t.log(`shut down and back in ${secs(Date.now() - started)}`);
  },
);
