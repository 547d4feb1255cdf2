// CephClient's CRUSH verbs replayed from a real Ceph 16.2.15 cluster (test/fixtures/ceph,
// recorded by record-crush.sh: one host "vm" with three OSDs, racks and rows built around it).
import test from 'ava';
import { crushBuckets, locationOf } from '../../src/clients/ceph-crush.js';
import { CommandError } from '../../src/errors.js';
import { FakeRunner } from '../helpers/fake-runner.js';
import { adminClient, expectJson, expectRecorded } from './ceph-fixtures.js';

const recordedClient = (verb: string[], name: string) => adminClient(expectRecorded(new FakeRunner(), verb, name));
const jsonClient = (verb: string[], name: string) => adminClient(expectJson(new FakeRunner(), verb, name));

test('ceph crush add-bucket: made, and any bucket of that name again is success whatever its type', async (t) => {
  t.deepEqual(await recordedClient(['osd', 'crush', 'add-bucket', 'r1', 'rack'], 'crush-add-bucket').crushAddBucket('r1', 'rack'), {
    created: true,
  });
  t.deepEqual(await recordedClient(['osd', 'crush', 'add-bucket', 'r1', 'rack'], 'crush-add-bucket-again').crushAddBucket('r1', 'rack'), {
    created: false,
  });
  // Ceph does not compare types: the caller reads the tree (the cluster loop's plan does).
  t.deepEqual(
    await recordedClient(['osd', 'crush', 'add-bucket', 'r1', 'row'], 'crush-add-bucket-other-type').crushAddBucket('r1', 'row'),
    {
      created: false,
    },
  );
  const err = await t.throwsAsync(
    recordedClient(['osd', 'crush', 'add-bucket', 'x1', 'nosuchtype'], 'crush-add-bucket-bad-type').crushAddBucket('x1', 'nosuchtype'),
    { instanceOf: CommandError },
  );
  t.is(err.exitCode, 22);
  t.regex(err.stderr, /type 'nosuchtype' does not exist/);
  // A name Ceph's CLI would refuse is refused before anything runs (the FakeRunner has no script).
  await t.throwsAsync(adminClient(new FakeRunner()).crushAddBucket('bad/name', 'rack'), {
    instanceOf: TypeError,
    message: /not a CRUSH name/,
  });
});

test('ceph crush move: moved, already there, and an item that does not exist', async (t) => {
  const loc = ['root=default', 'rack=r1'];
  t.deepEqual(await recordedClient(['osd', 'crush', 'move', 'vm', ...loc], 'crush-move-host').crushMove('vm', loc), { moved: true });
  t.deepEqual(await recordedClient(['osd', 'crush', 'move', 'vm', ...loc], 'crush-move-host-again').crushMove('vm', loc), { moved: false });
  const err = await t.throwsAsync(
    recordedClient(['osd', 'crush', 'move', 'nosuch', 'root=default'], 'crush-move-missing').crushMove('nosuch', ['root=default']),
    { instanceOf: CommandError },
  );
  t.is(err.exitCode, 2);
  await t.throwsAsync(adminClient(new FakeRunner()).crushMove('vm', ['rack']), { instanceOf: TypeError, message: /not TYPE=NAME/ });
  await t.throwsAsync(adminClient(new FakeRunner()).crushMove('vm', []), { instanceOf: TypeError });
});

test('ceph crush rule create-replicated: made (silently), again success, a class, and refusals of type and root', async (t) => {
  const rule = { name: 'quarry-rack', root: 'default', failureDomain: 'rack' };
  const verb = ['osd', 'crush', 'rule', 'create-replicated', 'quarry-rack', 'default', 'rack'];
  t.deepEqual(await recordedClient(verb, 'crush-rule-create').crushRuleCreateReplicated(rule), { created: true });
  t.deepEqual(await recordedClient(verb, 'crush-rule-create-again').crushRuleCreateReplicated(rule), { created: false });
  t.deepEqual(
    await recordedClient(
      [...verb.slice(0, 4), 'quarry-rack-hdd', 'default', 'rack', 'hdd'],
      'crush-rule-create-class',
    ).crushRuleCreateReplicated({
      ...rule,
      name: 'quarry-rack-hdd',
      deviceClass: 'hdd',
    }),
    { created: true },
  );
  const type = await t.throwsAsync(
    recordedClient([...verb.slice(0, 4), 'quarry-x', 'default', 'nosuchtype'], 'crush-rule-create-bad-type').crushRuleCreateReplicated({
      name: 'quarry-x',
      root: 'default',
      failureDomain: 'nosuchtype',
    }),
    { instanceOf: CommandError },
  );
  t.is(type.exitCode, 22);
  const root = await t.throwsAsync(
    recordedClient([...verb.slice(0, 4), 'quarry-y', 'nosuchroot', 'host'], 'crush-rule-create-bad-root').crushRuleCreateReplicated({
      name: 'quarry-y',
      root: 'nosuchroot',
      failureDomain: 'host',
    }),
    { instanceOf: CommandError },
  );
  t.is(root.exitCode, 2);
});

test('ceph crush rule dump: each rule with the bucket it takes and the type it spreads across', async (t) => {
  t.deepEqual(await jsonClient(['osd', 'crush', 'rule', 'dump'], 'crush-rule-dump').crushRuleDump(), [
    { id: 0, name: 'replicated_rule', root: 'default', failureDomain: 'osd' },
    { id: 1, name: 'quarry-rack', root: 'default', failureDomain: 'rack' },
    { id: 2, name: 'quarry-rack-hdd', root: 'default~hdd', failureDomain: 'rack' },
  ]);
});

test('ceph osd pool set crush_rule: set, again, and a missing rule or pool (ENOENT)', async (t) => {
  const verb = ['osd', 'pool', 'set', 'quarry-data', 'crush_rule', 'quarry-rack'];
  await t.notThrowsAsync(recordedClient(verb, 'crush-pool-set-rule').poolSetCrushRule('quarry-data', 'quarry-rack'));
  await t.notThrowsAsync(recordedClient(verb, 'crush-pool-set-rule-again').poolSetCrushRule('quarry-data', 'quarry-rack'));
  const rule = await t.throwsAsync(
    recordedClient([...verb.slice(0, 5), 'nosuchrule'], 'crush-pool-set-rule-missing').poolSetCrushRule('quarry-data', 'nosuchrule'),
    { instanceOf: CommandError },
  );
  t.is(rule.exitCode, 2);
  const pool = await t.throwsAsync(
    recordedClient(['osd', 'pool', 'set', 'nosuchpool', 'crush_rule', 'quarry-rack'], 'crush-pool-set-rule-no-pool').poolSetCrushRule(
      'nosuchpool',
      'quarry-rack',
    ),
    { instanceOf: CommandError },
  );
  t.regex(pool.stderr, /unrecognized pool 'nosuchpool'/);
});

test('ceph pool rules: each pool with the id of its rule', async (t) => {
  const pools = await jsonClient(['osd', 'pool', 'ls', 'detail'], 'crush-pool-ls-detail').poolRules();
  t.like(
    pools.find((p) => p.name === 'quarry-data'),
    { crushRule: 1, size: 1 },
  );
  t.true(pools.filter((p) => p.name !== 'quarry-data').every((p) => p.crushRule === 0));
});

test('ceph osd tree as a CRUSH hierarchy: buckets with type and parent; a restarted OSD leaves its host where it was moved', async (t) => {
  const tree = await jsonClient(['osd', 'tree'], 'crush-osd-tree-row').osdTree();
  const buckets = crushBuckets(tree);
  t.deepEqual(buckets.get('r1'), { id: -5, type: 'rack', parent: 'row1' });
  t.deepEqual(buckets.get('nosuchrow'), { id: -7, type: 'row', parent: 'default' }, 'a move to a missing parent made it');
  t.deepEqual(locationOf(buckets, 'vm'), ['root=default', 'row=row1', 'rack=r1']);
  const rack = crushBuckets(await jsonClient(['osd', 'tree'], 'crush-osd-tree-rack').osdTree());
  t.deepEqual(locationOf(rack, 'vm'), ['root=default', 'row=nosuchrow', 'rack=r1']);
  const restarted = crushBuckets(await jsonClient(['osd', 'tree'], 'crush-osd-tree-restarted').osdTree());
  t.deepEqual(locationOf(restarted, 'vm'), ['root=default', 'row=row1', 'rack=r1']);
  t.deepEqual([...restarted], [...buckets]);
});
