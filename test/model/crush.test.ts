// Failure domains, pure: a node's labels as its host's CRUSH chain, the Cluster's levels and
// failure domain checked, labels checked as Ceph bucket names, placements that cannot all hold;
// and the same checks where a spec file enters (a file error, nothing applied).
import test from 'ava';
import { Step } from '../../src/catalogue/index.js';
import { evaluate } from '../../src/gitops/evaluate.js';
import { specValidators } from '../../src/gitops/parse.js';
import type { World } from '../../src/gitops/world.js';
import { CephKind } from '../../src/model/ceph-kinds.js';
import {
  DEFAULT_CRUSH_LEVELS,
  crushChain,
  crushSpecErrors,
  labelErrors,
  locationArgs,
  placementConflicts,
  ruleNameOf,
} from '../../src/model/crush.js';
import { node } from '../builders.js';
import { doc, files } from '../gitops/fixtures.js';
import { clusterDoc, emptyWorld } from '../gitops/worlds.js';

const levels = [...DEFAULT_CRUSH_LEVELS];

test('crush chain: only the levels a node has, root-most first, whatever the label order', (t) => {
  t.deepEqual(crushChain({ rack: 'r1', datacenter: 'dc1', team: 'blue' }, levels), [
    { type: 'datacenter', name: 'dc1' },
    { type: 'rack', name: 'r1' },
  ]);
  t.deepEqual(crushChain({ team: 'blue' }, levels), []);
  t.deepEqual(crushChain({ rack: 'r1' }, ['row']), [], 'a label that is not a level places nothing');
  t.deepEqual(locationArgs(crushChain({ row: 'a', rack: 'r1' }, levels)), ['root=default', 'row=a', 'rack=r1']);
  t.is(ruleNameOf('rack'), 'quarry-rack');
});

test('crush spec: levels must be CRUSH types, once each, root-most first; the failure domain host or a level', (t) => {
  t.deepEqual(crushSpecErrors({}), []);
  t.deepEqual(crushSpecErrors({ crushLevels: ['room', 'rack'], failureDomain: 'rack' }), []);
  t.deepEqual(
    crushSpecErrors({ crushLevels: ['rack', 'row'] }, '/spec').map((e) => e.path),
    ['/spec/crushLevels/1'],
  );
  t.regex(crushSpecErrors({ crushLevels: ['rack', 'row'] })[0]!.message, /root-most first.*row cannot be under rack/);
  t.regex(crushSpecErrors({ crushLevels: ['shelf'] })[0]!.message, /shelf is not a CRUSH type/);
  t.regex(crushSpecErrors({ crushLevels: ['rack', 'rack'] })[0]!.message, /named twice/);
  const domain = crushSpecErrors({ crushLevels: ['rack'], failureDomain: 'room' }, '/spec');
  t.deepEqual(domain, [{ path: '/spec/failureDomain', message: 'the failure domain must be host or one of crushLevels (rack), not room' }]);
});

test('crush labels: a level label must be a name Ceph takes, not the root, not a host', (t) => {
  const hosts = new Set(['node-1', 'node-2']);
  t.deepEqual(labelErrors({ rack: 'r1', team: 'a b/c' }, levels, hosts), [], 'labels that are not levels are free text');
  const bad = labelErrors({ rack: 'r 1', row: 'default', room: 'node-2', datacenter: 'x'.repeat(65) }, levels, hosts);
  t.deepEqual(
    bad.map((e) => e.path),
    ['/metadata/labels/datacenter', '/metadata/labels/room', '/metadata/labels/row', '/metadata/labels/rack'],
  );
  t.regex(bad[1]!.message, /node-2 is a host's name/);
  t.regex(bad[2]!.message, /name of the CRUSH root/);
  t.regex(bad[3]!.message, /1 to 64 of A-Z a-z 0-9 _ \. -/);
});

test('crush placement: a bucket named with two types or under two parents is a conflict, said once', (t) => {
  t.deepEqual(
    placementConflicts([
      { host: 'a', chain: [{ type: 'rack', name: 'r1' }] },
      { host: 'b', chain: [{ type: 'rack', name: 'r1' }] },
    ]),
    [],
  );
  t.deepEqual(
    placementConflicts([
      { host: 'a', chain: [{ type: 'rack', name: 'r1' }] },
      {
        host: 'b',
        chain: [
          { type: 'row', name: 'x' },
          { type: 'rack', name: 'r1' },
        ],
      },
      { host: 'c', chain: [{ type: 'row', name: 'r1' }] },
      {
        host: 'd',
        chain: [
          { type: 'row', name: 'x' },
          { type: 'rack', name: 'r1' },
        ],
      },
      { host: 'e', chain: [{ type: 'rack', name: 'x' }] },
    ]),
    ['rack r1 is under default for a and under x for b', 'x is a row for b and a rack for e'],
  );
});

// ---- the spec file's edge -----------------------------------------------------------------------

function world(): World {
  return emptyWorld({ nodes: [node('active').build()], cluster: clusterDoc() });
}

const nodeDoc = (labels: string) =>
  doc('Node', 'storage-1', 'match: { mac: "52:54:00:00:00:01" }').replace(
    '  name: storage-1\n',
    `  name: storage-1\n  labels: ${labels}\n`,
  );
const plan = (text: string) =>
  evaluate(
    'site.yaml',
    text,
    () => Promise.resolve(world()),
    specValidators(),
    () => true,
  );

test('crush spec file: a rack label and a failure domain are applied, the YAML name kept in the node source', async (t) => {
  const e = await plan(files(doc('Cluster', 'default', 'crushLevels: [room, rack]\nfailureDomain: rack'), nodeDoc('{ rack: r1 }')));
  t.deepEqual(e.errors, []);
  const cluster = e.changes.find((c) => c.kind === CephKind.Cluster)!;
  t.like(cluster.after?.spec, { crushLevels: ['room', 'rack'], failureDomain: 'rack' });
  const n = e.changes.find((c) => c.kind === 'Node')!;
  t.deepEqual(n.after?.labels, { rack: 'r1' });
  t.like(n.after?.source, { type: 'file', file: 'site.yaml', document: 1, name: 'storage-1' });
});

test('crush spec file: a bucket name Ceph refuses, a domain outside the levels, levels out of order are file errors', async (t) => {
  const bad = await plan(nodeDoc('{ rack: "r/1" }'));
  t.deepEqual(
    bad.errors.map((x) => x.field),
    ['/metadata/labels/rack'],
  );
  t.deepEqual(bad.changes, [], 'nothing is applied');
  const host = await plan(nodeDoc('{ rack: node-1 }'));
  t.regex(host.errors[0]!.message, /host's name/);
  const domain = await plan(doc('Cluster', 'default', 'failureDomain: pod'));
  t.deepEqual(
    domain.errors.map((x) => [x.field, x.message]),
    [['/spec/failureDomain', 'the failure domain must be host or one of crushLevels (datacenter, room, row, rack), not pod']],
  );
  const order = await plan(doc('Cluster', 'default', 'crushLevels: [rack, datacenter]'));
  t.deepEqual(
    order.errors.map((x) => x.field),
    ['/spec/crushLevels/1'],
  );
  const unknown = await plan(doc('Cluster', 'default', 'crushLevels: [shelf]'));
  t.true(unknown.errors.length > 0, 'a type Ceph does not have is refused by the schema');
  // The file's own Cluster document sets the levels its node labels are checked against.
  const own = await plan(files(doc('Cluster', 'default', 'crushLevels: [pdu]'), nodeDoc('{ pdu: "p 1", rack: "free text" }')));
  t.deepEqual(
    own.errors.map((x) => x.field),
    ['/metadata/labels/pdu'],
  );
});

test('crush dry run: a node with OSDs moved to another rack, and a new failure domain, say what data moves', async (t) => {
  const w = world();
  w.nodes[0]!.metadata.labels = { rack: 'r1' };
  w.disks = [
    {
      kind: 'Disk',
      id: 'd1',
      name: 'node-1/S1',
      metadata: { generation: 1, resourceVersion: 2, createdAt: '', updatedAt: '', labels: {}, source: null },
      spec: { nodeId: w.nodes[0]!.id, serial: 'S1', osd: true, wipeGeneration: 0 },
      status: { osdId: 3, present: true },
    },
  ];
  const e = await evaluate(
    'site.yaml',
    files(doc('Cluster', 'default', 'failureDomain: rack'), nodeDoc('{ rack: r2 }')),
    () => Promise.resolve(w),
    specValidators(),
    () => true,
  );
  t.deepEqual(e.errors, []);
  t.deepEqual(
    e.tasks.map((x) => [x.task, x.destructive, x.moves]),
    [
      [Step.crushRule, false, "Quarry's pools go to rule quarry-rack: replicas across racks, not hosts"],
      [Step.crushPlaceHost, false, "host node-1 moves from root=default rack=r1 to root=default rack=r2: its OSDs' data moves to match"],
    ],
  );
  // The same labels again: nothing moves.
  const same = await evaluate(
    'site.yaml',
    nodeDoc('{ rack: r1, team: a }'),
    () => Promise.resolve(w),
    specValidators(),
    () => true,
  );
  t.deepEqual(same.tasks, []);
});
