// Issue 14 in a specs file: `state: absent` removes an OSD, `replaces` hands an OSD's id to a new
// disk, a declared disk holding this cluster's OSD is adopted, and the plan says every step with
// what it destroys and affects. The folder over a memory store: what it decides, not the loops.
import test from 'ava';
import { SpecsFolder, type SpecsFolderOptions } from '../../src/gitops/folder.js';
import { guardOwnership } from '../../src/gitops/ownership.js';
import { specRoutes } from '../../src/http/routes/specs.js';
import { createAjv } from '../../src/model/validate.js';
import { DISK_FIELDS } from '../../src/gitops/resolve-node.js';
import type { PlannedTask } from '../../src/gitops/tasks.js';
import { Kind, type DiskSpec } from '../../src/model/kinds.js';
import type { Store } from '../../src/store/types.js';
import { doc } from './fixtures.js';
import { MAC, id, osdStore } from './osd-fixtures.js';

const sources = {
  interfaces: { interfaces: () => Promise.resolve([]) },
  registry: { entries: () => Promise.resolve([]) },
};
const DF = [
  { id: 3, pgs: 42, dataBytes: 7e9 },
  { id: 5, pgs: 9, dataBytes: 1e9 },
];

async function folderOf(opts: Partial<SpecsFolderOptions> = {}): Promise<{ store: Store; folder: SpecsFolder }> {
  const store = await osdStore();
  const folder = new SpecsFolder({ store, sources, publish: () => {}, osdDf: () => Promise.resolve(DF), ...opts });
  await folder.ready();
  return { store, folder };
}

const node = (osds: string) => doc('Node', 'n1', `match: { mac: "${MAC}" }\nosds: ${osds}`);
const spec = async (store: Store, serial: string) => (await store.mustGet<DiskSpec>(Kind.Disk, id(serial))).spec;
const tasksOf = (tasks: PlannedTask[], serial: string) =>
  tasks.filter((x) => x.id === id(serial)).map(({ task, destructive, affects, wipes }) => ({ task, destructive, affects, wipes }));

test('osd specs: state absent on an OSD disk plans its removal, each step destructive, with the OSD and what is on it', async (t) => {
  const { store, folder } = await folderOf();
  const text = node('[{ serial: OLD, state: absent }]');
  const plan = await folder.plan('site.yaml', text);
  t.true(plan.valid);
  t.deepEqual(
    plan.updated.filter((c) => c.kind === Kind.Disk).map((c) => [c.name, c.fields]),
    [['node-1/OLD', ['osd', 'osdRemoval']]],
  );
  const affects = { osdId: 3, bytes: 7e9, pgs: 42 };
  t.deepEqual(tasksOf(plan.tasks, 'OLD'), [
    { task: 'ceph.osd.out', destructive: true, affects, wipes: undefined },
    { task: 'ceph.osd.stop', destructive: true, affects, wipes: undefined },
    { task: 'ceph.osd.purge', destructive: true, affects, wipes: undefined },
    { task: 'ceph.osd.zap', destructive: true, affects, wipes: '/dev/sdb (OLD)' },
  ]);
  t.deepEqual(await spec(store, 'OLD'), { nodeId: (await spec(store, 'OLD')).nodeId, serial: 'OLD', osd: true, wipeGeneration: 0 });
  const schema = specRoutes(folder).find((r) => r.path === '/specs/plan')!.response.schema!;
  const valid = createAjv().compile(schema);
  t.true(valid(plan), `the plan answer is what its OpenAPI schema says: ${JSON.stringify(valid.errors)}`);

  const applied = await folder.fileChanged('site.yaml', text);
  t.is(applied?.state, 'applied');
  t.like(await spec(store, 'OLD'), { osd: false, osdRemoval: 'remove' });
  t.deepEqual((await store.mustGet(Kind.Disk, id('OLD'))).metadata.source?.fields, DISK_FIELDS);
  t.like(await folder.plan('site.yaml', text), { valid: true, updated: [], tasks: [] }, 'applied: nothing more to do');
});

test('osd specs: state absent on a disk without an OSD is no error and plans nothing', async (t) => {
  const { store, folder } = await folderOf();
  const plan = await folder.plan('site.yaml', node('[{ serial: BLANK, state: absent }]'));
  t.true(plan.valid);
  t.deepEqual(plan.tasks, []);
  t.deepEqual(plan.updated.find((c) => c.name === 'node-1/BLANK')?.fields, [], 'only claimed');
  await folder.fileChanged('site.yaml', node('[{ serial: BLANK, state: absent }]'));
  t.is((await spec(store, 'BLANK')).osdRemoval, undefined);
});

test("osd specs: replaces destroys the old OSD keeping its id, and the new disk's OSD is planned with that id", async (t) => {
  const { store, folder } = await folderOf();
  const text = node('[{ serial: NEW, replaces: OLD, deviceClass: ssd }, { all: true, rotational: true, minSize: 4TB }]');
  const plan = await folder.plan('site.yaml', text);
  t.true(plan.valid, JSON.stringify(plan.errors));
  const affects = { osdId: 3, bytes: 7e9, pgs: 42 };
  t.deepEqual(tasksOf(plan.tasks, 'OLD'), [
    { task: 'ceph.osd.out', destructive: true, affects, wipes: undefined },
    { task: 'ceph.osd.stop', destructive: true, affects, wipes: undefined },
    { task: 'ceph.osd.destroy', destructive: true, affects, wipes: undefined },
  ]);
  t.deepEqual(tasksOf(plan.tasks, 'NEW'), [
    { task: 'ceph.osd.new', destructive: false, affects: { osdId: 3 }, wipes: undefined },
    { task: 'ceph.osd.create', destructive: true, affects: { osdId: 3 }, wipes: '/dev/sdc (NEW)' },
  ]);
  await folder.fileChanged('site.yaml', text);
  t.like(await spec(store, 'NEW'), { osd: true, replaces: id('OLD'), deviceClass: 'ssd' });
  t.like(await spec(store, 'OLD'), { osd: false, osdRemoval: 'replace' }, '`all` does not take back the disk being replaced');
  t.false('replaces' in (await spec(store, 'BLANK')), 'a disk `all` chose replaces nothing');
});

test('osd specs: replacing a disk that died (its OSD destroyed, still wanted) plans no second destroy and keeps the id for the new disk', async (t) => {
  const { store, folder } = await folderOf();
  const old = await store.mustGet(Kind.Disk, id('OLD'));
  await store.updateStatus(Kind.Disk, id('OLD'), {
    ...(old.status as object),
    present: false,
    osd: { phase: 'destroyed', reason: 'Destroyed', message: 'osd.3 destroyed: its disk is gone' },
  });
  const text = node('[{ serial: NEW, replaces: OLD }]');
  const plan = await folder.plan('site.yaml', text);
  t.true(plan.valid);
  t.deepEqual(tasksOf(plan.tasks, 'OLD'), []);
  t.deepEqual(
    plan.tasks.map((x) => [x.name, x.task, x.affects]),
    [
      ['node-1/NEW', 'ceph.osd.new', { osdId: 3 }],
      ['node-1/NEW', 'ceph.osd.create', { osdId: 3 }],
    ],
  );
  await folder.fileChanged('site.yaml', text);
  t.like(await spec(store, 'OLD'), { osd: false, osdRemoval: 'replace' }, 'replaced, not an orphan');
});

test('osd specs: declaring again an OSD being drained undoes the removal: it is taken back in, nothing created', async (t) => {
  const { store, folder } = await folderOf();
  const old = await store.mustGet<DiskSpec>(Kind.Disk, id('OLD'));
  await store.updateSpec(
    Kind.Disk,
    id('OLD'),
    { ...old.spec, osd: false, osdRemoval: 'remove' },
    { resourceVersion: old.metadata.resourceVersion },
  );
  await store.updateStatus(Kind.Disk, id('OLD'), {
    ...(old.status as object),
    osd: { phase: 'draining', reason: 'Draining', message: '' },
  });
  const text = node('[{ serial: OLD }]');
  const plan = await folder.plan('site.yaml', text);
  t.true(plan.valid);
  t.deepEqual(plan.pending, []);
  t.deepEqual(tasksOf(plan.tasks, 'OLD'), [
    { task: 'ceph.osd.in', destructive: false, affects: { osdId: 3, bytes: 7e9, pgs: 42 }, wipes: undefined },
  ]);
  const all = await folder.plan('site.yaml', node('[{ all: true }]'));
  t.is(
    all.updated.find((c) => c.id === id('OLD')),
    undefined,
    '`all` does not undo a removal; naming the disk does',
  );
  await folder.fileChanged('site.yaml', text);
  const now = await spec(store, 'OLD');
  t.true(now.osd);
  t.false('osdRemoval' in now);
});

test('osd specs: a new disk without replaces takes the lowest destroyed OSD of its node, and says so', async (t) => {
  const { folder } = await folderOf();
  const plan = await folder.plan('site.yaml', node('[{ serial: BLANK }]'));
  t.deepEqual(
    plan.tasks.map((x) => [x.task, x.affects]),
    [
      ['ceph.osd.new', { osdId: 9 }],
      ['ceph.osd.create', { osdId: 9 }],
    ],
  );
});

test('osd specs: a wrong replaces is refused at its field and nothing changes', async (t) => {
  const { store, folder } = await folderOf();
  const table: Array<[string, string, string, RegExp]> = [
    ['a serial the node does not have', '[{ serial: NEW, replaces: GONE }]', '/spec/osds/0/replaces', /no disk with serial GONE/],
    ['with all', '[{ all: true, replaces: OLD }]', '/spec/osds/0/replaces', /not all/],
    ['itself', '[{ serial: OLD, replaces: OLD }]', '/spec/osds/0/replaces', /cannot replace itself/],
    ['a disk absent', '[{ serial: NEW, replaces: OLD, state: absent }]', '/spec/osds/0/replaces', /replaces nothing/],
    [
      'an old serial another selector names',
      '[{ serial: OLD }, { serial: NEW, replaces: OLD }]',
      '/spec/osds/1/replaces',
      /OLD is also named by \/spec\/osds\/0/,
    ],
    [
      'a new serial another selector names',
      '[{ serial: NEW, replaces: OLD }, { serial: NEW }]',
      '/spec/osds/1',
      /NEW is also named by \/spec\/osds\/0/,
    ],
    [
      'one old disk replaced twice',
      '[{ serial: NEW, replaces: OLD }, { serial: BLANK, replaces: OLD }]',
      '/spec/osds/1/replaces',
      /OLD is also named/,
    ],
  ];
  const parsed = await folder.plan('site.yaml', node('[{ serial: NEW, deviceClass: tape }]'));
  t.like(parsed.errors[0], { field: '/spec/osds/0/deviceClass', line: 7 }, 'a device class the schema does not know');
  for (const [title, osds, field, message] of table) {
    const plan = await folder.plan('site.yaml', node(osds));
    t.false(plan.valid, title);
    t.is(plan.errors[0]?.field, field, title);
    t.regex(plan.errors[0]?.message ?? '', message, title);
    t.true((plan.errors[0]?.line ?? 0) > 1, `${title}: a line in the file`);
    const status = await folder.fileChanged('site.yaml', node(osds));
    t.is(status?.state, 'failed', title);
  }
  t.like(await spec(store, 'OLD'), { osd: true });
  t.is((await spec(store, 'OLD')).osdRemoval, undefined);
  t.false((await spec(store, 'NEW')).osd);
});

test("osd specs: a declared disk holding this cluster's OSD is adopted with no task; another cluster's is not eligible", async (t) => {
  const { store, folder } = await folderOf();
  const text = node('[{ serial: ORPH }, { serial: LBL }, { serial: FOREIGN }]');
  const plan = await folder.plan('site.yaml', text);
  t.true(plan.valid);
  t.deepEqual(plan.tasks, [], 'nothing created, nothing wiped');
  t.deepEqual(
    plan.pending.map((p) => [p.reason, p.message]),
    [['DiskNotEligible', 'disk serial FOREIGN of node-1 cannot take an OSD: has-filesystem']],
  );
  await folder.fileChanged('site.yaml', text);
  t.like(await spec(store, 'ORPH'), { osd: true });
  t.like(await spec(store, 'LBL'), { osd: true });
  t.false((await spec(store, 'FOREIGN')).osd);
});

test('osd specs: `all` keeps naming the disks it made OSDs of once the agent reports their BlueStore as a filesystem', async (t) => {
  const { store, folder } = await folderOf();
  const text = node('[{ all: true }]');
  await folder.fileChanged('site.yaml', text);
  t.true((await spec(store, 'BLANK')).osd);
  // The OSD made: the real agent's blkid sees ceph_bluestore, a filesystem.
  for (const serial of ['OLD', 'BLANK']) {
    const d = await store.mustGet(Kind.Disk, id(serial));
    await store.updateStatus(Kind.Disk, id(serial), { ...(d.status as object), hasFilesystem: true });
  }
  t.like(await folder.plan('site.yaml', text), { valid: true, updated: [], tasks: [] }, 'nothing to change');
  const again = await folder.fileChanged('site.yaml', `${text}\n`);
  t.deepEqual(again?.orphans, [], 'no disk orphaned');
  for (const serial of ['OLD', 'BLANK']) t.true((await spec(store, serial)).osd, serial);
});

test('osd specs: a file owns osd, osdRemoval, deviceClass and replaces; a disk it stops naming is orphaned, its removal withdrawn', async (t) => {
  const { store, folder } = await folderOf();
  await folder.fileChanged('site.yaml', node('[{ serial: OLD, state: absent }, { serial: ORPH, state: absent }, { serial: NEW }]'));
  const api = guardOwnership(store);
  for (const [serial, change] of [
    ['OLD', { osdRemoval: 'replace' }],
    ['NEW', { deviceClass: 'nvme' }],
    ['NEW', { replaces: id('OLD') }],
  ] as const) {
    await t.throwsAsync(
      api.mutateSpec<DiskSpec>(Kind.Disk, id(serial), (d) => ({ ...d.spec, ...change })),
      { message: new RegExp(`${Object.keys(change)[0]} is owned by the specs file site.yaml`) },
      serial,
    );
  }
  const gone = await folder.fileChanged('site.yaml', null);
  t.deepEqual(gone?.orphans.map((o) => o.name).sort(), ['node-1/NEW', 'node-1/OLD', 'node-1/ORPH']);
  for (const serial of ['OLD', 'ORPH']) {
    const d = await store.mustGet<DiskSpec>(Kind.Disk, id(serial));
    t.false(d.spec.osd, serial);
    t.is(d.spec.osdRemoval, undefined, `${serial}: never removed because a file forgot it`);
    t.like(d.metadata.source, { file: 'site.yaml', orphaned: true }, serial);
  }
  t.like(await spec(store, 'NEW'), { osd: true });
});

test('osd specs: a plan goes without bytes and PGs when Ceph does not answer in time or fails', async (t) => {
  for (const osdDf of [() => new Promise<never>(() => {}), () => Promise.reject(new Error('no quorum'))]) {
    const { folder } = await folderOf({ osdDf, osdDfTimeoutMs: 50 });
    const plan = await folder.plan('site.yaml', node('[{ serial: ORPH, state: absent }]'));
    t.true(plan.valid);
    t.deepEqual(
      plan.tasks.map((x) => x.affects),
      [{ osdId: 5 }, { osdId: 5 }, { osdId: 5 }, { osdId: 5 }],
    );
  }
});
