// Every change can be undone (#16): for each kind and daemon a specs file declares, declare →
// `state: absent` → declare again converges to running and owned, and the lab's Ceph agrees at
// each step. One lab for the whole table (a 3-monitor cluster takes long to bring up): the rows
// run one after the other on the same cluster, each leaving it converged as it found it.
import test, { type ExecutionContext } from 'ava';
import { Kind, type DiskSpec, type DiskStatusFields } from '../../src/model/kinds.js';
import type { DiskDoc, NodeDoc } from '../../src/model/operations.js';
import { diskReasons } from '../../src/model/operations.js';
import { networkId } from '../../src/model/network-kinds.js';
import type { TaskRun } from '../../src/tasks/types.js';
import type { SimCephCluster } from '../../src/sim/ceph/cluster.js';
import { doc, files } from '../gitops/fixtures.js';
import { ENO1, phaseReady, specsLab, type SpecsLab } from '../gitops/helpers.js';
import { allActive, waitFor } from './harness.js';

const FILE = 'cluster.yaml';
const MACS = ['52:54:00:00:00:01', '52:54:00:00:00:02', '52:54:00:00:00:03'];

/** What each row declares absent, one at a time. */
type Part = 'mon' | 'mgr' | 'mds' | 'rgw' | 'nfs' | 'osd' | 'fs' | 'user' | 'network' | 'image';

interface Layout {
  nodes: NodeDoc[];
  /** Per node: its monitor disk and its OSD disks (node 0 has two OSDs: the row's and one that stays). */
  mon: string[];
  osds: string[][];
}

const present = (absent: Part | null, p: Part) => (absent === p ? '\nstate: absent' : '');

/** The whole cluster in one file, with `absent` declared absent. */
function world(l: Layout, absent: Part | null): string {
  const d = (p: Part, body = '') => (absent === p ? `{ ${body}${body ? ', ' : ''}state: absent }` : `{ ${body} }`);
  const osd = (serial: string, p: Part | null) => `{ serial: ${serial}${p && absent === p ? ', state: absent' : ''} }`;
  const node = (i: number, daemons: string) =>
    doc(
      'Node',
      `storage-${i + 1}`,
      `match: { mac: "${MACS[i]}" }\ndaemons: { mon: { disk: { serial: ${l.mon[i]} } }${daemons} }\nosds: [${l.osds[i]!.map((s, j) => osd(s, i === 0 && j === 0 ? 'osd' : null)).join(', ')}]`,
    );
  // The third monitor is the row's: the one a later join made, on a node with no other role.
  const mon3 = absent === 'mon' ? `mon: { state: absent }` : `mon: { disk: { serial: ${l.mon[2]} } }`;
  return files(
    doc('Cluster', 'default', 'publicNetwork: 10.0.0.0/16\npoolDefaults: { size: 3, minSize: 2 }'),
    doc('Network', 'lab', `cidr: 10.0.0.0/16\ngateway: 10.0.0.1\nnicId: ${ENO1}${present(absent, 'network')}`),
    doc('Image', 'debian', `id: 3f1c2a7e\ndefault: true${present(absent, 'image')}`),
    node(0, `, mgr: ${d('mgr')}`),
    node(1, `, mds: ${d('mds')}`),
    node(2, `, rgw: ${d('rgw')}, nfs: ${d('nfs', 'export: cephfs')}`).replace(/mon: \{ disk: \{ serial: \S+ \} \}/, mon3),
    doc('Filesystem', 'cephfs', `name: cephfs\nmetadataPool: cephfs_metadata\ndataPool: cephfs_data${present(absent, 'fs')}`),
    doc('RgwUser', 'demo', `userId: demo\ndisplayName: Demo user${present(absent, 'user')}`),
  );
}

/** Applied, and every object the file declares Ready; throws naming those that are not. */
async function converged(q: SpecsLab, what: string): Promise<void> {
  await q.until(FILE, (x) => x.state === 'applied' && x.pending.length === 0, `${what}: applied`);
  const notReady = async () => {
    const status = q.specs.folder.status().find((x) => x.file === FILE)!;
    const docs = await Promise.all(status.objects.map((o) => q.store.get(o.kind, o.id)));
    return docs
      .filter((d) => !d || !phaseReady(d))
      .map((d) => (d ? `${d.kind} ${d.name} ${JSON.stringify(d.status)}` : 'a deleted object'));
  };
  await waitFor(`${what}: every object Ready`, async () => (await notReady()).length === 0, 90_000).catch(async (err: unknown) => {
    throw new Error(`${(err as Error).message}: ${(await notReady()).join('; ')}`);
  });
}

/** Writes the file and waits until this text is applied (not the one before it). */
async function apply(q: SpecsLab, text: string, what: string): Promise<void> {
  const before = q.specs.folder.status().find((x) => x.file === FILE)?.appliedAt ?? null;
  await q.put(FILE, text);
  await q.until(FILE, (x) => x.state !== 'failed' && x.appliedAt !== before, `${what}: applied`);
}

/** Answers yes to a question a deletion asks (a filesystem's, a user's), if it asks one. */
async function answerYes(q: SpecsLab): Promise<void> {
  const c = await q.admin();
  const open = (await c.get('/task/questions/pending')).json as Array<{ id: string; options: string[] }>;
  for (const question of open) {
    const yes = question.options.find((o) => /^yes/i.test(o));
    if (yes) await c.post(`/task/question/${question.id}/answer`, { answer: yes });
  }
}

interface Row {
  part: Part;
  /** The lab's world has it (running, created), or has none of it. */
  inWorld(ceph: SimCephCluster, q: SpecsLab, l: Layout): boolean | Promise<boolean>;
  gone(ceph: SimCephCluster, q: SpecsLab, l: Layout): boolean | Promise<boolean>;
  /** The runs declaring it again starts: exactly these task names (a multiset), for the object. */
  recreate: string[];
  /** The object the runs above target. */
  target(l: Layout, q: SpecsLab): Promise<string>;
}

const host = (l: Layout, i: number) => l.nodes[i]!.spec.hostname;
const running = (ceph: SimCephCluster, h: string, type: 'mgr' | 'mds' | 'rgw' | 'nfs') => ceph.hosts.report(h)[type] === true;
const byName = async (q: SpecsLab, kind: string, name: string) => (await q.store.list(kind)).find((d) => d.name === name)?.id ?? '';
const osdOf = async (q: SpecsLab, serial: string) =>
  (await q.store.list<DiskSpec, DiskStatusFields>(Kind.Disk)).find((d) => d.spec.serial === serial)!;

const LAB_NET = networkId('10.0.0.0/16');
const downloaded = async (q: SpecsLab) =>
  ((await (await q.admin()).get('/images/downloaded')).json as Array<{ name: string }>).map((i) => i.name);

const rows: Row[] = [
  {
    part: 'mon',
    inWorld: (c, _q, l) => c.mons.get(host(l, 2)) !== undefined && c.mons.quorum()?.length === 3,
    gone: (c, _q, l) => !c.mons.get(host(l, 2)) && !c.monStores.has(host(l, 2)),
    recreate: ['ceph.mon.join'],
    target: async (l) => l.nodes[2]!.id,
  },
  {
    part: 'rgw',
    inWorld: (c, _q, l) => running(c, host(l, 2), 'rgw'),
    gone: (c, _q, l) => !running(c, host(l, 2), 'rgw'),
    recreate: ['ceph.rgw.start'],
    target: async (l) => l.nodes[2]!.id,
  },
  {
    part: 'nfs',
    inWorld: (c, _q, l) => running(c, host(l, 2), 'nfs'),
    gone: (c, _q, l) => !running(c, host(l, 2), 'nfs'),
    recreate: ['ceph.nfs.start'],
    target: async (l) => l.nodes[2]!.id,
  },
  {
    part: 'osd',
    inWorld: async (c, q, l) => {
      const id = (await osdOf(q, l.osds[0]![0]!)).status.osdId;
      return id != null && c.osdmap.osds.get(id)?.up === true;
    },
    gone: async (c, q, l) => {
      const d = await osdOf(q, l.osds[0]![0]!);
      return (
        d.status.osdId == null && ![...c.osdmap.osds.values()].some((o) => o.host === host(l, 0) && o.devicePath === d.status.devicePath)
      );
    },
    recreate: ['ceph.osd.new', 'ceph.osd.create'],
    target: async (l, q) => (await osdOf(q, l.osds[0]![0]!)).id,
  },
  {
    part: 'user',
    inWorld: (c) => c.accounts.rgwUsers.has('demo'),
    // Deleted in RGW after the question (answered yes), and made again when declared again.
    gone: async (c, q) => (await byName(q, 'RgwUser', 'demo')) === '' && !c.accounts.rgwUsers.has('demo'),
    recreate: ['ceph.rgw.user.create'],
    target: (_l, q) => byName(q, 'RgwUser', 'demo'),
  },
  {
    part: 'fs',
    inWorld: (c) => c.fsmap.get('cephfs') !== undefined,
    // Deleted with its pools after the question (answered yes), and made again when declared again.
    gone: async (c, q) =>
      (await byName(q, 'Filesystem', 'cephfs')) === '' &&
      c.fsmap.get('cephfs') === undefined &&
      ![...c.osdmap.pools.values()].some((p) => p.name === 'cephfs_data'),
    recreate: ['ceph.fs.create'],
    target: (_l, q) => byName(q, 'Filesystem', 'cephfs'),
  },
  {
    part: 'network',
    // The world of a network: its DHCP server on the lab's master.
    inWorld: (_c, q) => q.network.sim!.server(LAB_NET) !== null,
    gone: async (_c, q) => (await byName(q, 'Network', '10.0.0.0/16')) === '' && q.network.sim!.server(LAB_NET) === null,
    recreate: [],
    target: (_l, q) => byName(q, 'Network', '10.0.0.0/16'),
  },
  {
    part: 'image',
    // The world of an image: its files on the master.
    inWorld: async (_c, q) => (await downloaded(q)).includes('debian-12-amd64'),
    gone: async (_c, q) => (await byName(q, 'Image', 'debian-12-amd64')) === '' && !(await downloaded(q)).includes('debian-12-amd64'),
    recreate: [],
    target: (_l, q) => byName(q, 'Image', 'debian-12-amd64'),
  },
  {
    part: 'mgr',
    inWorld: (c, _q, l) => running(c, host(l, 0), 'mgr'),
    gone: (c, _q, l) => !running(c, host(l, 0), 'mgr'),
    recreate: ['ceph.mgr.start'],
    target: async (l) => l.nodes[0]!.id,
  },
  {
    part: 'mds',
    inWorld: (c, _q, l) => running(c, host(l, 1), 'mds'),
    gone: (c, _q, l) => !running(c, host(l, 1), 'mds'),
    recreate: ['ceph.mds.start'],
    target: async (l) => l.nodes[1]!.id,
  },
];

async function runsSince(q: SpecsLab, before: Set<string>, target: string): Promise<TaskRun[]> {
  return (await q.tasks.recent(5000)).filter((r) => !before.has(r.id) && r.spec.targetId === target);
}

async function undo(t: ExecutionContext, q: SpecsLab, l: Layout, row: Row): Promise<void> {
  const ceph = q.lab!.ceph;
  t.true(await row.inWorld(ceph, q, l), `${row.part}: in the world before`);
  await apply(q, world(l, row.part), `${row.part} absent`);
  await waitFor(`${row.part} absent: gone from the world`, async () => (await answerYes(q), await row.gone(ceph, q, l)), 60_000);

  const target = await row.target(l, q);
  const before = new Set((await q.tasks.recent(5000)).map((r) => r.id));
  await apply(q, world(l, null), `${row.part} declared again`);
  await converged(q, `${row.part} declared again`);
  await waitFor(`${row.part} declared again: back in the world`, () => row.inWorld(ceph, q, l));
  const runs = await runsSince(q, before, await row.target(l, q).then((x) => x || target));
  const names = runs.map((r) => r.spec.taskName);
  t.false(names.includes('ceph.daemon.restart'), `${row.part}: made afresh, never restarted (${names.join(', ')})`);
  t.deepEqual(
    names.filter((n) => row.recreate.includes(n)).sort(),
    [...row.recreate].sort(),
    `${row.part}: declared again, its creation runs once each (${names.join(', ')})`,
  );
  t.true(names.length <= row.recreate.length + 3, `${row.part}: a bounded number of runs, no loop (${names.join(', ')})`);
}

test('undo: every kind and daemon declared, absent, and declared again converges, running and owned', async (t) => {
  t.timeout(600_000);
  const q = await specsLab(t, 3);
  const nodes = await allActive(q, 3);
  const byMac = (mac: string) => nodes.find((n) => n.spec.macs.includes(mac))!;
  const ordered = MACS.map(byMac);
  const disks = await q.store.list<DiskSpec, DiskStatusFields>(Kind.Disk);
  const eligible = (n: NodeDoc): DiskDoc[] =>
    disks
      .filter((d) => d.spec.nodeId === n.id && diskReasons(d, n).length === 0)
      .sort((a, b) => a.spec.serial.localeCompare(b.spec.serial));
  const layout: Layout = {
    nodes: ordered,
    mon: ordered.map((n) => eligible(n)[0]!.spec.serial),
    osds: ordered.map((n, i) =>
      eligible(n)
        .slice(1, i === 0 ? 3 : 2)
        .map((d) => d.spec.serial),
    ),
  };
  t.is(layout.osds[0]!.length, 2, 'node 1 has two disks for OSDs');
  await apply(q, world(layout, null), 'first apply');
  await converged(q, 'first apply');
  for (const row of rows) await undo(t, q, layout, row);
});
