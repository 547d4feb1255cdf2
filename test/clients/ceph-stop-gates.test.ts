// CephClient's stop-gate questions (osd/mon/mds ok-to-stop) and noout group flags, replayed from
// a real Ceph 16.2.15 cluster of four OSDs on three CRUSH hosts (h1: osd.0 and osd.1, h2: osd.2,
// h3: osd.3), size-3 pools over a host rule (quarry-m1 with min_size 1), three monitors and an MDS
// with and without a standby (test/fixtures/ceph/record-stop-gates.sh; each .result.json names
// its command).
import test from 'ava';
import { CommandError } from '../../src/errors.js';
import { FakeRunner } from '../helpers/fake-runner.js';
import { adminClient, cephArgs, expectJson, expectRecorded, fixture, recorded } from './ceph-fixtures.js';

const replay = (verb: string[], name: string) => {
  const runner = expectRecorded(new FakeRunner(), verb, name);
  return { runner, ceph: adminClient(runner) };
};
const osdAsk = (ids: number[], name: string) => replay(['osd', 'ok-to-stop', ...ids.map(String)], name).ceph.osdOkToStop(ids);
/** Every PG of the recorded cluster: 9 pools of 8 PGs but device_health_metrics (1) and quarry-data (16). */
const ALL_PGS = 89;

test("ceph osd ok-to-stop: a host's OSDs together are ok, every PG they hold becomes degraded", async (t) => {
  const r = await osdAsk([0, 1], 'osd-ok-to-stop-host');
  t.like(r, { ok: true, osds: [0, 1], okPgs: ALL_PGS, notOkPgs: 0, becomeInactive: [], becomeMoreDegraded: [] });
  t.is(r.becomeDegraded.length, ALL_PGS);
  t.is(r.reason, undefined);
  t.like(await osdAsk([2], 'osd-ok-to-stop-one'), { ok: true, okPgs: ALL_PGS });
});

test('ceph osd ok-to-stop: two hosts at once is EBUSY, with the PGs that would go inactive and those that would not', async (t) => {
  const { runner, ceph } = replay(['osd', 'ok-to-stop', '0', '2'], 'osd-ok-to-stop-two-hosts');
  const r = await ceph.osdOkToStop([0, 2]);
  runner.verify();
  t.like(r, {
    ok: false,
    reason: 'unsafe to stop osd(s) at this time (45 PGs are or would become offline)',
    osds: [0, 2],
    okPgs: 44,
    notOkPgs: 45,
  });
  t.is(r.becomeInactive.length, 45);
  t.deepEqual(r.becomeInactive.slice(0, 3), ['1.0', '2.0', '2.1']);
  t.is(r.becomeDegraded.length, 44, 'the PGs osd.2 holds without osd.0 keep two replicas');
  t.deepEqual([...r.becomeInactive, ...r.becomeDegraded].length, ALL_PGS);
  const all = await osdAsk([0, 1, 2, 3], 'osd-ok-to-stop-all');
  t.like(all, { ok: false, notOkPgs: ALL_PGS, okPgs: 0 });
});

test('ceph osd ok-to-stop: the legacy okToStop reads the same set answer', async (t) => {
  const r = await replay(['osd', 'ok-to-stop', '0', '2'], 'osd-ok-to-stop-two-hosts').ceph.okToStop([0, 2]);
  t.deepEqual(r, { ok: false, reason: 'unsafe to stop osd(s) at this time (45 PGs are or would become offline)', osds: [0, 2] });
});

test('ceph osd ok-to-stop: an unknown id in the set changes nothing (Ceph answers for the others)', async (t) => {
  t.like(await osdAsk([2, 99], 'osd-ok-to-stop-with-unknown'), { ok: true, osds: [2, 99], okPgs: ALL_PGS });
});

test('ceph osd ok-to-stop with a host down: degraded PGs become "more degraded", the rest inactive', async (t) => {
  const other = await osdAsk([2], 'osd-ok-to-stop-degraded-other-host');
  t.like(other, { ok: false, okPgs: 8, notOkPgs: 81, reason: 'unsafe to stop osd(s) at this time (81 PGs are or would become offline)' });
  // quarry-m1 has min_size 1: its PGs stay available; those holding objects were degraded already.
  t.deepEqual(other.becomeMoreDegraded, ['11.0', '11.1', '11.2', '11.3', '11.4', '11.5', '11.7']);
  t.deepEqual(other.becomeDegraded, ['11.6'], 'an undersized PG without objects is not degraded yet');
  t.like(await osdAsk([0], 'osd-ok-to-stop-degraded-same-host'), { ok: false, okPgs: 5, notOkPgs: 45 });
  t.like(
    await osdAsk([3], 'osd-ok-to-stop-degraded-down'),
    { ok: true, okPgs: 0, notOkPgs: 0 },
    'the OSD already down is in no acting set',
  );
});

test("ceph osd ok-to-stop: EAGAIN keeps its report and reason; a refusal without a report is Ceph's words only", async (t) => {
  const report = '\n{"ok_to_stop":false,"osds":[1],"num_ok_pgs":0,"num_not_ok_pgs":0,"unknown_pgs":["4.1","4.2"]}\n';
  const runner = new FakeRunner()
    .expect('ceph', cephArgs('osd', 'ok-to-stop', '1'), {
      exitCode: 11,
      stdout: report,
      stderr: 'Error EAGAIN: 2 pgs have unknown state; cannot draw any conclusions\n',
    })
    .expect('ceph', cephArgs('osd', 'ok-to-stop', '2'), {
      exitCode: 16,
      stderr: 'Error EBUSY: unsafe to stop osd(s) at this time (3 PGs are or would become offline)\n',
    })
    .expect('ceph', cephArgs('osd', 'ok-to-stop', '3'), {
      exitCode: 1,
      stderr: '[errno 110] RADOS timed out (error connecting to the cluster)\n',
    });
  const ceph = adminClient(runner);
  t.like(await ceph.osdOkToStop([1]), {
    ok: false,
    unknown: ['4.1', '4.2'],
    reason: '2 pgs have unknown state; cannot draw any conclusions',
  });
  t.like(await ceph.osdOkToStop([2]), {
    ok: false,
    osds: [2],
    becomeInactive: [],
    reason: 'unsafe to stop osd(s) at this time (3 PGs are or would become offline)',
  });
  const err = await t.throwsAsync(ceph.osdOkToStop([3]), { instanceOf: CommandError });
  t.is(err.exitCode, 1);
  await t.throwsAsync(ceph.osdOkToStop([]), { instanceOf: TypeError, message: 'osdOkToStop needs at least one OSD id' });
  runner.verify();
});

test("ceph mon ok-to-stop: one of three keeps quorum, two do not; the quorum left is read from Ceph's sentence", async (t) => {
  const ask = (names: string[], name: string) => replay(['mon', 'ok-to-stop', ...names], name).ceph.monOkToStop(names);
  t.deepEqual(await ask(['a'], 'mon-ok-to-stop-one'), {
    ok: true,
    mons: ['a'],
    remaining: ['b', 'c'],
    message: 'quorum should be preserved (b,c) after stopping [a]',
  });
  t.deepEqual(await ask(['a', 'b'], 'mon-ok-to-stop-two'), {
    ok: false,
    mons: ['a', 'b'],
    remaining: ['c'],
    message: 'not enough monitors would be available (c) after stopping mons [a,b]',
  });
  t.like(await ask(['z'], 'mon-ok-to-stop-unknown'), { ok: true, remaining: ['a', 'b', 'c'] }, 'a name Ceph does not know is ignored');
  t.like(await ask(['b', 'z'], 'mon-ok-to-stop-unknown-and-one'), { ok: true, remaining: ['a', 'c'] });
});

test('ceph mon ok-to-stop with one monitor down: the other two are a bare majority', async (t) => {
  const ask = (names: string[], name: string) => replay(['mon', 'ok-to-stop', ...names], name).ceph.monOkToStop(names);
  t.like(await ask(['a'], 'mon-ok-to-stop-one-down'), {
    ok: false,
    remaining: ['b'],
    message: 'not enough monitors would be available (b) after stopping mons [a]',
  });
  t.like(await ask(['c'], 'mon-ok-to-stop-the-down-one'), { ok: true, remaining: ['a', 'b'] });
  await t.throwsAsync(adminClient(new FakeRunner()).monOkToStop(['a b']), {
    instanceOf: TypeError,
    message: 'monOkToStop: "a b" is not a Ceph name',
  });
});

test("ceph mds ok-to-stop: an active MDS needs a standby; the gids come from Ceph's sentence", async (t) => {
  const ask = (names: string[], name: string) => replay(['mds', 'ok-to-stop', ...names], name).ceph.mdsOkToStop(names);
  t.deepEqual(await ask(['a'], 'mds-ok-to-stop-no-standby'), {
    ok: false,
    mds: ['a'],
    activeGids: [4160],
    standbyGids: [],
    message: 'insufficent standby MDS daemons to stop active gids 4160 and/or standby gids',
  });
  t.like(await ask(['a'], 'mds-ok-to-stop-active'), { ok: true, message: 'should be safe to stop [a]' });
  t.like(await ask(['b'], 'mds-ok-to-stop-standby'), { ok: true });
  t.like(await ask(['a', 'b'], 'mds-ok-to-stop-both'), { ok: false, activeGids: [4160], standbyGids: [4474] });
  t.like(await ask(['zz'], 'mds-ok-to-stop-unknown'), { ok: true }, 'an MDS Ceph does not know cannot be missed');
});

test('ceph osd set-group/unset-group noout: a host, again, OSD names; an unknown OSD is a note, an unknown node EINVAL', async (t) => {
  const set = (who: string[], name: string) => replay(['osd', 'set-group', 'noout', ...who], name).ceph.osdSetGroup(['noout'], who);
  const unset = (who: string[], name: string) => replay(['osd', 'unset-group', 'noout', ...who], name).ceph.osdUnsetGroup(['noout'], who);
  t.deepEqual(await set(['h3'], 'osd-set-group-noout-host'), { missing: [] });
  t.deepEqual(await set(['h3'], 'osd-set-group-noout-host-again'), { missing: [] });
  t.deepEqual(await set(['osd.0', 'osd.1'], 'osd-set-group-noout-osds'), { missing: [] });
  t.deepEqual(await set(['osd.99'], 'osd-set-group-noout-unknown-osd'), { missing: ['osd.99'] });
  const err = await t.throwsAsync(set(['nosuchhost'], 'osd-set-group-noout-unknown'), { instanceOf: CommandError });
  t.is(err.exitCode, 22);
  t.regex(err.stderr, /unable to parse osd id or crush node or device class: "nosuchhost"/);
  t.deepEqual(await unset(['h3'], 'osd-unset-group-noout-host'), { missing: [] });
  t.deepEqual(await unset(['h3'], 'osd-unset-group-noout-host-again'), { missing: [] });
  t.deepEqual(await unset(['osd.0', 'osd.1'], 'osd-unset-group-noout-osds'), { missing: [] });
});

test('ceph osd set-group: flags and names are checked before any call', async (t) => {
  const ceph = adminClient(new FakeRunner());
  await t.throwsAsync(ceph.osdSetGroup(['noout'], ['h3;reboot']), {
    instanceOf: TypeError,
    message: 'osdSetGroup: "h3;reboot" is not a Ceph name',
  });
  await t.throwsAsync(ceph.osdSetGroup(['pause' as 'noout'], ['h3']), {
    instanceOf: TypeError,
    message: /is not one of noout, noin, noup, nodown/,
  });
  await t.throwsAsync(ceph.osdUnsetGroup([], ['h3']), { instanceOf: TypeError, message: 'osdUnsetGroup needs at least one flag' });
  await t.throwsAsync(ceph.osdUnsetGroup(['noout'], []), { instanceOf: TypeError, message: 'osdUnsetGroup needs at least one name' });
});

test("ceph osd noout reader: per-OSD flags from osd dump, a host's flag through osd tree, none once unset", async (t) => {
  const runner = new FakeRunner();
  expectJson(runner, ['osd', 'dump'], 'osd-dump-noout');
  expectJson(runner, ['osd', 'tree'], 'osd-tree-noout');
  expectJson(runner, ['osd', 'dump'], 'osd-dump-unset-down');
  expectJson(runner, ['osd', 'tree'], 'osd-tree-hosts');
  const ceph = adminClient(runner);
  t.deepEqual(await ceph.osdNoout(), { cluster: false, osds: [0, 1], crushNodes: { h3: [3] }, deviceClasses: {}, effective: [0, 1, 3] });
  t.deepEqual(await ceph.osdNoout(), { cluster: false, osds: [], crushNodes: {}, deviceClasses: {}, effective: [] });
  runner.verify();
});

test('ceph recordings under noout: osd.3 down stays in, autoout once noout is gone; health shows OSD_FLAGS', async (t) => {
  const dump = (name: string) => JSON.parse(fixture(name)) as { osds: { osd: number; in: number; state: string[] }[] };
  t.like(
    dump('osd-dump-noout-down').osds.find((o) => o.osd === 3),
    { in: 1, state: ['exists'] },
  );
  t.like(
    dump('osd-dump-unset-down').osds.find((o) => o.osd === 3),
    { in: 0, state: ['autoout', 'exists'] },
  );
  const runner = expectJson(new FakeRunner(), ['health', 'detail'], 'health-detail-noout-down');
  const h = await adminClient(runner).health();
  const flags = h.checks.find((c) => c.code === 'OSD_FLAGS');
  t.is(flags?.message, '3 OSDs or CRUSH {nodes, device-classes} have {NOUP,NODOWN,NOIN,NOOUT} flags set');
  t.deepEqual(flags?.detail, ['osd.0 has flags noout', 'osd.1 has flags noout', 'host h3 has flags noout']);
  t.is(recorded('osd-set-group-noout-unknown-osd').stderr, 'osd.99 does not exist. \n');
});
