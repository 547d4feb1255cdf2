// The cluster loop's CRUSH plan, table-tested: which host is placed next and where, when pools
// move to the failure domain's rule, and every reason it holds instead of acting.
import test from 'ava';
import type { CrushBucketSeen, CrushRule, PoolRule } from '../../src/clients/ceph-crush.js';
import { DEFAULT_CRUSH_LEVELS } from '../../src/model/crush.js';
import { crushWanted, planCrush, type CrushObserved } from '../../reconcilers/cluster/crush-plan.js';
import type { RunInfo } from '../../reconcilers/shared/runs.js';

const bucket = (id: number, type: string, parent: string | null): CrushBucketSeen => ({ id, type, parent });
/** h1..h3 under the root, as OSDs put them at boot. */
const flat = (): Map<string, CrushBucketSeen> =>
  new Map([
    ['default', bucket(-1, 'root', null)],
    ['h1', bucket(-3, 'host', 'default')],
    ['h2', bucket(-5, 'host', 'default')],
    ['h3', bucket(-7, 'host', 'default')],
  ]);
const DEFAULT_RULE: CrushRule = { id: 0, name: 'replicated_rule', root: 'default', failureDomain: 'host' };
const pool = (name: string, crushRule = 0, size = 3): PoolRule => ({ id: name.length, name, size, crushRule });

function observed(o: Partial<CrushObserved> & { labels?: Record<string, Record<string, string>> } = {}): CrushObserved {
  const labels = o.labels ?? { h1: { rack: 'r1' }, h2: { rack: 'r1' }, h3: { rack: 'r2' } };
  return {
    levels: [...DEFAULT_CRUSH_LEVELS],
    failureDomain: 'host',
    // Quarry's hostname is not the machine's (the CRUSH host bucket's name): q-h1 has bucket h1.
    nodes: Object.entries(labels).map(([bucket, l]) => ({ hostname: `q-${bucket}`, labels: l, bucket })),
    ceph: { buckets: flat(), rules: [DEFAULT_RULE], pools: [pool('cephfs_data')] },
    placeRun: null,
    ruleRun: null,
    now: 1_000_000,
    retryBaseMs: 1_000,
    ...o,
  };
}

/** The buckets once every host is where its label says. */
function placed(racks: Record<string, string>): Map<string, CrushBucketSeen> {
  const m = flat();
  let id = -9;
  for (const r of new Set(Object.values(racks))) m.set(r, bucket((id -= 2), 'rack', 'default'));
  for (const [h, r] of Object.entries(racks)) m.set(h, { ...m.get(h)!, parent: r });
  return m;
}

const run = (state: RunInfo['state'], attempt = 1, completedAt: number | null = 999_000): RunInfo => ({
  id: 'r',
  state,
  attempt,
  completedAt,
  error: state === 'failed' ? 'ENOENT' : null,
  args: {},
  result: null,
});

test('crush plan: the first host not where its labels say is placed, with its whole location', (t) => {
  const p = planCrush(observed());
  t.deepEqual(p.step, { kind: 'place-host', host: 'h1', location: ['root=default', 'rack=r1'], attempt: 1 });
  t.is(p.gate, null);
  t.deepEqual(p.status.hosts, { 'q-h1': 'default', 'q-h2': 'default', 'q-h3': 'default' });
  t.regex(p.status.message, /placing host h1 under default\/r1/);
});

test('crush plan: hosts in place and a host rule: nothing to do; unlabelled hosts go back to the root', (t) => {
  const done = planCrush(
    observed({ ceph: { buckets: placed({ h1: 'r1', h2: 'r1', h3: 'r2' }), rules: [DEFAULT_RULE], pools: [pool('a')] } }),
  );
  t.is(done.step, null);
  t.deepEqual(done.status, {
    failureDomain: 'host',
    rule: null,
    hosts: { 'q-h1': 'default/r1', 'q-h2': 'default/r1', 'q-h3': 'default/r2' },
    message: 'in place',
  });
  const unlabel = planCrush(
    observed({
      labels: { h1: {}, h2: { rack: 'r1' }, h3: { rack: 'r2' } },
      ceph: { buckets: placed({ h1: 'r1', h2: 'r1', h3: 'r2' }), rules: [DEFAULT_RULE], pools: [] },
    }),
  );
  t.like(unlabel.step, { kind: 'place-host', host: 'h1', location: ['root=default'] });
});

test('crush plan: a node without a host bucket (no OSD booted) is not placed', (t) => {
  const p = planCrush(observed({ labels: { h9: { rack: 'r1' } } }));
  t.is(p.step, null);
  t.deepEqual(p.status.hosts, {});
  const none = observed();
  none.nodes = none.nodes.map((n) => ({ ...n, bucket: null }));
  t.is(planCrush(none).step, null);
});

test('crush plan: a run in progress starts nothing; a failed one is retried after its backoff', (t) => {
  t.is(planCrush(observed({ placeRun: run('running') })).step, null);
  const waiting = planCrush(observed({ placeRun: run('failed', 1, 999_900) }));
  t.is(waiting.step, null);
  t.true(waiting.waitMs !== null && waiting.waitMs > 0);
  t.regex(waiting.status.message, /attempt 1 failed: ENOENT/);
  t.like(planCrush(observed({ placeRun: run('failed', 1, 990_000) })).step, { kind: 'place-host', attempt: 2 });
});

test('crush plan: refusals — labels in two places, a bucket of another type, a rule of that name across another type', (t) => {
  const conflict = planCrush(observed({ labels: { h1: { rack: 'r1' }, h2: { row: 'x', rack: 'r1' } } }));
  t.like(conflict.gate, { reason: 'CrushLabelConflict' });
  t.is(conflict.step, null);
  const buckets = flat();
  buckets.set('r1', bucket(-9, 'row', 'default'));
  t.like(planCrush(observed({ ceph: { buckets, rules: [DEFAULT_RULE], pools: [] } })).gate, {
    reason: 'CrushBucketTypeClash',
    message: 'CRUSH has a row named r1; a label asks for a rack of that name',
  });
  const clash = planCrush(
    observed({
      failureDomain: 'rack',
      ceph: {
        buckets: placed({ h1: 'r1', h2: 'r2', h3: 'r3' }),
        rules: [DEFAULT_RULE, { id: 1, name: 'quarry-rack', root: 'default', failureDomain: 'host' }],
        pools: [pool('a')],
      },
      labels: { h1: { rack: 'r1' }, h2: { rack: 'r2' }, h3: { rack: 'r3' } },
    }),
  );
  t.like(clash.gate, { reason: 'CrushRuleClash' });
});

test('crush plan: a rack failure domain moves Quarry pools to quarry-rack once every host has a rack and there are enough', (t) => {
  const three = { h1: { rack: 'r1' }, h2: { rack: 'r2' }, h3: { rack: 'r3' } };
  const pools = [pool('cephfs_data'), pool('cephfs_metadata'), pool('mine', 7)];
  const rules = [DEFAULT_RULE, { id: 7, name: 'operator-rule', root: 'default', failureDomain: 'osd' }];
  const p = planCrush(
    observed({ failureDomain: 'rack', labels: three, ceph: { buckets: placed({ h1: 'r1', h2: 'r2', h3: 'r3' }), rules, pools } }),
  );
  t.deepEqual(p.step, { kind: 'rule', rule: 'quarry-rack', failureDomain: 'rack', pools: ['cephfs_data', 'cephfs_metadata'], attempt: 1 });
  // Two racks for size-3 pools: held, with Ceph's numbers.
  const two = planCrush(observed({ failureDomain: 'rack', ceph: { buckets: placed({ h1: 'r1', h2: 'r1', h3: 'r2' }), rules, pools } }));
  t.deepEqual(two.gate, { reason: 'TooFewFailureDomains', message: 'pools of size 3 need 3 racks with OSDs, there are 2 (r1, r2)' });
  // A host without a rack label would hold nothing under the rule.
  const outside = planCrush(
    observed({ failureDomain: 'rack', labels: { ...three, h3: {} }, ceph: { buckets: placed({ h1: 'r1', h2: 'r2' }), rules, pools } }),
  );
  t.like(outside.gate, { reason: 'HostsOutsideFailureDomain' });
  t.regex(outside.gate!.message, /hosts h3 have no rack label/);
  // Done: the rule is in use, nothing left.
  const done = planCrush(
    observed({
      failureDomain: 'rack',
      labels: three,
      ceph: {
        buckets: placed({ h1: 'r1', h2: 'r2', h3: 'r3' }),
        rules: [...rules, { id: 1, name: 'quarry-rack', root: 'default', failureDomain: 'rack' }],
        pools: [pool('cephfs_data', 1), pool('cephfs_metadata', 1), pool('mine', 7)],
      },
    }),
  );
  t.is(done.step, null);
  t.like(done.status, { rule: 'quarry-rack', message: 'pools on quarry-rack' });
});

test('crush plan: back to host, pools leave a Quarry rule for quarry-host; the default rule stays as it is', (t) => {
  const rules = [DEFAULT_RULE, { id: 1, name: 'quarry-rack', root: 'default', failureDomain: 'rack' }];
  const p = planCrush(
    observed({ ceph: { buckets: placed({ h1: 'r1', h2: 'r1', h3: 'r2' }), rules, pools: [pool('a', 1), pool('b', 0)] } }),
  );
  t.deepEqual(p.step, { kind: 'rule', rule: 'quarry-host', failureDomain: 'host', pools: ['a'], attempt: 1 });
});

test('crush wanted: only with level labels, another failure domain, or something placed before', (t) => {
  const none = [{ labels: { team: 'x' } }];
  t.false(crushWanted([...DEFAULT_CRUSH_LEVELS], 'host', none, undefined));
  t.true(crushWanted([...DEFAULT_CRUSH_LEVELS], 'host', [{ labels: { rack: 'r1' } }], undefined));
  t.true(crushWanted([...DEFAULT_CRUSH_LEVELS], 'rack', none, undefined));
  t.true(
    crushWanted([...DEFAULT_CRUSH_LEVELS], 'host', none, { failureDomain: 'host', rule: null, hosts: { h1: 'default/r1' }, message: '' }),
  );
  t.false(
    crushWanted([...DEFAULT_CRUSH_LEVELS], 'host', none, { failureDomain: 'host', rule: null, hosts: { h1: 'default' }, message: '' }),
  );
});
