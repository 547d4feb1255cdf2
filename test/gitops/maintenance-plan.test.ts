// A spec file's `maintenance: true` (#15 part 3): the file owns the field, and the dry run says
// which steps entering and leaving take (the stop is disruptive).
import test from 'ava';
import type { World } from '../../src/gitops/world.js';
import { node } from '../builders.js';
import { doc } from './fixtures.js';
import { emptyWorld, evaluateIn } from './worlds.js';

/** A node running OSDs (noout holds them in while their daemons are stopped), or none. */
function world(maintenance: boolean, osds = [1, 2]): World {
  const n = node('active')
    .withStatus({ daemons: { osds: maintenance ? [] : osds } })
    .build();
  if (maintenance) n.spec.maintenance = true;
  return emptyWorld({ nodes: [n] });
}

const plan = (text: string, w: World) => evaluateIn(w, text);
const nodeDoc = (extra: string) => doc('Node', 'storage-1', `match: { mac: "52:54:00:00:00:01" }${extra}`);

test('maintenance spec: maintenance: true is owned by the file and plans noout then the stop; removed, the start then noout', async (t) => {
  const enter = await plan(nodeDoc('\nmaintenance: true'), world(false));
  t.deepEqual(enter.errors, []);
  const n = enter.changes.find((c) => c.kind === 'Node')!;
  t.like(n.after?.spec, { maintenance: true });
  t.true((n.after?.source as { fields: string[] }).fields.includes('maintenance'));
  t.deepEqual(
    enter.tasks.map((x) => [x.task, x.destructive]),
    [
      ['ceph.osd.noout', false],
      ['node.daemons-stop', true],
    ],
  );
  const leave = await plan(nodeDoc(''), world(true));
  t.false('maintenance' in (leave.changes.find((c) => c.kind === 'Node')!.after?.spec as object));
  t.deepEqual(
    leave.tasks.map((x) => x.task),
    ['node.daemons-start', 'ceph.osd.noout'],
  );
  t.deepEqual((await plan(nodeDoc('\nmaintenance: true'), world(true))).tasks, [], 'unchanged: nothing planned');
  t.deepEqual(
    (await plan(nodeDoc('\nmaintenance: true'), world(false, []))).tasks.map((x) => x.task),
    ['node.daemons-stop'],
    'a node running no OSD sets no noout',
  );
  const bad = await plan(nodeDoc('\nmaintenance: yes please'), world(false));
  t.deepEqual(
    bad.errors.map((x) => x.field),
    ['/spec/maintenance'],
  );
});
