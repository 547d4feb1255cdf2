// A node's BMC from a specs file: the password only by reference (passwordFrom: { env }), read
// from Quarry's environment; a plaintext password, a variable outside QUARRY_BMC_* or one that is
// not set refuses the file with an error naming the field, never a password. A file that names
// `bmc` owns it against the API.
import test from 'ava';
import { Kind, type NodeSpec } from '../../src/model/kinds.js';
import type { ProblemBody } from '../http/bodies.js';
import { allActive } from '../lab/harness.js';
import { doc } from './fixtures.js';
import { specsLab } from './helpers.js';

const MAC1 = '52:54:00:00:00:01';
const ENV = 'QUARRY_BMC_TEST_N1';
const SECRET = 'from-env-pw-77';

const node = (bmc: string, extra = '') => doc('Node', 'n1', `match: { mac: "${MAC1}" }\nbmc: ${bmc}${extra}`);

test('specs node bmc: passwordFrom env puts the BMC in the node, sealed, owned against the API; nothing shows the password', async (t) => {
  process.env[ENV] = SECRET;
  t.teardown(() => delete process.env.QUARRY_BMC_TEST_N1);
  const q = await specsLab(t, 1);
  const [n] = await allActive(q, 1);
  await q.put('bmc.yaml', node(`{ address: 198.51.100.2, username: quarry, passwordFrom: { env: ${ENV} } }`, '\nfencing: bmc'));
  await q.until('bmc.yaml', (x) => x.state === 'applied' && x.objects.length > 0);
  const got = await q.store.mustGet<NodeSpec>(Kind.Node, n!.id);
  t.deepEqual(got.spec.bmc, { address: '198.51.100.2', username: 'quarry', password: SECRET });
  t.is(got.spec.fencing, 'bmc');
  t.like(got.metadata.source, { fields: ['role', 'power', 'image', 'daemons', 'maintenance', 'bmc', 'fencing'] });
  const c = await q.admin();
  const r = await c.request<ProblemBody>('PUT', `/nodes/${n!.id}/bmc`, { json: { address: '198.51.100.3', username: 'x', password: 'y' } });
  t.is(r.status, 409);
  t.is(r.json.code, 'SPEC_OWNED');
  // A dry run of the same text changes nothing (the password read again is the same).
  const plan = await c.request<{ updated: unknown[]; created: unknown[] }>('POST', '/specs/plan?file=bmc.yaml', {
    body: node(`{ address: 198.51.100.2, username: quarry, passwordFrom: { env: ${ENV} } }`, '\nfencing: bmc'),
    headers: { 'content-type': 'application/yaml' },
  });
  t.is(plan.status, 200, plan.text);
  t.deepEqual(plan.json.updated, []);
  for (const text of [JSON.stringify(q.events), JSON.stringify(q.specs.folder.status()), plan.text]) t.false(text.includes(SECRET));
});

test('specs node bmc: a plaintext password, a variable outside QUARRY_BMC_ or an unset one refuses the file, naming the field', async (t) => {
  const q = await specsLab(t, 1);
  const [n] = await allActive(q, 1);
  const cases: Array<[string, string, RegExp]> = [
    ['plain.yaml', '{ address: 198.51.100.2, username: quarry, password: hunter2-plain }', /never written in a file/],
    ['other.yaml', '{ address: 198.51.100.2, username: quarry, passwordFrom: { env: SECRETS_KEY } }', /must match pattern/],
    [
      'unset.yaml',
      '{ address: 198.51.100.2, username: quarry, passwordFrom: { env: QUARRY_BMC_NOT_SET } }',
      /has no variable QUARRY_BMC_NOT_SET/,
    ],
    ['none.yaml', '{ address: 198.51.100.2, username: quarry }', /needs its password/],
  ];
  for (const [file, bmc, why] of cases) {
    await q.put(file, node(bmc));
    const s = await q.until(file, (x) => x.state === 'failed', 'refused');
    const text = JSON.stringify(s.lastError);
    t.regex(text, why, file);
    t.regex(text, /\/spec\/bmc/, file);
    t.false(text.includes('hunter2-plain'));
  }
  t.is((await q.store.mustGet<NodeSpec>(Kind.Node, n!.id)).spec.bmc, undefined, 'no file got through');
});
