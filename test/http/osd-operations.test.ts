// Issue 14 over HTTP: which disks offer removing, replacing, adopting and wiping, what an
// invocation writes (the spec, nothing else), and what GET /disks says of an OSD's life. The disk
// and invoke routes over a memory store holding a disk in each state; no loops run.
import test from 'ava';
import type { AreaContext } from '../../src/http/app.js';
import { diskRoutes } from '../../src/http/routes/disks.js';
import { invokeRoutes } from '../../src/http/routes/invoke.js';
import { guardOwnership } from '../../src/gitops/ownership.js';
import { Kind, type DiskSpec, type DiskStatusFields } from '../../src/model/kinds.js';
import { createAjv } from '../../src/model/validate.js';
import { Inventory } from '../../src/services/inventory.js';
import { Invocations } from '../../src/services/invocations.js';
import type { Store } from '../../src/store/types.js';
import { FSID, NODE, id, osdStore } from '../gitops/osd-fixtures.js';
import type { DiskView, InvokeResults, ProblemBody } from './bodies.js';
import { startHarness, type Harness } from './harness.js';

const area = (ctx: AreaContext) => {
  const inventory = new Inventory(ctx.store);
  return [...diskRoutes(inventory), ...invokeRoutes(new Invocations(ctx.store, inventory))];
};

async function harness(t: { teardown(fn: () => unknown): void }): Promise<Harness & { raw: Store }> {
  const raw = await osdStore();
  const h = await startHarness({ store: guardOwnership(raw), areas: [area] });
  t.teardown(async () => {
    await h.close();
    await raw.close();
  });
  return Object.assign(h, { raw });
}

const disk = (h: { raw: Store }, serial: string) => h.raw.mustGet<DiskSpec, DiskStatusFields>(Kind.Disk, id(serial));

test('osd operations api: each disk offers what its OSD allows', async (t) => {
  const h = await harness(t);
  const c = await h.admin();
  const table: Array<[string, string[]]> = [
    ['OLD', ['ceph.remove-osd', 'ceph.replace-osd']],
    ['ORPH', ['ceph.create-osd', 'ceph.remove-osd', 'ceph.replace-osd']],
    ['LBL', ['ceph.create-osd', 'disk.wipe']],
    ['FOREIGN', ['disk.wipe']],
    ['BLANK', ['ceph.create-osd', 'disk.wipe']],
    ['DEAD', ['disk.wipe']],
    ['SYS', []],
  ];
  for (const [serial, ops] of table) t.deepEqual((await c.get(`/disks/${id(serial)}/operations`)).json, ops, serial);
});

test('osd operations api: remove and replace set the spec and nothing else; a second one, or one without an OSD, is rejected with why', async (t) => {
  const h = await harness(t);
  const c = await h.admin();
  const before = await disk(h, 'OLD');
  const r = await c.post<InvokeResults>('/invoke/disk', { operation: 'ceph.remove-osd', diskIds: [id('OLD'), id('BLANK'), id('DEAD')] });
  t.is(r.status, 200);
  t.deepEqual(
    r.json.results.map((x) => x.reason ?? x.status),
    ['scheduled', 'the disk holds no OSD (no OSD id recorded on it)', 'osd.9 is destroyed already'],
  );
  const after = await disk(h, 'OLD');
  t.deepEqual(after.spec, { ...before.spec, osd: false, osdRemoval: 'remove' });
  t.deepEqual(after.status, before.status, 'the loop does the work');
  t.deepEqual((await c.get(`/disks/${id('OLD')}/operations`)).json, ['ceph.create-osd'], 'only its undo');
  const again = await c.post<InvokeResults>('/invoke/disk', { operation: 'ceph.replace-osd', diskIds: [id('OLD')] });
  t.like(again.json.results[0], { status: 'rejected', reason: 'a removal of its OSD is under way already' });

  const orphan = await disk(h, 'ORPH');
  const replaced = await c.post<InvokeResults>('/invoke/disk', { operation: 'ceph.replace-osd', diskIds: [id('ORPH')] });
  t.like(replaced.json.results[0], { status: 'scheduled' });
  t.deepEqual((await disk(h, 'ORPH')).spec, { ...orphan.spec, osd: false, osdRemoval: 'replace' });
});

test('osd operations api: POST /ceph/osd adopts an orphaned OSD or a disk with our label, undoes a removal, and refuses another cluster’s disk', async (t) => {
  const h = await harness(t);
  const c = await h.admin();
  for (const serial of ['ORPH', 'LBL']) {
    const r = await c.post('/ceph/osd', { nodeId: NODE, diskId: id(serial) });
    t.is(r.status, 200, serial);
    t.deepEqual(r.json, { status: 'scheduled' }, serial);
    t.true((await disk(h, serial)).spec.osd, serial);
  }
  const foreign = await c.post<ProblemBody>('/ceph/osd', { nodeId: NODE, diskId: id('FOREIGN') });
  t.is(foreign.status, 409);
  t.is(foreign.json.code, 'OPERATION_NOT_OFFERED');
  t.regex(foreign.json.detail, /not eligible: has-filesystem/);
  t.false((await disk(h, 'FOREIGN')).spec.osd);

  await c.post('/invoke/disk', { operation: 'ceph.remove-osd', diskIds: [id('OLD')] });
  const undo = await c.post<InvokeResults>('/invoke/disk', { operation: 'ceph.create-osd', diskIds: [id('OLD')] });
  t.like(undo.json.results[0], { status: 'scheduled' });
  const spec = (await disk(h, 'OLD')).spec;
  t.true(spec.osd);
  t.false('osdRemoval' in spec, 'the removal is withdrawn');
});

test('osd operations api: a destroyed OSD’s disk may be wiped', async (t) => {
  const h = await harness(t);
  const c = await h.admin();
  const r = await c.post<InvokeResults>('/invoke/disk', { operation: 'disk.wipe', diskIds: [id('DEAD'), id('OLD')] });
  t.deepEqual(
    r.json.results.map((x) => x.status),
    ['scheduled', 'rejected'],
  );
  t.is((await disk(h, 'DEAD')).spec.wipeGeneration, 1);
  t.is((await disk(h, 'OLD')).spec.wipeGeneration, 0);
});

test("osd operations api: GET /disks shows an OSD's phase, reason, drain, history, class, label and replacement, as its schema says", async (t) => {
  const h = await harness(t);
  const old = await disk(h, 'OLD');
  const at = '2026-01-01T00:00:00.000Z';
  await h.raw.updateStatus(Kind.Disk, id('OLD'), {
    ...old.status,
    osd: { phase: 'draining', reason: 'Draining', message: 'osd.3 is out' },
    drain: { osdId: 3, startPgs: 42, startBytes: 7e9, pgs: 10, bytes: 1e9, observedAt: at },
    conditions: [
      {
        type: 'Blocked',
        status: 'True',
        reason: 'OsdNotSafeToDestroy',
        message: 'pgs would be degraded',
        lastTransitionTime: at,
        observedGeneration: 1,
      },
    ],
    history: [{ at, event: 'created', osdId: 3, message: 'osd.3 created' }],
    replacedBy: id('NEW'),
  });
  const nu = await disk(h, 'NEW');
  await h.raw.updateSpec(
    Kind.Disk,
    id('NEW'),
    { ...nu.spec, osd: true, replaces: id('OLD'), deviceClass: 'nvme' },
    { resourceVersion: nu.metadata.resourceVersion },
  );
  const c = await h.admin();
  const r = await c.get<DiskView[]>('/disks');
  t.is(r.status, 200);
  const by = (serial: string) => r.json.find((d) => d.serial === serial)!;
  t.like(by('OLD'), {
    capacity: 4000,
    capacityBytes: 4e12,
    osdState: 'draining',
    message: 'pgs would be degraded',
    reason: 'OsdNotSafeToDestroy',
    progress: { pgs: 10, startPgs: 42, bytes: 1e9, startBytes: 7e9 },
    history: [{ at, event: 'created', osdId: 3, message: 'osd.3 created' }],
    deviceClass: 'hdd',
    label: null,
    replacedBy: 'NEW',
    replaces: null,
  });
  t.like(by('NEW'), { deviceClass: 'nvme', replaces: 'OLD', progress: null, reason: null, history: [] });
  t.like(by('LBL'), { label: { fsid: FSID, osdId: 7 }, osdState: null });
  t.like(by('DEAD'), { osdState: 'destroyed', reason: 'Destroyed', progress: null });

  const route = diskRoutes(new Inventory(h.raw)).find((x) => x.path === '/disks')!;
  const validate = createAjv().compile(route.response.schema!);
  t.true(validate(r.json), JSON.stringify(validate.errors));
});
