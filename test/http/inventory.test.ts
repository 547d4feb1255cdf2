// Nodes, disks, NICs and invocations over real HTTP against the lab: what the API shows and
// what an invocation writes (desired state only), including every whole-request refusal.
import test from 'ava';
import { Kind, type DiskSpec, type NodeSpec } from '../../src/model/kinds.js';
import { Client } from './client.js';
import type { InvokeResults, ProblemBody } from './bodies.js';
import { ADMIN_PASSWORD, allActive, startLab, waitFor, type LabQuarry } from '../lab/harness.js';

interface DiskView {
  id: string;
  nodeId: string;
  nodeHostname: string;
  serial: string;
  capacity: number;
  eligible: boolean;
  reasons: string[];
  isOsd: boolean;
  isMon: boolean;
  hasFilesystem: boolean;
}

async function admin(q: LabQuarry): Promise<Client> {
  const c = new Client(q.url);
  const r = await c.post('/user/login', { username: 'admin', password: ADMIN_PASSWORD });
  if (r.status !== 200) throw new Error(`login: ${r.status}`);
  return c;
}

async function disksOf(c: Client, nodeId: string): Promise<DiskView[]> {
  return ((await c.get('/disks')).json as DiskView[]).filter((d) => d.nodeId === nodeId);
}

const eligible = (ds: DiskView[]): DiskView => ds.find((d) => d.eligible)!;

test('inventory: nodes, details, disks and NICs show what the lab machines are', async (t) => {
  const q = await startLab(t, 3);
  const docs = await allActive(q, 3);
  const c = await admin(q);
  const nodes = (await c.get('/nodes')).json as Array<Record<string, unknown>>;
  t.is(nodes.length, 3);
  t.deepEqual(Object.keys(nodes[0]!).sort(), ['createdAt', 'hostname', 'id', 'ip', 'role']);
  const details = (await c.get('/nodes/details')).json as Array<Record<string, unknown>>;
  const machine = q.lab!.machine(3);
  const d3 = details.find((d) => d.id === machine.nodeId)!;
  t.like(d3, { status: 'active', hasMon: false, monExists: false, diskCount: machine.spec.disks.length, osdCount: 0, ip: machine.spec.ip });
  const disks = await disksOf(c, machine.nodeId!);
  t.is(disks.length, machine.spec.disks.length);
  const system = disks.find((d) => d.serial.endsWith('-SYS'))!;
  t.deepEqual(system.reasons, ['system-disk', 'has-filesystem']);
  t.is(system.capacity, 240);
  // Every third lab machine carries an old filesystem on its first data disk.
  t.true(disks.some((d) => !d.serial.endsWith('-SYS') && d.reasons.includes('has-filesystem')));
  t.true(disks.every((d) => d.nodeHostname === docs.find((n) => n.id === machine.nodeId)!.spec.hostname));
  const nics = ((await c.get('/nics')).json as Array<{ nodeId: string; mac: string }>).filter((n) => n.nodeId === machine.nodeId);
  t.deepEqual(
    nics.map((n) => n.mac),
    machine.spec.nics.map((n) => n.mac),
  );
});

test('inventory: operations follow the state table', async (t) => {
  const q = await startLab(t, 3);
  await allActive(q, 3);
  const c = await admin(q);
  const m = q.lab!.machine(3);
  t.deepEqual((await c.get(`/nodes/${m.nodeId}/operations`)).json, [
    'ceph.create-mon',
    'ceph.create-mgr',
    'ceph.create-mds',
    'ceph.create-rgw',
    'ceph.create-nfs',
    'node.restart',
    'node.shutdown',
    'node.maintenance',
  ]);
  const disks = await disksOf(c, m.nodeId!);
  const ops = async (d: DiskView) => (await c.get(`/disks/${d.id}/operations`)).json;
  t.deepEqual(await ops(disks.find((d) => d.serial.endsWith('-SYS'))!), []);
  t.deepEqual(await ops(disks.find((d) => !d.serial.endsWith('-SYS') && d.hasFilesystem)!), ['disk.wipe']);
  t.deepEqual(await ops(eligible(disks)), ['ceph.create-osd', 'disk.wipe']);
  m.partition();
  await waitFor('offline', async () => (await q.nodeOf(3)).status.phase === 'offline');
  // #15: an offline node offers its way back, BMC or not.
  t.deepEqual((await c.get(`/nodes/${m.nodeId}/operations`)).json, ['node.power-on']);
  t.deepEqual(await ops(eligible(disks)), []);
  t.is((await c.get('/nodes/00000000-0000-4000-8000-000000000000/operations')).status, 404);
});

test('inventory: an invocation is refused whole for too many ids, a missing diskId or an unknown operation, and changes nothing', async (t) => {
  const q = await startLab(t, 1);
  await allActive(q, 1);
  // The node's spec as the admin's approval left it (enrollment's one spec write).
  const generation = (await q.nodeOf(1)).metadata.generation;
  const c = await admin(q);
  const id = q.lab!.machine(1).nodeId!;
  const many = Array.from({ length: 101 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
  const table: Array<[string, string, unknown, number, string]> = [
    ['101 node ids', '/invoke/node', { operation: 'node.restart', nodeIds: many }, 400, 'TOO_MANY_TARGETS'],
    ['101 disk ids', '/invoke/disk', { operation: 'disk.wipe', diskIds: many }, 400, 'TOO_MANY_TARGETS'],
    ['create-mon without diskId', '/invoke/node', { operation: 'ceph.create-mon', nodeIds: [id] }, 400, 'DISK_REQUIRED'],
    ['unknown operation', '/invoke/node', { operation: 'node.explode', nodeIds: [id] }, 400, 'VALIDATION_FAILED'],
    ['a disk operation on nodes', '/invoke/node', { operation: 'disk.wipe', nodeIds: [id] }, 400, 'VALIDATION_FAILED'],
    ['no ids', '/invoke/disk', { operation: 'disk.wipe', diskIds: [] }, 400, 'VALIDATION_FAILED'],
    ['/ceph/mon/create without diskId', '/ceph/mon/create', { nodeId: id }, 400, 'DISK_REQUIRED'],
  ];
  for (const [title, path, body, status, code] of table) {
    const r = await c.post<ProblemBody>(path, body);
    t.is(r.status, status, title);
    t.is(r.json.code, code, title);
    t.is(r.headers.get('content-type'), 'application/problem+json', title);
  }
  const node = await q.nodeOf(1);
  t.is(node.spec.restartGeneration, 0);
  t.deepEqual(node.spec.daemons, {});
  t.is(node.metadata.generation, generation, 'no spec write happened');
});

test('inventory: each target gets its own result; rejections say why and do not block others', async (t) => {
  const q = await startLab(t, 3);
  await allActive(q, 3);
  const c = await admin(q);
  const [a, b, off] = [1, 2, 3].map((i) => q.lab!.machine(i).nodeId!) as [string, string, string];
  q.lab!.machine(3).partition();
  await waitFor('offline', async () => (await q.nodeOf(3)).status.phase === 'offline');
  const unknown = '00000000-0000-4000-8000-000000000001';
  const r = await c.post<InvokeResults>('/invoke/node', { operation: 'ceph.create-mgr', nodeIds: [a, off, unknown, b, a] });
  t.is(r.status, 200);
  const results = r.json.results;
  t.deepEqual(
    results.map((x) => [x.id, x.status]),
    [
      [a, 'scheduled'],
      [off, 'rejected'],
      [unknown, 'rejected'],
      [b, 'scheduled'],
    ],
  );
  t.regex(results[1]!.reason!, /offline/);
  t.is(results[2]!.reason, 'unknown node');
  const again = (await c.post<InvokeResults>('/invoke/node', { operation: 'ceph.create-mgr', nodeIds: [a] })).json.results[0];
  t.like(again, { status: 'rejected', reason: 'a manager is already desired on this node' });
  t.deepEqual((await q.store.mustGet<NodeSpec>(Kind.Node, a)).spec.daemons, { mgr: {} });

  const disksA = await disksOf(c, a);
  const disksB = await disksOf(c, b);
  const sys = disksA.find((d) => d.serial.endsWith('-SYS'))!;
  const mon = await c.post<InvokeResults>('/invoke/node', { operation: 'ceph.create-mon', nodeIds: [a, b], diskId: eligible(disksB).id });
  t.deepEqual(
    mon.json.results.map((x) => x.reason ?? x.status),
    ['the disk is not on this node', 'scheduled'],
  );
  const osd = await c.post<InvokeResults>('/invoke/disk', {
    operation: 'ceph.create-osd',
    diskIds: [sys.id, eligible(disksA).id, eligible(disksB).id],
  });
  t.deepEqual(
    osd.json.results.map((x) => x.status),
    ['rejected', 'scheduled', 'rejected'],
  );
  t.regex(osd.json.results[0]!.reason!, /system-disk/);
  t.regex(osd.json.results[2]!.reason!, /monitor-disk/, 'the monitor disk of node b takes no OSD');
  t.true((await q.store.mustGet<DiskSpec>(Kind.Disk, eligible(disksA).id)).spec.osd);
  const view = (await disksOf(c, a)).find((d) => d.id === eligible(disksA).id)!;
  t.like(view, { isOsd: true, eligible: false, reasons: ['holds-osd'] });
});

test('inventory: single-target create endpoints answer 404, 409 with the reason, or scheduled', async (t) => {
  const q = await startLab(t, 1);
  await allActive(q, 1);
  const c = await admin(q);
  const id = q.lab!.machine(1).nodeId!;
  const disks = await disksOf(c, id);
  const sys = disks.find((d) => d.serial.endsWith('-SYS'))!;
  t.is((await c.post('/ceph/mgr', { nodeId: '00000000-0000-4000-8000-000000000009' })).status, 404);
  const bad = await c.post<ProblemBody>('/ceph/mon/create', { nodeId: id, diskId: sys.id });
  t.is(bad.status, 409);
  t.is(bad.json.code, 'OPERATION_NOT_OFFERED');
  t.regex(bad.json.detail, /system-disk/);
  t.deepEqual((await c.post('/ceph/mon/create', { nodeId: id, diskId: eligible(disks).id })).json, { status: 'scheduled' });
  t.deepEqual((await c.post('/ceph/mds', { nodeId: id })).json, { status: 'scheduled' });
  t.is((await c.post('/ceph/mds', { nodeId: id })).status, 409);
  const details = ((await c.get('/nodes/details')).json as Array<Record<string, unknown>>)[0]!;
  t.like(details, { hasMon: true, hasMds: true, hasMgr: false });
  t.false(((await c.get(`/nodes/${id}/operations`)).json as string[]).includes('ceph.create-mon'));
});

test('inventory: node.restart via the API is carried out by the node loop', async (t) => {
  const q = await startLab(t, 1);
  await allActive(q, 1);
  const c = await admin(q);
  const id = q.lab!.machine(1).nodeId!;
  const r = await c.post<InvokeResults>('/invoke/node', { operation: 'node.restart', nodeIds: [id] });
  t.deepEqual(r.json.results, [{ id, status: 'scheduled' }]);
  const second = await c.post<InvokeResults>('/invoke/node', { operation: 'node.restart', nodeIds: [id] });
  t.is(second.json.results[0]?.status, 'rejected', 'a restart in progress is not requested twice');
  await waitFor(
    'restarted',
    async () => (await q.nodeOf(1)).status.observedRestartGeneration === 1 && (await q.nodeOf(1)).status.phase === 'active',
  );
  t.is((await q.nodeOf(1)).spec.restartGeneration, 1);
});

test('inventory: a non-admin reads but cannot invoke', async (t) => {
  const q = await startLab(t, 1);
  await allActive(q, 1);
  const c = await admin(q);
  await c.post('/users', { username: 'viewer', password: 'viewer-password', name: 'V', email: 'v@example.com' });
  const v = new Client(q.url);
  await v.post('/user/login', { username: 'viewer', password: 'viewer-password' });
  t.is((await v.get('/nodes/details')).status, 200);
  const r = await v.post('/invoke/node', { operation: 'node.restart', nodeIds: [q.lab!.machine(1).nodeId!] });
  t.is(r.status, 403);
  t.is((await q.nodeOf(1)).spec.restartGeneration, 0);
});
