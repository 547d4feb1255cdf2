import test from 'ava';
import type { Condition } from '../../src/model/conditions.js';
import {
  blockedCondition,
  degradedCondition,
  getCondition,
  isFalse,
  isTrue,
  progressingCondition,
  readyCondition,
  removeCondition,
  setCondition,
  setConditions,
  withConditions,
} from '../../src/runtime/conditions.js';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:01:00.000Z';

test('setCondition keeps lastTransitionTime when the status is unchanged', (t) => {
  const first = setCondition([], readyCondition(false, 'Booting', 'waiting for agent'), 1, T0);
  const second = setCondition(first, readyCondition(false, 'Installing', 'writing image'), 2, T1);
  t.is(second[0]?.lastTransitionTime, T0);
  t.is(second[0]?.reason, 'Installing');
  t.is(second[0]?.observedGeneration, 2);
});

test('setCondition moves lastTransitionTime when the status flips', (t) => {
  const first = setCondition(undefined, readyCondition(false, 'Booting'), 1, T0);
  const second = setCondition(first, readyCondition(true, 'Active'), 1, T1);
  t.is(second[0]?.lastTransitionTime, T1);
  t.is(second[0]?.status, 'True');
});

test('setCondition returns a new array deep-equal to the old one on a no-op', (t) => {
  const first = setCondition([], blockedCondition(true, 'NoQuorum', 'waiting for monitor quorum'), 3, T0);
  const again = setCondition(first, blockedCondition(true, 'NoQuorum', 'waiting for monitor quorum'), 3, T1);
  t.not(again, first);
  t.deepEqual(again, first);
  t.is(again[0], first[0], 'an unchanged condition keeps its identity');
});

test('setCondition appends new types and keeps the order of others', (t) => {
  const list = setConditions([], [readyCondition(false, 'A'), progressingCondition(true, 'B'), degradedCondition(false, 'C')], 1, T0);
  const updated = setCondition(list, progressingCondition(false, 'Done'), 1, T1);
  t.deepEqual(
    updated.map((c) => [c.type, c.status]),
    [
      ['Ready', 'False'],
      ['Progressing', 'False'],
      ['Degraded', 'False'],
    ],
  );
  t.is(updated[0], list[0]);
});

test('getCondition isTrue and isFalse read one condition by type', (t) => {
  const list: Condition[] = setConditions([], [readyCondition(true, 'Ok'), degradedCondition(false, 'Fine')], 1, T0);
  t.is(getCondition(list, 'Ready')?.reason, 'Ok');
  t.true(isTrue(list, 'Ready'));
  t.false(isTrue(list, 'Degraded'));
  t.true(isFalse(list, 'Degraded'));
  t.false(isTrue(undefined, 'Ready'));
  t.is(getCondition(list, 'Blocked'), undefined);
  t.deepEqual(
    removeCondition(list, 'Ready').map((c) => c.type),
    ['Degraded'],
  );
});

test('withConditions sets conditions and observedGeneration and is stable on repeat', (t) => {
  const status = { phase: 'active' };
  const once = withConditions(status, [readyCondition(true, 'Active', 'node is up')], 4, T0);
  const twice = withConditions(once, [readyCondition(true, 'Active', 'node is up')], 4, T1);
  t.is(once.observedGeneration, 4);
  t.is(once.phase, 'active');
  t.deepEqual(twice, once);
});

test('condition builders name their type and map booleans to status', (t) => {
  t.deepEqual(blockedCondition(true, 'Gate', 'msg'), { type: 'Blocked', status: 'True', reason: 'Gate', message: 'msg' });
  t.is(readyCondition(false, 'x').status, 'False');
  t.is(progressingCondition(true, 'x').type, 'Progressing');
  t.is(degradedCondition(true, 'x').type, 'Degraded');
});
