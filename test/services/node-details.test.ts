import test from 'ava';
import { Kind } from '../../src/model/kinds.js';
import type { NodeDoc } from '../../src/model/operations.js';
import { NodeDetails } from '../../src/services/node-details.js';
import { disksByNode, nodeDetail } from '../../src/services/views.js';
import { createMemoryStore, type Store } from '../../src/store/index.js';
import { seeded } from '../../src/sim/random.js';
import { nodeSpec, testDeps } from '../store/helpers.js';
import { waitFor } from '../helpers/wait.js';

/** A node as the details list serializes it. */
type Detail = ReturnType<typeof nodeDetail>;

const uuid = (c: string) => `00000000-0000-4000-8000-00000000000${c}`;
const [N0, NA, NB] = [uuid('0'), uuid('a'), uuid('b')];

/** What the route answered before it had a projection: list, group, build, serialize. */
async function fresh(store: Store): Promise<string> {
  const nodes = (await store.list(Kind.Node)) as NodeDoc[];
  const byNode = disksByNode(await store.list(Kind.Disk));
  return JSON.stringify(nodes.map((n) => nodeDetail(n, byNode.get(n.id) ?? [])));
}

const diskStatus = (over: Record<string, unknown> = {}) => ({
  present: true,
  devicePath: '/dev/sdb',
  capacityBytes: 4e12,
  rotational: true,
  interface: 'sata',
  model: 'M',
  vendor: 'V',
  isSystem: false,
  hasFilesystem: false,
  osdId: null,
  ...over,
});

async function addDisk(store: Store, id: string, nodeId: string) {
  return store.create({ kind: Kind.Disk, id, name: id, spec: { nodeId, serial: id, osd: false, wipeGeneration: 0 }, status: diskStatus() });
}

test('node details: every node or disk change shows in the next read, byte for byte as before', async (t) => {
  const store = await createMemoryStore(testDeps());
  for (const id of [NB, NA]) {
    await store.create({
      kind: Kind.Node,
      id,
      name: id,
      spec: nodeSpec({ hostname: id }),
      status: { phase: 'active', ip: '192.0.2.1', daemons: { mon: false, mgr: false, mds: false, rgw: false } },
    });
  }
  for (const id of ['d-1', 'd-2', 'd-3']) await addDisk(store, id, NA);
  const details = new NodeDetails(store);
  const same = async (what: string) => t.is(await details.serialized(), await fresh(store), what);
  await same('initial');
  t.is((JSON.parse(await details.serialized()) as Detail[])[0]?.diskCount, 3);

  await store.updateStatus(Kind.Disk, 'd-1', diskStatus({ osdId: 4 }));
  await same('a disk became an OSD');
  t.is((JSON.parse(await details.serialized()) as Detail[])[0]?.osdCount, 1);
  await store.updateStatus(Kind.Disk, 'd-2', diskStatus({ present: false }));
  await same('a disk went away');
  const d3 = await store.mustGet<{ nodeId: string }>(Kind.Disk, 'd-3');
  await store.updateSpec(Kind.Disk, 'd-3', { ...d3.spec, nodeId: NB }, { resourceVersion: d3.metadata.resourceVersion });
  await same('a disk moved to another node');
  await store.delete(Kind.Disk, 'd-1');
  await same('a disk was deleted');
  await store.updateStatus(Kind.Node, NB, { phase: 'rebooting', ip: '192.0.2.9', daemons: { mon: true } });
  await same('a node changed');
  await store.create({ kind: Kind.Node, id: N0, name: N0, spec: nodeSpec({ hostname: N0 }), status: {} });
  await addDisk(store, 'd-9', N0);
  await same('a node was added, in key order');
  await store.delete(Kind.Node, NA);
  await same('a node was deleted');
  t.is((JSON.parse(await details.serialized()) as Detail[]).length, 2);
});

test('node details: after a relist it lists again and stays correct', async (t) => {
  const store = await createMemoryStore(testDeps());
  await store.create({ kind: Kind.Node, id: NA, name: NA, spec: nodeSpec(), status: {} });
  const details = new NodeDetails(store);
  t.is(await details.serialized(), await fresh(store));
  details.reset();
  await addDisk(store, 'd-1', NA);
  t.is(await details.serialized(), await fresh(store));
  t.is((JSON.parse(await details.serialized()) as Detail[])[0]?.diskCount, 1);
});

test('node details: random changes between reads keep it equal to a fresh build', async (t) => {
  const store = await createMemoryStore(testDeps());
  const random = seeded(7);
  const pick = <T>(xs: T[]): T => xs[Math.floor(random() * xs.length)] as T;
  const id = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  const nodes: string[] = [];
  const disks: string[] = [];
  let next = 0;
  const addNode = async () => {
    const n = id(++next);
    await store.create({ kind: Kind.Node, id: n, name: n, spec: nodeSpec({ hostname: `h${next}` }), status: { phase: 'active' } });
    nodes.push(n);
  };
  for (let i = 0; i < 8; i++) await addNode();
  const details = new NodeDetails(store);
  for (let step = 0; step < 300; step++) {
    const r = random();
    if (r < 0.1) await addNode();
    else if (r < 0.15 && nodes.length > 1) {
      const n = pick(nodes);
      await store.delete(Kind.Node, n);
      nodes.splice(nodes.indexOf(n), 1);
    } else if (r < 0.35) {
      const d = `d-${++next}`;
      await addDisk(store, d, pick(nodes));
      disks.push(d);
    } else if (r < 0.4 && disks.length > 0) {
      const d = pick(disks);
      await store.delete(Kind.Disk, d);
      disks.splice(disks.indexOf(d), 1);
    } else if (r < 0.5 && disks.length > 0) {
      const d = await store.mustGet<{ nodeId: string }>(Kind.Disk, pick(disks));
      await store.updateSpec(Kind.Disk, d.id, { ...d.spec, nodeId: pick(nodes) }, { resourceVersion: d.metadata.resourceVersion });
    } else if (r < 0.85 && disks.length > 0) {
      await store.updateStatus(
        Kind.Disk,
        pick(disks),
        diskStatus({ present: random() < 0.8, osdId: random() < 0.5 ? null : 1, model: `M${step}` }),
      );
    } else {
      await store.updateStatus(Kind.Node, pick(nodes), { phase: pick(['active', 'offline', 'rebooting']), ip: `192.0.2.${step % 250}` });
    }
    if (random() < 0.3) t.is(await details.serialized(), await fresh(store), `step ${step}`);
  }
  t.is(await details.serialized(), await fresh(store));
});

test('node details: changed nodes are serialized in the background, so the next read only assembles; a change after that is not missed', async (t) => {
  const store = await createMemoryStore(testDeps());
  const id = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  // More than one slice of the background's work.
  const count = 600;
  for (let i = 1; i <= count; i++)
    await store.create({ kind: Kind.Node, id: id(i), name: id(i), spec: nodeSpec({ hostname: `h${i}` }), status: { phase: 'active' } });
  const details = new NodeDetails(store);
  t.is(await details.serialized(), await fresh(store));
  t.is(details.pending(), 0);
  for (let i = 1; i <= count; i++) await store.updateStatus(Kind.Node, id(i), { phase: 'offline', ip: `192.0.2.${i % 250}` });
  // Nobody reads: the background serializes every changed node by itself.
  await waitFor('the background to serialize the changed nodes', () => details.pending() === 0 || undefined);
  // A change after the background's pass is taken too, background or not.
  await store.updateStatus(Kind.Node, id(7), { phase: 'rebooting' });
  await store.delete(Kind.Node, id(9));
  t.is(await details.serialized(), await fresh(store));
  t.is((JSON.parse(await details.serialized()) as Detail[]).filter((d) => d.status === 'offline').length, count - 2);
});
