// The disruption budget's admission as a table: failure domains, Ceph's refusals for the set
// together (OSDs, monitors, MDS), drains, stale leases, old documents; and a node's failure domain.
import test from 'ava';
import type { DisruptionLease } from '../../src/model/disruption-kinds.js';
import { osdStopRefused, type OsdStopReport } from '../../src/clients/ceph-stop-gates.js';
import {
  admit,
  basisOf,
  leaseOf,
  needsCeph,
  stopSetFor,
  type BudgetLimits,
  type DisruptionRequest,
} from '../../reconcilers/shared/disruption-gate.js';
import { failureDomainOf } from '../../reconcilers/shared/failure-domain.js';
import { leaseState } from '../../reconcilers/shared/drain-lease.js';
import type { StopAnswers } from '../../reconcilers/shared/stop-gate.js';

const SINCE = '2026-01-01T00:00:00.000Z';
const ONE: BudgetLimits = { maxUnavailable: 1, maxDisruptions: 1 };

function restart(host: string, domain: string, osds: number[], mon = false, mds = false): DisruptionRequest {
  return {
    holder: { kind: 'Node', id: `id-${host}` },
    kind: 'restart',
    what: `restart of ${host}`,
    nodes: [`id-${host}`],
    domains: [domain],
    stops: { osds, mons: mon ? [host] : [], mds: mds ? [host] : [] },
  };
}
const drain = (disk: string, domain?: string): DisruptionRequest => ({
  holder: { kind: 'Disk', id: disk },
  kind: 'drain',
  what: `drain of ${disk}`,
  nodes: domain ? [`id-${domain}`] : [],
  domains: domain ? [domain] : [],
  stops: { osds: [], mons: [], mds: [] },
});
const held = (r: DisruptionRequest): DisruptionLease => leaseOf(r, SINCE);

const osdOk = (ids: number[]): OsdStopReport => ({ ...osdStopRefused(ids, ''), ok: true });
const osdNo = (ids: number[]): OsdStopReport => ({
  ...osdStopRefused(ids, 'unsafe to stop osd(s) at this time (12 PGs are or would become offline)'),
  becomeInactive: ['1.0', '1.1'],
});
const monAnswer = (mons: string[], ok: boolean) => ({
  ok,
  mons,
  remaining: [],
  message: ok
    ? `quorum should be preserved after stopping [${mons.join(',')}]`
    : `not enough monitors would be available after stopping mons [${mons.join(',')}]`,
});
const mdsAnswer = (mds: string[], ok: boolean) => ({
  ok,
  mds,
  activeGids: ok ? [] : [4162],
  standbyGids: [],
  message: ok
    ? `should be safe to stop [${mds.join(',')}]`
    : 'insufficent standby MDS daemons to stop active gids 4162 and/or standby gids ',
});

const a = restart('a', 'a', [0, 1], true);
const b = restart('b', 'b', [2, 3], true);
const b2 = restart('b2', 'b', [4]);
const rackA1 = restart('h1', 'rack:r1', [0], true);
const rackA2 = restart('h2', 'rack:r1', [1], true);

type Row = [
  title: string,
  limits: BudgetLimits,
  leases: DisruptionLease[],
  req: DisruptionRequest,
  answers: StopAnswers,
  ok: boolean,
  message?: RegExp,
];
const table: Row[] = [
  ['nothing held, Ceph agrees: admitted', ONE, [], a, { osd: osdOk([0, 1]), mon: monAnswer(['a'], true) }, true],
  ['nothing held, Ceph not asked yet: held back', ONE, [], a, {}, false, /OsdNotOkToStop: .*has not been asked/],
  [
    'another domain held, maxUnavailable 1: held back naming the lease',
    ONE,
    [held(a)],
    b,
    {},
    false,
    /at most 1 failure domain.*a is already; held by restart of a since 2026/,
  ],
  [
    'another domain held, maxUnavailable 2, Ceph agrees to the union: admitted',
    { ...ONE, maxUnavailable: 2 },
    [held(a)],
    b,
    { osd: osdOk([0, 1, 2, 3]), mon: monAnswer(['a', 'b'], true) },
    true,
  ],
  [
    "maxUnavailable 2 but the two monitors together would lose quorum: held back with Ceph's words",
    { ...ONE, maxUnavailable: 2 },
    [held(a)],
    b,
    { osd: osdOk([0, 1, 2, 3]), mon: monAnswer(['a', 'b'], false) },
    false,
    /MonNotOkToStop: stopping mon\.a, mon\.b: not enough monitors.*held by restart of a/,
  ],
  [
    'Ceph answered about the request alone, not the union: held back',
    { ...ONE, maxUnavailable: 2 },
    [held(a)],
    b,
    { osd: osdOk([2, 3]), mon: monAnswer(['b'], true) },
    false,
    /other daemons than the set would stop/,
  ],
  [
    'same domain as the held lease, Ceph agrees to the union: admitted together',
    ONE,
    [held(b)],
    b2,
    { osd: osdOk([2, 3, 4]), mon: monAnswer(['b'], true) },
    true,
  ],
  [
    'same domain, OSDs of the union not ok to stop: held back with the PGs',
    ONE,
    [held(b)],
    b2,
    { osd: osdNo([2, 3, 4]), mon: monAnswer(['b'], true) },
    false,
    /OsdNotOkToStop: stopping osd\.2, osd\.3, osd\.4: unsafe.*2 PGs would become inactive \(1\.0, 1\.1\)/,
  ],
  [
    'rack failure domain: two hosts of one rack go together when Ceph agrees',
    ONE,
    [held(rackA1)],
    rackA2,
    { osd: osdOk([0, 1]), mon: monAnswer(['h1', 'h2'], true) },
    true,
  ],
  [
    'an MDS without a standby: held back',
    ONE,
    [],
    restart('m', 'm', [], false, true),
    { mds: mdsAnswer(['m'], false) },
    false,
    /MdsNotOkToStop: stopping mds\.m: insufficent standby/,
  ],
  ['a drain held on another domain holds a restart back', ONE, [held(drain('d1', 'x'))], a, {}, false, /held by drain of d1/],
  [
    'a second drain waits for maxDisruptions',
    { maxUnavailable: 5, maxDisruptions: 1 },
    [held(drain('d1', 'x'))],
    drain('d2', 'y'),
    {},
    false,
    /at most 1 OSD drain at once; held by drain of d1/,
  ],
  [
    'two drains with maxDisruptions 2 on one domain: admitted without Ceph',
    { maxUnavailable: 1, maxDisruptions: 2 },
    [held(drain('d1', 'x'))],
    drain('d2', 'x'),
    {},
    true,
  ],
  [
    'a lease of an old document (no kind, nodes, domains) is a drain of no domain',
    ONE,
    [{ holderKind: 'Disk', holderId: 'old', what: 'drain of osd.9', since: SINCE }],
    a,
    { osd: osdOk([0, 1]), mon: monAnswer(['a'], true) },
    true,
  ],
];

for (const [title, limits, leases, req, answers, ok, message] of table) {
  test(`disruption gate: ${title}`, (t) => {
    const r = admit(limits, leases, req, answers);
    t.is(r.ok, ok);
    if (!r.ok) {
      t.is(r.reason, 'DisruptionBudget');
      if (message) t.regex(r.message, message);
    }
  });
}

test('disruption gate: the set put to Ceph is every held stopping lease with the request, deduplicated and sorted', (t) => {
  const set = stopSetFor([held(a), held(drain('d1', 'x')), held(b2)], b);
  t.deepEqual(set, { osds: [0, 1, 2, 3, 4], mons: ['a', 'b'], mds: [] });
});

test('disruption gate: Ceph is asked only when the budget would admit and the set stops daemons', (t) => {
  t.true(needsCeph(ONE, [], a));
  t.false(needsCeph(ONE, [held(a)], b), 'the domains already refuse');
  t.false(needsCeph(ONE, [], drain('d', 'x')), 'a drain stops nothing');
  t.false(needsCeph(ONE, [], restart('e', 'e', [])), 'nothing to stop');
});

test('disruption gate: the basis names the held leases whatever their order', (t) => {
  t.is(basisOf([held(a), held(b)]), basisOf([held(b), held(a)]));
  t.not(basisOf([held(a)]), basisOf([held(a), held(b)]));
  t.is(basisOf([]), '');
});

test('disruption gate: a drain sees a stale holder as gone and a held node lease in another domain as taken', (t) => {
  const view = { max: 1, limits: ONE, leases: [held(a)] };
  const me = { kind: 'Disk', id: 'd9' };
  t.like(leaseState(view, me, [], { nodes: ['id-z'], domains: ['z'] }), { kind: 'taken' });
  t.deepEqual(leaseState(view, me, ['id-a'], { nodes: ['id-z'], domains: ['z'] }), { kind: 'free' });
  t.deepEqual(leaseState(view, me, [], { nodes: ['id-a'], domains: ['a'] }), { kind: 'free' }, 'same domain: no drain held');
});

test("failure domain: the hostname by default, the label of the Cluster spec's level otherwise", (t) => {
  const n = { spec: { hostname: 'node-1' }, metadata: { labels: { rack: 'r1' } } };
  t.is(failureDomainOf(n, undefined), 'node-1');
  t.is(failureDomainOf(n, { fsid: 'x' }), 'node-1');
  t.is(failureDomainOf(n, { failureDomain: 'host' }), 'node-1');
  t.is(failureDomainOf(n, { failureDomain: 'rack' }), 'rack:r1');
  t.is(failureDomainOf(n, { failureDomain: 'row' }), 'node-1', 'no label for the level: a domain of its own');
});
