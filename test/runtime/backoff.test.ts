import test from 'ava';
import { backoffDelay, defaultBackoff, ManualTimers } from '../../src/runtime/backoff.js';

const exact = { baseMs: 5, capMs: 300_000, jitter: 0 };

test('backoffDelay doubles from the base and stops at the cap', (t) => {
  const table: Array<[number, number]> = [
    [0, 5],
    [1, 10],
    [2, 20],
    [10, 5_120],
    [15, 163_840],
    [16, 300_000],
    [40, 300_000],
    [5_000, 300_000],
  ];
  for (const [failures, expected] of table) {
    t.is(
      backoffDelay(failures, exact, () => 0.5),
      expected,
      `failures=${failures}`,
    );
  }
});

test('backoffDelay keeps jitter within [(1 - jitter) * d, d] and never above the cap', (t) => {
  for (const failures of [0, 3, 8, 20, 100]) {
    const d = Math.min(300_000, 5 * 2 ** failures);
    for (const r of [0, 0.25, 0.5, 0.999]) {
      const delay = backoffDelay(failures, defaultBackoff, () => r);
      t.true(delay <= d && delay >= Math.floor(0.8 * d), `failures=${failures} r=${r} delay=${delay}`);
    }
  }
  t.is(
    backoffDelay(100, defaultBackoff, () => 0),
    300_000,
  );
  t.is(
    backoffDelay(100, defaultBackoff, () => 0.5),
    270_000,
  );
});

test('backoffDelay grows with failures for a fixed random draw', (t) => {
  let last = 0;
  for (let n = 0; n < 17; n++) {
    const delay = backoffDelay(n, defaultBackoff, () => 0.3);
    t.true(delay > last, `failures=${n}`);
    last = delay;
  }
});

test('backoffDelay tolerates out-of-range inputs', (t) => {
  t.is(backoffDelay(-3, exact), 5);
  t.is(
    backoffDelay(2, { baseMs: 5, capMs: 100, jitter: 7 }, () => 2),
    0,
  );
});

test('ManualTimers fires due timers in time order and honours cancel', (t) => {
  const timers = new ManualTimers();
  const fired: string[] = [];
  timers.schedule(() => fired.push('b'), 20);
  timers.schedule(() => fired.push('a'), 10);
  const cancel = timers.schedule(() => fired.push('c'), 15);
  cancel();
  timers.advance(15);
  t.deepEqual(fired, ['a']);
  t.is(timers.now(), 15);
  timers.advance(5);
  t.deepEqual(fired, ['a', 'b']);
});
