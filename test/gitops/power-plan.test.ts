// A file's `power` (#15 part 4) and the dry run's disruption order (part 5), pure: evaluate()
// against an in-memory world. `power` is acted on only when it changes against the stored
// power; the plan lists the nodes it shuts down in the budget's waves, failure domain by domain.
import test from 'ava';
import { domainOf } from '../../src/gitops/disruptions.js';
import type { World } from '../../src/gitops/world.js';
import { DISRUPTION_BUDGET_ID, DisruptionKind, type DisruptionBudgetSpec } from '../../src/model/disruption-kinds.js';
import type { Doc } from '../../src/model/document.js';
import type { NodeSpec } from '../../src/model/kinds.js';
import { failureDomainOf } from '../../reconcilers/shared/failure-domain.js';
import { node } from '../builders.js';
import { doc, files } from './fixtures.js';
import { clusterDoc, emptyWorld, evaluateIn, meta } from './worlds.js';

const budgetDoc = (spec: DisruptionBudgetSpec): Doc<DisruptionBudgetSpec> => ({
  kind: DisruptionKind.DisruptionBudget,
  id: DISRUPTION_BUDGET_ID,
  name: 'disruption-budget',
  metadata: meta,
  spec,
  status: {},
});

/** Node i: hostname n<i>, MAC ...:0i, a monitor (it runs Ceph), in rack `racks[i-1]`. */
function nodes(racks: string[], over: Partial<NodeSpec> = {}) {
  return racks.map((rack, k) => {
    const i = k + 1;
    const n = node('active')
      .withSpec({ hostname: `n${i}`, macs: [`52:54:00:00:00:0${i}`], daemons: { mon: { diskId: `disk-${i}` } }, ...over })
      .build();
    return { ...n, id: `00000000-0000-4000-8000-00000000000${i}`, name: `n${i}`, metadata: { ...n.metadata, labels: { rack } } };
  });
}

function world(ns: ReturnType<typeof nodes>, cluster = clusterDoc({ failureDomain: 'rack' }), budget?: DisruptionBudgetSpec): World {
  return emptyWorld({ nodes: ns, cluster, ...(budget ? { budget: budgetDoc(budget) } : {}) });
}

const nodeFile = (i: number, rack: string, power: 'on' | 'off') =>
  doc('Node', `n${i}`, `match: { hostname: n${i} }\npower: ${power}\ndaemons: { mon: {} }`).replace(
    `  name: n${i}\n`,
    `  name: n${i}\n  labels: { rack: ${rack} }\n`,
  );

const plan = evaluateIn;
const nodeSpecAfter = (e: Awaited<ReturnType<typeof plan>>, name: string) =>
  e.changes.find((c) => c.kind === 'Node' && c.name === name)?.after?.spec as NodeSpec | undefined;

test('spec power: turning power off requests a shutdown, on requests a power-on, the same power again requests nothing', async (t) => {
  const w = world(nodes(['r1']));
  const off = await plan(w, nodeFile(1, 'r1', 'off'));
  t.deepEqual(off.errors, []);
  t.like(nodeSpecAfter(off, 'n1'), { power: 'off', shutdownGeneration: 1 });
  t.is(nodeSpecAfter(off, 'n1')?.powerOnGeneration, undefined);
  // Stored off (as the apply leaves it): the same file asks nothing more.
  const stored = nodes(['r1'], { power: 'off', shutdownGeneration: 1 });
  const again = await plan(world(stored), nodeFile(1, 'r1', 'off'));
  t.deepEqual(
    again.changes.filter((c) => c.kind === 'Node').flatMap((c) => c.fields),
    [],
    'no shutdown requested again',
  );
  t.deepEqual(again.disruptions, []);
  // off → on: a power-on request, which undoes the shutdown.
  const on = await plan(world(stored), nodeFile(1, 'r1', 'on'));
  t.like(nodeSpecAfter(on, 'n1'), { power: 'on', shutdownGeneration: 1, powerOnGeneration: 1 });
  t.deepEqual(on.disruptions, [], 'a power-on disrupts nothing');
  // on, stored on: nothing.
  const same = await plan(w, nodeFile(1, 'r1', 'on'));
  t.like(nodeSpecAfter(same, 'n1'), { power: 'on', shutdownGeneration: 0 });
  t.is(nodeSpecAfter(same, 'n1')?.powerOnGeneration, undefined);
});

test('spec plan disruptions: racks r1 (two nodes) and r2 (one) with maxUnavailable 1 go in two waves, r1 then r2', async (t) => {
  const w = world(nodes(['r2', 'r1', 'r1']));
  const e = await plan(w, files(nodeFile(1, 'r2', 'off'), nodeFile(2, 'r1', 'off'), nodeFile(3, 'r1', 'off')));
  t.deepEqual(e.errors, []);
  t.deepEqual(
    e.disruptions.map(({ nodeIds: _, ...d }) => d),
    [
      { wave: 1, kind: 'shutdown', domains: ['rack:r1'], nodes: ['n2', 'n3'], destructive: true, lease: true },
      { wave: 2, kind: 'shutdown', domains: ['rack:r2'], nodes: ['n1'], destructive: true, lease: true },
    ],
  );
});

test('spec plan disruptions: maxUnavailable 2 (stored, or set by the same file) puts both racks in one wave', async (t) => {
  const text = files(nodeFile(1, 'r2', 'off'), nodeFile(2, 'r1', 'off'), nodeFile(3, 'r1', 'off'));
  const stored = await plan(world(nodes(['r2', 'r1', 'r1']), undefined, { maxDisruptions: 1, maxUnavailable: 2 }), text);
  t.deepEqual(
    stored.disruptions.map((d) => [d.wave, d.domains, d.nodes]),
    [[1, ['rack:r1', 'rack:r2'], ['n2', 'n3', 'n1']]],
  );
  const own = await plan(
    world(nodes(['r2', 'r1', 'r1'])),
    files(doc('Cluster', 'default', 'disruptionBudget: { maxUnavailable: 2 }'), text),
  );
  t.deepEqual(own.errors, []);
  t.deepEqual(
    own.disruptions.map((d) => d.wave),
    [1],
  );
});

test('spec plan disruptions: host failure domain is a wave per node; a node that runs no Ceph goes at once without a lease', async (t) => {
  const ns = nodes(['r1', 'r1']);
  ns[1] = { ...ns[1]!, spec: { ...ns[1]!.spec, daemons: {} } };
  const e = await plan(
    world(ns, clusterDoc()),
    files(nodeFile(1, 'r1', 'off'), nodeFile(2, 'r1', 'off').replace('daemons: { mon: {} }', 'daemons: {}')),
  );
  t.deepEqual(e.errors, []);
  t.deepEqual(
    e.disruptions.map((d) => [d.wave, d.domains, d.nodes, d.lease]),
    [
      [1, ['n1'], ['n1'], true],
      [1, ['n2'], ['n2'], false],
    ],
  );
});

test('spec plan disruptions: the plan view says the waves and that Ceph is asked at the time; none, no note', async (t) => {
  const { planView } = await import('../../src/gitops/evaluate.js');
  const w = world(nodes(['r1']));
  const view = planView(await plan(w, nodeFile(1, 'r1', 'off')));
  t.is(view.disruptions.length, 1);
  t.regex(view.disruptionNote ?? '', /ok-to-stop .* asked when each wave's turn comes/);
  const none = planView(await plan(w, nodeFile(1, 'r1', 'on')));
  t.deepEqual(none.disruptions, []);
  t.false('disruptionNote' in none);
});

test('spec plan disruptions: a node is in the failure domain the budget counts it in', (t) => {
  const n = { spec: { hostname: 'n1' }, metadata: { labels: { rack: 'r1', row: 'a' } } };
  for (const c of [{}, { failureDomain: 'rack' }, { failureDomain: 'row' }, { failureDomain: 'room' }])
    t.is(domainOf(c.failureDomain ?? 'host', 'n1', n.metadata.labels), failureDomainOf(n, c), JSON.stringify(c));
});

test('spec plan disruptions: maintenance: true on nodes of two racks enters them rack by rack, with a lease each', async (t) => {
  const w = world(nodes(['r2', 'r1', 'r1']));
  const file = (i: number, rack: string) =>
    doc('Node', `n${i}`, `match: { hostname: n${i} }\nmaintenance: true\ndaemons: { mon: {} }`).replace(
      `  name: n${i}\n`,
      `  name: n${i}\n  labels: { rack: ${rack} }\n`,
    );
  const e = await plan(w, files(file(1, 'r2'), file(2, 'r1'), file(3, 'r1')));
  t.deepEqual(e.errors, []);
  t.deepEqual(
    e.disruptions.map((d) => [d.wave, d.kind, d.domains, d.nodes, d.lease]),
    [
      [1, 'maintenance', ['rack:r1'], ['n2', 'n3'], true],
      [2, 'maintenance', ['rack:r2'], ['n1'], true],
    ],
  );
});

test('spec plan disruptions: a clusterNetwork change restarts the OSDs rack by rack, and names only nodes that run OSDs', async (t) => {
  const ns = nodes(['r2', 'r1', 'r1']);
  // n1 and n2 report OSDs; n3 runs a monitor only.
  ns[0]!.status.daemons = { osds: [1] };
  ns[1]!.status.daemons = { osds: [2] };
  const w = world(ns);
  const e = await plan(w, files(doc('Cluster', 'default', 'clusterNetwork: 10.9.0.0/24')));
  t.deepEqual(e.errors, []);
  t.deepEqual(
    e.disruptions.map((d) => [d.wave, d.kind, d.domains, d.nodes, d.lease]),
    [
      [1, 'daemon-restart', ['rack:r1'], ['n2'], true],
      [2, 'daemon-restart', ['rack:r2'], ['n1'], true],
    ],
  );
  // The same network again restarts nothing.
  const same = world(ns, clusterDoc({ failureDomain: 'rack', clusterNetwork: '10.9.0.0/24' }));
  t.deepEqual((await plan(same, files(doc('Cluster', 'default', 'clusterNetwork: 10.9.0.0/24')))).disruptions, []);
});
