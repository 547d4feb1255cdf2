// fast-check arbitraries derived from the JSON Schemas of an OpenAPI document: values that fit a
// schema (give or take: "valid-ish", so handlers run) and values that do not (wrong types, huge
// arrays, long strings, unicode, NUL, path traversal, unknown fields).
import fc from 'fast-check';

export type Schema = Record<string, unknown>;

/** Strings an attacker tries first. */
export const NASTY_STRINGS = [
  '',
  ' ',
  '..',
  '../../../../etc/passwd',
  '..%2F..%2Fetc',
  '%2e%2e',
  'a/b',
  'a%2Fb',
  '\u0000',
  'a\u0000b',
  '%00',
  '\\',
  'C:\\Windows',
  '\n',
  'x\r\nSet-Cookie: a=b',
  '<script>alert(1)</script>',
  "'; DROP TABLE x; --",
  '${process.env}',
  '<%= process.env %>',
  '{{7*7}}',
  '\u202e',
  '\ud83d\ude00',
  '\uffff',
  'é',
  '0',
  '-1',
  '1e309',
  'NaN',
  'null',
  'true',
  '[]',
  '{}',
  '__proto__',
  'constructor',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  '127.0.0.1',
  '::1',
  'http://169.254.169.254/',
  'A'.repeat(300),
];

/** Ids that exist in the lab, per format/field, so valid-ish requests reach real objects now and then. */
export interface Pools {
  uuids: string[];
  strings: string[];
}

const nasty = fc.constantFrom(...NASTY_STRINGS);
const longString = fc.integer({ min: 1_000, max: 200_000 }).map((n) => 'x'.repeat(n));
const anyString = fc.string({ unit: 'binary', maxLength: 64 });
// The arrays of finding 10: 100k-150k small invalid items, under the 1 MiB body limit.
const hugeArray = fc
  .integer({ min: 100_001, max: 150_000 })
  .chain((n) => fc.constantFrom(0, '', null, true).map((v) => new Array(n).fill(v) as unknown[]));

function stringArb(schema: Schema, pools: Pools): fc.Arbitrary<string> {
  const options: Array<fc.Arbitrary<string>> = [];
  if (schema.format === 'uuid') {
    options.push(fc.uuid({ version: 4 }));
    // Half the time an id that exists, so handlers get past their 404s.
    if (pools.uuids.length) options.push(fc.constantFrom(...pools.uuids), fc.constantFrom(...pools.uuids));
  } else if (schema.format === 'date-time') {
    options.push(fc.date({ noInvalidDate: true, min: new Date(0), max: new Date(4e12) }).map((d) => d.toISOString()));
  } else if (schema.format === 'email') {
    options.push(fc.emailAddress());
  } else if (typeof schema.pattern === 'string') {
    const known = pools.strings.filter((x) => new RegExp(schema.pattern as string, 'u').test(x));
    if (known.length) options.push(fc.constantFrom(...known), fc.constantFrom(...known));
    try {
      options.push(fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length <= Number(schema.maxLength ?? 4096)));
    } catch {
      // a pattern fast-check cannot invert: plain strings below
    }
  }
  const min = Number(schema.minLength ?? 0);
  const max = Math.min(Number(schema.maxLength ?? 32), min + 32);
  options.push(fc.string({ minLength: min, maxLength: Math.max(min, max) }));
  return fc.oneof(...options);
}

/** A value meant to satisfy `schema` (patterns, formats, bounds), drawing ids from the pools. */
export function validish(schema: Schema | undefined, pools: Pools, depth = 0): fc.Arbitrary<unknown> {
  if (!schema || typeof schema !== 'object' || depth > 6) return fc.jsonValue({ maxDepth: 2 });
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  for (const k of ['anyOf', 'oneOf'] as const) {
    if (Array.isArray(schema[k])) return fc.oneof(...(schema[k] as Schema[]).map((s) => validish(s, pools, depth + 1)));
  }
  const type = Array.isArray(schema.type) ? (schema.type as string[])[0] : schema.type;
  switch (type) {
    case 'string':
      return stringArb(schema, pools);
    case 'integer': {
      const min = typeof schema.minimum === 'number' ? schema.minimum : -1_000;
      const max = typeof schema.maximum === 'number' ? schema.maximum : min + 100_000;
      return fc.integer({ min, max });
    }
    case 'number':
      return fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e6, max: 1e6 });
    case 'boolean':
      return fc.boolean();
    case 'null':
      return fc.constant(null);
    case 'array': {
      const min = Number(schema.minItems ?? 0);
      const max = Math.max(min, Math.min(Number(schema.maxItems ?? 4), min + 4));
      return fc.array(validish(schema.items as Schema, pools, depth + 1), { minLength: min, maxLength: max });
    }
    case 'object':
    default: {
      const props = (schema.properties ?? {}) as Record<string, Schema>;
      const required = (schema.required ?? []) as string[];
      if (!Object.keys(props).length) return fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 1 }), { maxKeys: 3 });
      const entries = Object.fromEntries(Object.entries(props).map(([k, s]) => [k, validish(s, pools, depth + 1)]));
      return fc.record(entries, { requiredKeys: required.filter((k) => k in props) });
    }
  }
}

/** A value that most likely fails `schema`: the wrong type, a nasty or huge string, a huge array,
 * an object with unknown fields, or a valid-ish value with one field broken. */
export function invalid(schema: Schema | undefined, pools: Pools, depth = 0): fc.Arbitrary<unknown> {
  const wrong = fc.oneof(
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double(),
    nasty,
    anyString,
    fc.constant([]),
    fc.constant({}),
    fc.array(fc.jsonValue({ maxDepth: 1 }), { maxLength: 5 }),
    fc.constant(Number.MAX_SAFE_INTEGER),
    fc.constant(-1),
  );
  const options: Array<fc.WeightedArbitrary<unknown>> = [
    { arbitrary: wrong, weight: 6 },
    { arbitrary: nasty, weight: 4 },
    { arbitrary: longString, weight: 1 },
    { arbitrary: hugeArray, weight: 1 },
  ];
  const props = (schema?.properties ?? {}) as Record<string, Schema>;
  if (schema && depth < 3 && Object.keys(props).length) {
    // One field broken (or missing, or one unknown field added) in an otherwise fitting object.
    const keys = Object.keys(props);
    const broken = fc
      .constantFrom(...keys)
      .chain((k) =>
        fc
          .tuple(validish(schema, pools, depth), fc.oneof(invalid(props[k], pools, depth + 1), wrong))
          .map(([v, bad]) => ({ ...(v as object), [k]: bad })),
      );
    const extra = fc
      .tuple(
        validish(schema, pools, depth),
        fc.oneof(fc.constantFrom('__proto__', 'extra', 'isAdmin', 'constructor'), fc.string({ maxLength: 12 })),
      )
      .map(([v, k]) => Object.assign(Object.create(null), v, { [k]: 1 }) as unknown);
    options.push({ arbitrary: broken, weight: 6 }, { arbitrary: extra, weight: 3 });
  }
  if (schema?.type === 'array' && schema.items) {
    options.push({ arbitrary: fc.array(invalid(schema.items as Schema, pools, depth + 1), { minLength: 1, maxLength: 5 }), weight: 3 });
    options.push({ arbitrary: hugeArray, weight: 4 });
  }
  const arrays = Object.keys(props).filter((k) => props[k]?.type === 'array');
  if (schema && depth < 3 && arrays.length) {
    // Every array field of an otherwise fitting object made huge.
    options.push({
      arbitrary: fc
        .tuple(validish(schema, pools, depth), hugeArray)
        .map(([v, big]) => ({ ...(v as object), ...Object.fromEntries(arrays.map((k) => [k, big])) })),
      weight: 3,
    });
  }
  return fc.oneof(...options);
}
