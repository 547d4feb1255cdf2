import test from 'ava';
import { Fleet, staleSweepEveryMs } from '../../src/fleet/fleet.js';
import { ManualClock } from '../../src/model/clock.js';
import { report } from '../builders.js';

const HB = 10_000;

function fleet(): { f: Fleet; clock: ManualClock; woken: string[] } {
  const clock = new ManualClock();
  const f = new Fleet(clock, HB);
  const woken: string[] = [];
  f.onChange((id) => woken.push(id));
  return { f, clock, woken };
}

test('fleet sweep wakes a node once when its last report goes stale, and not while it is fresh', (t) => {
  const { f, clock, woken } = fleet();
  f.report('a', report());
  f.report('b', report());
  woken.length = 0;
  clock.advance(HB);
  t.is(f.sweep(), 0, 'exactly at the deadline a report is still fresh');
  f.report('b', report());
  clock.advance(1);
  t.is(f.sweep(), 1);
  t.deepEqual(woken, ['a']);
  t.is(f.sweep(), 0, 'a silence is told once');
  clock.advance(HB);
  t.is(f.sweep(), 1);
  t.deepEqual(woken, ['a', 'b']);
});

test('fleet sweep: a report after a silence wakes the node, and its next silence is told again', (t) => {
  const { f, clock, woken } = fleet();
  f.report('a', report());
  clock.advance(HB + 1);
  f.sweep();
  woken.length = 0;
  f.report('a', report());
  t.deepEqual(woken, ['a'], 'back from a silence');
  clock.advance(HB + 1);
  t.is(f.sweep(), 1);
  f.forget('a');
  clock.advance(HB + 1);
  t.is(f.sweep(), 0, 'a forgotten node is not swept');
});

test('fleet sweep runs every 5 % of the heartbeat timeout, between 50 ms and 1 s', (t) => {
  t.is(staleSweepEveryMs(15_000), 750);
  t.is(staleSweepEveryMs(600_000), 1_000);
  t.is(staleSweepEveryMs(500), 50);
});

test('fleet: the first report heard live after a restore wakes the node even when it says nothing new; the next does not', (t) => {
  const { f, clock, woken } = fleet();
  const r = report();
  f.restore('a', { lastReportAt: clock.now(), report: r, address: null });
  t.deepEqual(woken, [], 'a restore wakes nothing: the loops look at every node as they start');
  clock.advance(1_000);
  f.report('a', r);
  t.deepEqual(woken, ['a'], 'what waited for a report since the election goes on now');
  clock.advance(1_000);
  f.report('a', r);
  t.deepEqual(woken, ['a']);
});
