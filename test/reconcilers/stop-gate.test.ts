// The pure verdict of Ceph's side of the disruption gate: answers in, "go" or the first refusal
// with Ceph's words out.
import test from 'ava';
import { osdStopRefused, type MdsStopReport, type MonStopReport, type OsdStopReport } from '../../src/clients/ceph-stop-gates.js';
import { stopVerdict, type StopSet } from '../../reconcilers/shared/stop-gate.js';

const osdOk = (osds: number[]): OsdStopReport => ({
  ok: true,
  osds,
  okPgs: 3,
  notOkPgs: 0,
  becomeInactive: [],
  alreadyInactive: [],
  noPool: [],
  unknown: [],
  becomeDegraded: ['1.0', '2.0', '2.1'],
  becomeMoreDegraded: [],
});
const osdNo = (osds: number[], becomeInactive: string[]): OsdStopReport => ({
  ...osdStopRefused(osds, `unsafe to stop osd(s) at this time (${becomeInactive.length} PGs are or would become offline)`),
  notOkPgs: becomeInactive.length,
  becomeInactive,
});
const monOk = (mons: string[]): MonStopReport => ({
  ok: true,
  mons,
  remaining: ['c'],
  message: 'quorum should be preserved (b,c) after stopping [a]',
});
const monNo = (mons: string[]): MonStopReport => ({
  ok: false,
  mons,
  remaining: ['c'],
  message: 'not enough monitors would be available (c) after stopping mons [a,b]',
});
const mdsOk = (mds: string[]): MdsStopReport => ({ ok: true, mds, activeGids: [], standbyGids: [], message: 'should be safe to stop [a]' });
const mdsNo = (mds: string[]): MdsStopReport => ({
  ok: false,
  mds,
  activeGids: [4162],
  standbyGids: [],
  message: 'insufficent standby MDS daemons to stop active gids 4162 and/or standby gids ',
});

const set = (osds: number[], mons: string[] = [], mds: string[] = []): StopSet => ({ osds, mons, mds });

test('stop gate: a set with nothing of a kind needs no answer of that kind', (t) => {
  t.deepEqual(stopVerdict(set([]), {}), { ok: true });
  t.deepEqual(stopVerdict(set([0, 1]), { osd: osdOk([1, 0]) }), { ok: true }, 'the order Ceph echoes the ids in does not matter');
  t.deepEqual(stopVerdict(set([0], ['a'], ['a']), { osd: osdOk([0]), mon: monOk(['a']), mds: mdsOk(['a']) }), { ok: true });
});

test("stop gate: OSDs refused name the set, Ceph's reason and the PGs that would go inactive", (t) => {
  const pgs = ['1.0', '2.0', '2.1', '2.2', '2.4', '2.5', '2.6', '3.0', '3.2', '3.3'];
  const v = stopVerdict(set([2, 0], ['a']), { osd: osdNo([0, 2], pgs), mon: monOk(['a']) });
  t.deepEqual(v, {
    ok: false,
    reason: 'OsdNotOkToStop',
    message:
      'stopping osd.0, osd.2: unsafe to stop osd(s) at this time (10 PGs are or would become offline); ' +
      '10 PGs would become inactive (1.0, 2.0, 2.1, 2.2, 2.4, 2.5, 2.6, 3.0 and 2 more)',
  });
});

test('stop gate: PGs inactive already or of unknown state are said too', (t) => {
  const r: OsdStopReport = { ...osdStopRefused([3], '2 pgs have unknown state; cannot draw any conclusions'), unknown: ['4.1', '4.2'] };
  const v = stopVerdict(set([3]), { osd: r });
  t.false(v.ok);
  if (!v.ok)
    t.is(v.message, 'stopping osd.3: 2 pgs have unknown state; cannot draw any conclusions; 2 PGs have an unknown state (4.1, 4.2)');
  const already: OsdStopReport = {
    ...osdStopRefused([3], 'unsafe to stop osd(s) at this time (1 PGs are or would become offline)'),
    alreadyInactive: ['5.0'],
  };
  const w = stopVerdict(set([3]), { osd: already });
  if (!w.ok) t.regex(w.message, /; 1 PG are inactive already \(5\.0\)$/);
  else t.fail('an inactive PG let the stop through');
});

test("stop gate: monitors and MDS refused carry Ceph's sentence", (t) => {
  t.deepEqual(stopVerdict(set([], ['b', 'a']), { mon: monNo(['a', 'b']) }), {
    ok: false,
    reason: 'MonNotOkToStop',
    message: 'stopping mon.a, mon.b: not enough monitors would be available (c) after stopping mons [a,b]',
  });
  t.deepEqual(stopVerdict(set([], [], ['a']), { mds: mdsNo(['a']) }), {
    ok: false,
    reason: 'MdsNotOkToStop',
    message: 'stopping mds.a: insufficent standby MDS daemons to stop active gids 4162 and/or standby gids ',
  });
});

test('stop gate: OSDs are judged first, then monitors, then MDS', (t) => {
  const all = { osd: osdNo([0], ['1.0']), mon: monNo(['a']), mds: mdsNo(['a']) };
  t.like(stopVerdict(set([0], ['a'], ['a']), all), { ok: false, reason: 'OsdNotOkToStop' });
  t.like(stopVerdict(set([0], ['a'], ['a']), { ...all, osd: osdOk([0]) }), { ok: false, reason: 'MonNotOkToStop' });
  t.like(stopVerdict(set([0], ['a'], ['a']), { ...all, osd: osdOk([0]), mon: monOk(['a']) }), { ok: false, reason: 'MdsNotOkToStop' });
});

test('stop gate: no answer, a failed answer or an answer about another set is a "no"', (t) => {
  const missing = stopVerdict(set([0], ['a']), { osd: osdOk([0]) });
  t.deepEqual(missing, { ok: false, reason: 'MonNotOkToStop', message: 'stopping mon.a: Ceph has not been asked mon ok-to-stop yet' });
  const failed = stopVerdict(set([0]), { osd: { error: 'timed out after 30000 ms' } });
  t.deepEqual(failed, {
    ok: false,
    reason: 'OsdNotOkToStop',
    message: 'stopping osd.0: Ceph did not answer osd ok-to-stop: timed out after 30000 ms',
  });
  const stale = stopVerdict(set([0, 1]), { osd: osdOk([0]) });
  t.like(stale, { ok: false, reason: 'OsdNotOkToStop' });
  if (!stale.ok) t.regex(stale.message, /asked osd ok-to-stop about other daemons than the set would stop/);
  t.like(stopVerdict(set([], [], ['a', 'b']), { mds: mdsOk(['a']) }), { ok: false, reason: 'MdsNotOkToStop' });
});
