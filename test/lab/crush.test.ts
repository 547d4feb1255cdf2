// Failure domains in the lab: the example spec's rack labels end in the lab Ceph's CRUSH map
// (hosts under racks, `osd tree` shows it), the node answers show the labels and YAML names,
// and a rack failure domain waits for enough racks, then puts every pool on quarry-rack with
// no two replicas of a PG in one rack.
import test from 'ava';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Step } from '../../src/catalogue/index.js';
import { CephKind, CLUSTER_ID, type ClusterStatus } from '../../src/model/ceph-kinds.js';
import { SimCephApi } from '../../src/sim/ceph/api.js';
import { waitFor } from './harness.js';
import { specsLab } from '../gitops/helpers.js';

const EXAMPLE = join(process.cwd(), 'examples', 'specs', 'lab-cluster.yaml');

test('crush: the example spec racks its hosts in the lab osd tree; a rack failure domain waits for three racks, then moves every pool', async (t) => {
  const q = await specsLab(t, 3);
  const example = await readFile(EXAMPLE, 'utf8');
  const text = example.replace(
    '  poolDefaults: { size: 3, minSize: 2 }\n',
    '  poolDefaults: { size: 3, minSize: 2 }\n  failureDomain: rack\n',
  );
  t.not(text, example);
  await q.put('lab-cluster.yaml', text);
  await q.until('lab-cluster.yaml', (x) => x.state === 'applied', 'applied');
  const ceph = q.lab!.ceph;
  const crush = ceph.osdmap.crush;
  const hosts = await Promise.all([1, 2, 3].map(async (i) => (await q.nodeOf(i)).spec.hostname));
  const [h1, h2, h3] = hosts as [string, string, string];
  await waitFor(
    'hosts under their racks in CRUSH',
    () => crush.domainOf(h1, 'rack') === 'r1' && crush.domainOf(h2, 'rack') === 'r1' && crush.domainOf(h3, 'rack') === 'r2',
    60_000,
  );
  // `osd tree` as the API's Ceph client reads it: root > r1 > two hosts, root > r2 > one.
  const tree = (await new SimCephApi(ceph).osdTree()).nodes;
  const children = (name: string) =>
    tree
      .find((n) => n.name === name)!
      .children.map((id) => tree.find((n) => n.id === id)!.name)
      .sort();
  t.deepEqual(children('default'), ['r1', 'r2']);
  t.deepEqual(children('r1'), [h1, h2].sort());
  t.deepEqual(children('r2'), [h3]);

  // Two racks cannot hold three replicas apart: the Cluster says so and no pool moves.
  const cluster = () => q.store.mustGet<unknown, ClusterStatus>(CephKind.Cluster, CLUSTER_ID);
  await waitFor('TooFewFailureDomains', async () =>
    (await cluster()).status.conditions?.some((c) => c.type === 'Blocked' && c.status === 'True' && c.reason === 'TooFewFailureDomains'),
  );
  t.true([...ceph.osdmap.pools.values()].every((p) => (p.crushRule ?? 0) === 0));

  // storage-2 goes to a rack of its own: three racks, and every pool goes to quarry-rack.
  await q.put('lab-cluster.yaml', text.replace(/(name: storage-2\n {2}labels: \{ rack: )r1/, '$1r3'));
  await waitFor('storage-2 under r3', () => crush.domainOf(h2, 'rack') === 'r3', 60_000);
  await waitFor(
    'every pool on quarry-rack',
    () => {
      const rule = crush.rule('quarry-rack');
      return rule !== undefined && [...ceph.osdmap.pools.values()].every((p) => p.crushRule === rule.id);
    },
    60_000,
  );
  const rackOf = (id: number) => crush.domainOf(ceph.osdmap.osds.get(id)!.host!, 'rack');
  const pgs = ceph.pgs();
  t.true(pgs.length > 0);
  t.true(
    pgs.every((pg) => new Set(pg.mapped.map(rackOf)).size === pg.mapped.length),
    'no two replicas of a PG in one rack',
  );
  await waitFor('the Cluster says where the hosts are', async () => {
    const st = (await cluster()).status.crush;
    return st?.rule === 'quarry-rack' && st.hosts[h2] === 'default/r3';
  });

  // The node answers carry the labels and the YAML name.
  const admin = await q.admin();
  const nodes = (await admin.get('/nodes/details')).json as Array<{
    id: string;
    hostname: string;
    name: string;
    labels: Record<string, string>;
  }>;
  const s2 = nodes.find((n) => n.hostname === h2)!;
  t.like(s2, { name: 'storage-2', labels: { rack: 'r3' } });
  const one = (await admin.get(`/nodes/${s2.id}`)).json as { name: string; labels: Record<string, string>; osdCount: number };
  t.like(one, { name: 'storage-2', labels: { rack: 'r3' } });
  t.true(one.osdCount > 0);
  t.is((await admin.get('/nodes/00000000-0000-4000-8000-000000000000')).status, 404);
  const details = (await admin.get('/nodes/details')).json as Array<{ hostname: string; name: string; labels: Record<string, string> }>;
  t.like(
    details.find((n) => n.hostname === h1),
    { name: 'storage-1', labels: { rack: 'r1' } },
  );
  const runs = (await admin.get('/task/runs/recent?limit=1000')).json as Array<{ taskName: string; state: string }>;
  t.true(runs.some((r) => r.taskName === Step.crushPlaceHost && r.state === 'completed'));
  t.true(runs.some((r) => r.taskName === Step.crushRule && r.state === 'completed'));
});
