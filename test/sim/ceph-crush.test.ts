// The lab's CRUSH map against the recording of record-crush.sh (Ceph 16.2.15): the same verbs
// in the same order answer with the same exit codes and words, and `osd tree` has the same
// shape; placement under a rack rule never puts two replicas in one rack.
import test from 'ava';
import { CommandError } from '../../src/errors.js';
import { SimCephRunner } from '../../src/sim/ceph/runner.js';
import type { SimCephCluster } from '../../src/sim/ceph/cluster.js';
import { fixture, recorded } from '../clients/ceph-fixtures.js';
import { TB, instant, newCluster, uuidOf, withMons } from './ceph-helpers.js';

async function reply(cluster: SimCephCluster, verb: string[]) {
  const runner = new SimCephRunner(cluster, { sleep: instant });
  try {
    const r = await runner.run('ceph', ['--format', 'json', ...verb], { timeoutMs: 30_000 });
    return { exitCode: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    if (!(err instanceof CommandError)) throw err;
    return { exitCode: err.exitCode, stdout: '\n', stderr: err.stderr };
  }
}

/** The recorded cluster's shape: one host `vm` with three OSDs, replicas across OSDs. */
function recordedShape(): SimCephCluster {
  const { cluster } = newCluster({ poolDefaultSize: 1, failureDomain: 'osd' });
  withMons(cluster, 1);
  cluster.startMgr('x', 'vm');
  for (let i = 0; i < 3; i++) cluster.startOsd(cluster.createOsd(uuidOf(i)), 'vm', TB, 'hdd');
  return cluster;
}

type TreeNode = { id: number; name: string; type: string; type_id: number; children?: number[]; depth?: number };
const shape = (json: string) =>
  (JSON.parse(json) as { nodes: TreeNode[] }).nodes.map(({ id, name, type, type_id, children, depth }) => ({
    id,
    name,
    type,
    type_id,
    children,
    depth,
  }));

test('sim crush verbs answer as recorded, in the recorded order', async (t) => {
  const cluster = recordedShape();
  const same = async (name: string, verb: string[], normalize = (s: string) => s) => {
    const r = recorded(name);
    const got = await reply(cluster, verb);
    t.deepEqual({ ...got, stderr: normalize(got.stderr) }, { exitCode: r.exitCode, stdout: r.stdout, stderr: normalize(r.stderr) }, name);
  };
  await same('crush-add-bucket', ['osd', 'crush', 'add-bucket', 'r1', 'rack']);
  await same('crush-add-bucket-again', ['osd', 'crush', 'add-bucket', 'r1', 'rack']);
  await same('crush-add-bucket-other-type', ['osd', 'crush', 'add-bucket', 'r1', 'row']);
  await same('crush-add-bucket-bad-type', ['osd', 'crush', 'add-bucket', 'x1', 'nosuchtype']);
  t.deepEqual(await reply(cluster, ['osd', 'crush', 'add-bucket', 'bad/name', 'rack']), {
    exitCode: 22,
    stdout: '\n',
    stderr: recorded('crush-add-bucket-bad-name').stderr,
  });
  await same('crush-add-bucket-host-name', ['osd', 'crush', 'add-bucket', 'vm', 'rack']);
  await same('crush-move-rack', ['osd', 'crush', 'move', 'r1', 'root=default']);
  await same('crush-move-host', ['osd', 'crush', 'move', 'vm', 'root=default', 'rack=r1']);
  await same('crush-move-host-again', ['osd', 'crush', 'move', 'vm', 'root=default', 'rack=r1']);
  await same('crush-move-missing', ['osd', 'crush', 'move', 'nosuch', 'root=default']);
  await same('crush-move-missing-parent', ['osd', 'crush', 'move', 'r1', 'root=default', 'row=nosuchrow']);
  t.deepEqual(shape((await reply(cluster, ['osd', 'tree'])).stdout), shape(fixture('crush-osd-tree-rack')));
  await reply(cluster, ['osd', 'crush', 'add-bucket', 'row1', 'row']);
  await same('crush-move-row', ['osd', 'crush', 'move', 'row1', 'root=default']);
  await same('crush-move-rack-under-row', ['osd', 'crush', 'move', 'r1', 'root=default', 'row=row1']);
  t.deepEqual(shape((await reply(cluster, ['osd', 'tree'])).stdout), shape(fixture('crush-osd-tree-row')));
  // An OSD's restart (create-or-move host=vm) leaves the host under the rack.
  cluster.stopOsd(0);
  cluster.startOsd(0, 'vm', TB, 'hdd');
  t.deepEqual(shape((await reply(cluster, ['osd', 'tree'])).stdout), shape(fixture('crush-osd-tree-restarted')));

  const rule = ['osd', 'crush', 'rule', 'create-replicated'];
  await same('crush-rule-create', [...rule, 'quarry-rack', 'default', 'rack']);
  await same('crush-rule-create-again', [...rule, 'quarry-rack', 'default', 'rack']);
  await same('crush-rule-create-other-type', [...rule, 'quarry-rack', 'default', 'host']);
  await same('crush-rule-create-class', [...rule, 'quarry-rack-hdd', 'default', 'rack', 'hdd']);
  await same('crush-rule-create-bad-type', [...rule, 'quarry-x', 'default', 'nosuchtype']);
  await same('crush-rule-create-bad-root', [...rule, 'quarry-y', 'nosuchroot', 'host']);
  t.deepEqual(JSON.parse((await reply(cluster, ['osd', 'crush', 'rule', 'dump'])).stdout), JSON.parse(fixture('crush-rule-dump')));
  cluster.createPool('quarry-data', 8);
  const poolId = (s: string) => s.replace(/pool \d+/, 'pool N');
  await same('crush-pool-set-rule', ['osd', 'pool', 'set', 'quarry-data', 'crush_rule', 'quarry-rack'], poolId);
  await same('crush-pool-set-rule-again', ['osd', 'pool', 'set', 'quarry-data', 'crush_rule', 'quarry-rack'], poolId);
  await same('crush-pool-set-rule-missing', ['osd', 'pool', 'set', 'quarry-data', 'crush_rule', 'nosuchrule']);
  await same('crush-pool-set-rule-no-pool', ['osd', 'pool', 'set', 'nosuchpool', 'crush_rule', 'quarry-rack']);
  const pools = JSON.parse((await reply(cluster, ['osd', 'pool', 'ls', 'detail'])).stdout) as Array<{
    pool_name: string;
    crush_rule: number;
  }>;
  t.is(pools.find((p) => p.pool_name === 'quarry-data')?.crush_rule, 1);
});

/** Six hosts with two OSDs each, in racks r1..r3 (two hosts a rack), one size-3 pool. */
function racked(): { cluster: SimCephCluster; rackOf: (osd: number) => string | undefined } {
  const { cluster } = newCluster({ poolDefaultSize: 3 });
  withMons(cluster);
  cluster.startMgr('x', 'h1');
  let n = 0;
  for (let h = 1; h <= 6; h++) for (let k = 0; k < 2; k++) cluster.startOsd(cluster.createOsd(uuidOf(n++)), `h${h}`, TB, 'hdd');
  const crush = cluster.osdmap.crush;
  for (let r = 1; r <= 3; r++) {
    crush.addBucket(`r${r}`, 'rack');
    crush.move(`r${r}`, [['root', 'default']]);
  }
  for (let h = 1; h <= 6; h++)
    crush.move(`h${h}`, [
      ['root', 'default'],
      ['rack', `r${Math.ceil(h / 2)}`],
    ]);
  cluster.createPool('data', 64);
  const rackOf = (id: number) => {
    const host = cluster.osdmap.osds.get(id)?.host;
    return host === undefined ? undefined : crush.domainOf(host, 'rack');
  };
  return { cluster, rackOf };
}

const dataPgs = (cluster: SimCephCluster) => cluster.pgs().filter((pg) => pg.pool.name === 'data');
const distinctRacks = (cluster: SimCephCluster, rackOf: (id: number) => string | undefined) =>
  dataPgs(cluster).every((pg) => new Set(pg.mapped.map(rackOf)).size === pg.mapped.length);

test('sim placement under a rack rule: no two replicas of a PG in one rack, every PG clean; a moved host is redrawn', (t) => {
  const { cluster, rackOf } = racked();
  // On the default (host) rule, some PG has two replicas in one rack of two hosts.
  t.false(distinctRacks(cluster, rackOf), 'the host rule alone does not separate racks');
  cluster.osdmap.crush.createRule('quarry-rack', 'default', 'rack');
  cluster.osdmap.setPoolRule(cluster.osdmap.poolByName('data')!, cluster.osdmap.crush.rule('quarry-rack')!.id);
  t.true(distinctRacks(cluster, rackOf));
  t.true(dataPgs(cluster).every((pg) => pg.state === 'active+clean' && pg.mapped.length === 3));
  // h6 moves from r3 into r1: r3 keeps one host, and the mapping follows the new racks.
  cluster.osdmap.crush.move('h6', [
    ['root', 'default'],
    ['rack', 'r1'],
  ]);
  t.is(rackOf(10), 'r1');
  t.true(distinctRacks(cluster, rackOf));
  t.true(
    dataPgs(cluster).some((pg) => pg.mapped.some((id) => id >= 10)),
    'the moved host still holds data',
  );
  // A host outside every rack holds nothing under the rack rule.
  cluster.osdmap.crush.move('h5', [['root', 'default']]);
  t.false(dataPgs(cluster).some((pg) => pg.mapped.includes(8) || pg.mapped.includes(9)));
  t.true(distinctRacks(cluster, rackOf));
});

test('sim placement under a rack rule with fewer racks than replicas: PGs undersized, never two in a rack', (t) => {
  const { cluster, rackOf } = racked();
  cluster.osdmap.crush.createRule('quarry-rack', 'default', 'rack');
  for (let h = 3; h <= 6; h++)
    cluster.osdmap.crush.move(`h${h}`, [
      ['root', 'default'],
      ['rack', 'r2'],
    ]);
  cluster.osdmap.setPoolRule(cluster.osdmap.poolByName('data')!, cluster.osdmap.crush.rule('quarry-rack')!.id);
  t.true(distinctRacks(cluster, rackOf));
  t.true(dataPgs(cluster).every((pg) => pg.mapped.length === 2 && pg.state === 'active+undersized'));
});

test('sim osd set-group noout on a rack: every OSD of its hosts carries it, others do not; health names the rack', async (t) => {
  const cluster = recordedShape();
  cluster.startOsd(cluster.createOsd(uuidOf(9)), 'vm2', TB, 'hdd');
  for (const verb of [
    ['osd', 'crush', 'add-bucket', 'r1', 'rack'],
    ['osd', 'crush', 'move', 'r1', 'root=default'],
    ['osd', 'crush', 'move', 'vm', 'root=default', 'rack=r1'],
    ['osd', 'set-group', 'noout', 'r1'],
  ])
    t.is((await reply(cluster, verb)).exitCode, 0, verb.join(' '));
  const flagged = [...cluster.osdmap.osds.values()].filter((o) => cluster.osdmap.hasFlag(o, 'noout')).map((o) => o.host);
  t.deepEqual(flagged, ['vm', 'vm', 'vm']);
  const health = JSON.stringify(cluster.health());
  t.regex(health, /rack r1 has flags noout/);
});
