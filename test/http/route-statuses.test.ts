// The statuses the route layer documents by itself follow from how a route is declared: what
// it authenticates with, whether it takes a body or path parameters. The fuzzer (test/fuzz)
// checks the other half: every status an operation answers is one its entry documents.
import test from 'ava';
import { problemStatuses, route, type AnyRoute } from '../../src/http/route.js';
import { overLimit } from '../../src/http/validation.js';
import { MAX_FIELD_ERRORS, ValidationError, toFieldErrors } from '../../src/model/validate.js';
import { problem } from '../../src/http/problem.js';

const def = (over: Partial<AnyRoute>): AnyRoute =>
  route<unknown, unknown, unknown>({
    method: 'GET',
    path: '/x',
    summary: 'x',
    response: { description: 'x' },
    handler: () => ({}),
    ...over,
  });

test('route statuses follow from the declaration: auth, body, path parameters, S3, signed links, declared errors', (t) => {
  t.deepEqual(
    problemStatuses(def({ public: true })),
    [400, 421, 500],
    'a public read: an unknown query parameter, a foreign Host, or a fault',
  );
  t.deepEqual(problemStatuses(def({})), [400, 401, 403, 421, 500], 'a session read: no session, an agent or a user of the wrong sort');
  t.deepEqual(problemStatuses(def({ method: 'POST', admin: true, body: { type: 'object' } })), [400, 401, 403, 413, 415, 421, 500]);
  t.deepEqual(problemStatuses(def({ path: '/x/{id}' })), [400, 401, 403, 404, 421, 500]);
  t.deepEqual(problemStatuses(def({ s3: true })), [400, 401, 403, 421, 500, 503]);
  t.deepEqual(problemStatuses(def({ signed: true })), [400, 401, 421, 500], 'a wrong link is 401; no session, so no 403');
  t.deepEqual(
    problemStatuses(def({ public: true, method: 'POST', errors: [401, 429] })),
    [400, 401, 403, 413, 415, 421, 429, 500],
    'a login declares its own 401',
  );
});

test('validation limits an array over maxItems is found without looking at its items, with the code its schema names', (t) => {
  const schema = {
    type: 'object',
    properties: {
      ids: { type: 'array', maxItems: 3, 'x-limit-code': 'TOO_MANY', items: { type: 'string' } },
      nested: { type: 'object', properties: { list: { type: 'array', maxItems: 1 } } },
    },
  };
  t.like(overLimit(schema, { ids: new Array(200_000).fill(0) }, '/body'), { code: 'TOO_MANY', error: { path: '/body/ids' } });
  t.like(overLimit(schema, { ids: [], nested: { list: [1, 2] } }, '/body'), { code: undefined, error: { path: '/body/nested/list' } });
  t.is(overLimit(schema, { ids: ['a', 'b', 'c'] }, '/body'), null);
});

test('validation errors are cut to the first MAX_FIELD_ERRORS with the total counted, and long paths are cut', (t) => {
  const many = Array.from({ length: 50_000 }, (_, i) => ({
    instancePath: `/f${i}`,
    keyword: 'type',
    message: 'must be string',
    params: {},
    schemaPath: '',
  }));
  const fields = toFieldErrors(many, '/body');
  t.is(fields.length, MAX_FIELD_ERRORS);
  const err = new ValidationError('invalid request', fields, many.length);
  const p = problem(400, err.code, err.message, err.errors, err.errorCount);
  t.is(p.errors?.length, MAX_FIELD_ERRORS);
  t.is(p.errorCount, 50_000);
  t.regex(p.detail, /and 49997 more/);
  const long = toFieldErrors(
    [{ instancePath: '', keyword: 'additionalProperties', params: { additionalProperty: 'k'.repeat(100_000) }, schemaPath: '' }],
    '/body',
  );
  t.true((long[0]?.path.length ?? 0) <= 201);
});
