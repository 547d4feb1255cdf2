// clean() must give what a JSON round trip gives, keep strings as they are, and refuse what
// JSON.stringify refuses.
import test from 'ava';
import { InputError } from '../../src/errors.js';
import { clean } from '../../src/store/stored.js';

const roundTrip = (v: unknown): unknown => JSON.parse(JSON.stringify(v)) as unknown;

test('clean copies as a JSON round trip does', (t) => {
  const when = new Date('2026-01-01T00:00:00Z');
  const inputs: unknown[] = [
    { a: 1, b: 'x', c: [1, undefined, () => 1, Symbol('s'), NaN, -0, Infinity], d: undefined, e: null, f: { g: [[], {}] } },
    [undefined, { x: undefined }],
    { when, nested: { toJSON: () => ({ replaced: true }) }, keyed: { toJSON: (k: string) => k } },
    { boxed: [new Number(3), new String('s'), new Boolean(false)] },
    'plain',
    0,
    false,
    null,
    { 'weird key "\\': 'ünï ☃', '': 1 },
    { [Symbol('s')]: 1, kept: { [Symbol('t')]: 2, n: 3 } },
    { first: 1, dropped: undefined, later: { deep: [undefined] }, last: () => 1 },
    // eslint-disable-next-line no-sparse-arrays -- an array with a hole is the case under test
    [1, , 3],
  ];
  for (const v of inputs) t.deepEqual(clean(v, '/x'), roundTrip(v));
  const src = { a: { b: [1] } };
  const copy = clean(src, '/x');
  t.not(copy, src);
  t.not(copy.a, src.a);
  t.not(copy.a.b, src.a.b);
});

test('clean keeps string values instead of re-making them', (t) => {
  // String identity is not observable from JS, but its cost is: a JSON round trip of a 16 MB
  // string leaves a second 16 MB string in the copy (and a third in between).
  const big = 'x'.repeat(16 * 1024 * 1024);
  const before = process.memoryUsage().heapUsed;
  const out = clean({ conditions: [{ message: big }] }, '/status');
  const grown = process.memoryUsage().heapUsed - before;
  t.is(out.conditions[0]?.message, big);
  t.true(grown < 4 * 1024 * 1024, `the copy allocated ${(grown / 2 ** 20).toFixed(1)} MB`);
});

test('clean refuses what JSON cannot hold, and a missing value', (t) => {
  const cyclic: Record<string, unknown> = {};
  cyclic.self = cyclic;
  t.throws(() => clean(cyclic, '/spec'), { instanceOf: InputError, message: /\/spec is not JSON: Converting circular structure/ });
  t.throws(() => clean({ n: 1n }, '/spec'), { instanceOf: InputError, message: /BigInt/ });
  t.throws(() => clean(undefined, '/spec'), { instanceOf: InputError, message: '/spec is required' });
  t.throws(() => clean(() => 1, '/spec'), { instanceOf: InputError, message: '/spec is required' });
  // The same object twice (not a cycle) is fine, as with JSON.stringify.
  const shared = { k: 1 };
  t.deepEqual(clean({ a: shared, b: shared }, '/spec'), { a: { k: 1 }, b: { k: 1 } });
});
