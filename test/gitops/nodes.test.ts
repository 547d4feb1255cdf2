// Nodes and disks from a file: found by MAC and selectors, owned by the file (the API may not
// change what it owns), pruned only when they hold no data, and planned exactly as applied.
import test from 'ava';
import { Kind, type DiskSpec, type NodeSpec, type NodeStatusFields, type DiskStatusFields } from '../../src/model/kinds.js';
import { NetworkKind, networkId } from '../../src/model/network-kinds.js';
import type { Doc } from '../../src/model/document.js';
import { allActive, waitFor } from '../lab/harness.js';
import { doc, files } from './fixtures.js';
import { network, specsLab, type SpecsLab } from './helpers.js';

const MAC1 = '52:54:00:00:00:01';

/** The fields of a bulk /invoke answer and of a POST /specs/plan answer these tests read. */
type BulkAnswer = { results: Array<{ status: string; reason?: string }> };
type PlanAnswer = {
  valid: boolean;
  created: Array<Doc<unknown>>;
  updated: Array<Doc<unknown>>;
  tasks: Array<{ task: string; wipes?: string }>;
};
const node = (daemons: string, osds = '[]') => doc('Node', 'n1', `match: { mac: "${MAC1}" }\ndaemons: ${daemons}\nosds: ${osds}`);
const disksOf = async (q: SpecsLab, nodeId: string) =>
  (await q.store.list<DiskSpec>(Kind.Disk)).filter((d) => d.spec.nodeId === nodeId && !(d.status as { isSystem?: boolean }).isSystem);

test('nodes: a node a file names is pending until it boots, then gets what the file says', async (t) => {
  const q = await specsLab(t, 1);
  await q.put('n.yaml', doc('Node', 'ghost', 'match: { mac: "52:54:00:ff:ff:ff" }'));
  const s = await q.until('n.yaml', (x) => x.state === 'pending');
  t.like(s.pending[0], { document: 0, kind: 'Node', name: 'ghost', reason: 'NodeNotDiscovered' });
  // Enrollment: the machine is approved and sent its installer (its install credential issued)
  // before the file names an image the master has not downloaded, which would hold it waiting.
  await waitFor('machine 1 installing', async () => (await q.store.list(Kind.AgentCredential)).length === 1);
  // The image by the short id of a catalog entry the master has not downloaded yet.
  await q.put('n.yaml', node('{ mgr: {}, rgw: {} }').replace('daemons:', 'image: 3f1c2a7e\n  daemons:'));
  const [n] = await allActive(q, 1);
  await q.until('n.yaml', (x) => x.state === 'applied');
  const got = await q.store.mustGet<NodeSpec>(Kind.Node, n!.id);
  t.deepEqual(got.spec.daemons, { mgr: {}, rgw: {} });
  t.is(got.spec.image, '3f1c2a7e-5b0d-4c8e-9a61-2d7f0b4e8c15');
  t.like(got.metadata.source, { type: 'file', file: 'n.yaml', document: 0, fields: ['role', 'power', 'image', 'daemons'] });
});

test('nodes: an API write to a field the folder owns is refused with 409 SPEC_OWNED naming the file', async (t) => {
  const q = await specsLab(t, 1);
  const [n] = await allActive(q, 1);
  await q.put('owned.yaml', node('{ mgr: {} }'));
  await q.until('owned.yaml', (x) => x.state === 'applied' && x.objects.length > 0);
  const c = await q.admin();
  const r = await c.post('/ceph/mds', { nodeId: n!.id });
  t.is(r.status, 409);
  t.like(r.json, { code: 'SPEC_OWNED' });
  t.regex((r.json as { detail: string }).detail, /daemons is owned by the specs file owned\.yaml \(document 0\)/);
  const removal = await c.post(`/gateways/rgw/${n!.id}/remove`);
  t.is(removal.status, 404, 'no gateway: nothing owned is touched');
  t.deepEqual((await q.store.mustGet<NodeSpec>(Kind.Node, n!.id)).spec.daemons, { mgr: {} });
  // A field the file does not own stays the API's: a disk wipe bumps wipeGeneration.
  const [disk] = await disksOf(q, n!.id);
  await q.put('owned.yaml', node('{ mgr: {} }', `[{ serial: ${disk!.spec.serial}, state: absent }]`));
  await waitFor('disk owned', async () => (await q.store.mustGet(Kind.Disk, disk!.id)).metadata.source?.file === 'owned.yaml');
  // In a bulk request, the owned target is rejected with the code; the request is not refused whole.
  const osd = await c.post('/invoke/disk', { operation: 'ceph.create-osd', diskIds: [disk!.id] });
  t.is(osd.status, 200);
  const osdResult = (osd.json as BulkAnswer).results[0];
  t.like(osdResult, { id: disk!.id, status: 'rejected', code: 'SPEC_OWNED' });
  t.regex(osdResult?.reason ?? '', /osd is owned by the specs file owned\.yaml/);
  const wipe = await c.post('/invoke/disk', { operation: 'disk.wipe', diskIds: [disk!.id] });
  t.like((wipe.json as BulkAnswer).results[0], { status: 'scheduled' });
});

test('nodes: removing a file prunes its network but orphans its OSDs, destroying nothing', async (t) => {
  const q = await specsLab(t, 1);
  const [n] = await allActive(q, 1);
  await q.put('site.yaml', files(network('lab', '10.0.0.0/16', '10.0.0.1'), node('{ mon: {} }', '[{ all: true }]')));
  const applied = await q.until('site.yaml', (x) => x.state === 'applied');
  const osds = (await disksOf(q, n!.id)).filter((d) => d.spec.osd);
  const monDisk = (await q.store.mustGet<NodeSpec>(Kind.Node, n!.id)).spec.daemons.mon?.diskId;
  t.truthy(monDisk);
  t.is(osds.length, (await disksOf(q, n!.id)).length - 1, "every eligible data disk but the monitor's");
  t.is(applied.objects.length, 2 + osds.length);

  await q.remove('site.yaml');
  await waitFor('network pruned', async () => (await q.store.get(NetworkKind.Network, networkId('10.0.0.0/16'))) === undefined);
  const gone = await q.until('site.yaml', (x) => x.state === 'deleted');
  const after = await disksOf(q, n!.id);
  t.true(
    osds.every((o) => after.find((d) => d.id === o.id)?.spec.osd === true),
    'OSDs still wanted',
  );
  t.is((await q.store.mustGet<NodeSpec>(Kind.Node, n!.id)).spec.daemons.mon?.diskId, monDisk, 'the monitor stays');
  t.deepEqual(gone.orphans.map((o) => o.kind).sort(), [...osds.map(() => 'Disk'), 'Node'].sort());
  // The types promise this; the test checks that the objects keep the promise.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- see the line above
  t.true(gone.orphans.every((o) => o.condition.type === 'Orphaned' && o.condition.status === 'True'));
  // The objects say so themselves, written by the loops that own their status.
  const orphaned = (c: { type: string; status: string }[] | undefined) =>
    c?.some((x) => x.type === 'Orphaned' && x.status === 'True') === true;
  await waitFor('disks say Orphaned', async () =>
    (await disksOf(q, n!.id)).filter((d) => d.spec.osd).every((d) => orphaned((d.status as DiskStatusFields).conditions)),
  );
  await waitFor('the node says Orphaned', async () =>
    orphaned((await q.store.mustGet<NodeSpec, NodeStatusFields>(Kind.Node, n!.id)).status.conditions),
  );
  t.false((await q.tasks.recent(1000)).some((r) => /destroy|remove|zap/.test(r.spec.taskName)));
  // An orphan belongs to no one: the API may act on it again.
  const c = await q.admin();
  t.like((await c.post('/ceph/mgr', { nodeId: n!.id })).json, { status: 'scheduled' });
});

test('nodes: POST /specs/plan answers what an apply then does, and an unchanged file plans nothing', async (t) => {
  const q = await specsLab(t, 1);
  const [n] = await allActive(q, 1);
  const text = files(
    network('lab', '10.0.0.0/16', '10.0.0.1'),
    node('{ mon: {}, mgr: {} }', '[{ all: true, rotational: true }, { all: true, minSize: 1TB }]'),
    doc('Filesystem', 'fs', 'name: cephfs\nmetadataPool: m\ndataPool: d'),
    doc('RgwUser', 'demo', 'userId: demo\ndisplayName: Demo'),
  );
  const c = await q.admin();
  const planned = await c.request('POST', '/specs/plan?file=plan-me.yaml', { body: text, headers: { 'content-type': 'application/yaml' } });
  t.is(planned.status, 200);
  const plan = planned.json as PlanAnswer;
  t.true(plan.valid);
  t.is(plan.created.length, 3);
  t.true(plan.tasks.some((x: { task: string }) => x.task === 'ceph.mon.bootstrap'));
  t.true(plan.tasks.some((x: { task: string; wipes?: string }) => x.task === 'ceph.osd.create' && x.wipes));
  t.is(await q.store.get(NetworkKind.Network, networkId('10.0.0.0/16')), undefined, 'a plan changes nothing');

  await q.put('plan-me.yaml', text);
  const event = await waitFor('applied event', () =>
    q.events.find((e) => e.type === 'specs.applied' && (e.payload as { file: string }).file === 'plan-me.yaml'),
  );
  const { state: _state, ...applied } = event.payload as Record<string, unknown>;
  t.deepEqual(applied, planned.json);
  for (const x of plan.created) t.truthy(await q.store.get(x.kind, x.id), `${x.kind} ${x.name} exists`);
  const disks = (await disksOf(q, n!.id))
    .filter((d) => d.spec.osd)
    .map((d) => d.id)
    .sort();
  t.deepEqual(
    plan.updated
      .filter((x: Doc<unknown>) => x.kind === 'Disk')
      .map((x: Doc<unknown>) => x.id)
      .sort(),
    disks,
  );

  const again = await c.request('POST', '/specs/plan?file=plan-me.yaml', { body: text, headers: { 'content-type': 'text/plain' } });
  t.like(again.json, { valid: true, created: [], updated: [], pruned: [], orphaned: [], tasks: [] });
  const refused = await c.request('POST', '/specs/plan', { body: 'kind: [', headers: { 'content-type': 'application/yaml' } });
  t.like(refused.json, { valid: false, errors: [{ file: 'plan.yaml', document: 0, line: 1 }] });
});

test('nodes: only state: absent removes a monitor, an OSD, a filesystem or a user', async (t) => {
  const q = await specsLab(t, 1);
  const [n] = await allActive(q, 1);
  const fs = doc('Filesystem', 'fs', 'name: cephfs\nmetadataPool: m\ndataPool: d');
  const user = doc('RgwUser', 'demo', 'userId: demo\ndisplayName: Demo');
  await q.put('data.yaml', files(node('{ mon: {} }', '[{ all: true }]'), fs, user));
  await q.until('data.yaml', (x) => x.state === 'applied');
  const osds = (await disksOf(q, n!.id)).filter((d) => d.spec.osd);
  t.true(osds.length > 0);
  // A monitor to remove: the file's one runs first (its creation waits a moment for others).
  await waitFor(
    'the monitor runs',
    async () => (await q.store.mustGet<NodeSpec, NodeStatusFields>(Kind.Node, n!.id)).status.daemons?.mon === true,
  );

  // Dropped from the file: kept, orphaned.
  await q.put('data.yaml', node('{ mon: {} }', '[{ all: true }]'));
  const dropped = await q.until('data.yaml', (x) => x.orphans.length === 2);
  t.deepEqual(dropped.orphans.map((o) => o.kind).sort(), ['Filesystem', 'RgwUser']);
  t.truthy(await q.store.get('Filesystem', dropped.orphans.find((o) => o.kind === 'Filesystem')!.id));
  for (const o of dropped.orphans) {
    await waitFor(`${o.kind} says Orphaned`, async () =>
      ((await q.store.mustGet(o.kind, o.id)).status as { conditions?: Array<{ type: string; status: string }> }).conditions?.some(
        (c) => c.type === 'Orphaned' && c.status === 'True',
      ),
    );
  }

  // Said absent: removed.
  const absent = (text: string) => text.replace('spec:\n', 'spec:\n  state: absent\n');
  await q.put(
    'data.yaml',
    files(
      node('{ mon: { state: absent } }', `[{ all: true }, { serial: ${osds[0]!.spec.serial}, state: absent }]`),
      absent(fs),
      absent(user),
    ),
  );
  const monDisk = (await q.store.mustGet<NodeSpec>(Kind.Node, n!.id)).spec.daemons.mon!.diskId;
  // The monitor's disk is no longer the monitor disk once no monitor is desired, but its store
  // is still on it (the agent made a filesystem there) until the monitor is removed and the
  // disk erased: the "all" selector does not take it meanwhile. (This lab's only monitor is the
  // last one, which is never removed.)
  await q.until('data.yaml', (x) => x.orphans.length === 0);
  t.true((await q.store.mustGet<DiskSpec, DiskStatusFields>(Kind.Disk, monDisk)).status.hasFilesystem);
  t.false((await q.store.mustGet<DiskSpec>(Kind.Disk, monDisk)).spec.osd);
  t.is((await q.store.mustGet<NodeSpec>(Kind.Node, n!.id)).spec.daemons.mon, undefined);
  t.false((await q.store.mustGet<DiskSpec>(Kind.Disk, osds[0]!.id)).spec.osd);
  const rest = await Promise.all(osds.slice(1).map((o) => q.store.mustGet<DiskSpec>(Kind.Disk, o.id)));
  t.true(
    rest.every((d) => d.spec.osd),
    'the other OSDs stay',
  );
  // A filesystem and a user go through their loops (which would ask first, had Ceph any data of them).
  for (const kind of ['Filesystem', 'RgwUser']) {
    const id = dropped.orphans.find((o) => o.kind === kind)!.id;
    await waitFor(`${kind} removed`, async () => (await q.store.get(kind, id)) === undefined);
  }
});
