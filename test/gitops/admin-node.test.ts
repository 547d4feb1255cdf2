// An admin node from a specs file: `adminKeyring: true` makes the node's agent be handed
// client.admin; a file that names the flag owns it, one that does not leaves it to the API, and
// a file that goes away takes the privilege with it.
import test from 'ava';
import { Kind, type NodeSpec } from '../../src/model/kinds.js';
import { allActive, waitFor } from '../lab/harness.js';
import { doc } from './fixtures.js';
import { specsLab } from './helpers.js';

const MAC1 = '52:54:00:00:00:01';

test('specs admin node: adminKeyring in a file sets the flag, owns it against the API, and is dropped with the file', async (t) => {
  const q = await specsLab(t, 1);
  const [n] = await allActive(q, 1);
  const c = await q.admin();
  await q.put('admin.yaml', doc('Node', 'n1', `match: { mac: "${MAC1}" }\nadminKeyring: true`));
  await q.until('admin.yaml', (x) => x.state === 'applied' && x.objects.length > 0);
  const got = await q.store.mustGet<NodeSpec>(Kind.Node, n!.id);
  t.true(got.spec.adminKeyring);
  t.like(got.metadata.source, { fields: ['role', 'power', 'image', 'daemons', 'maintenance', 'adminKeyring'] });
  const r = await c.post(`/ceph/nodes/${n!.id}/admin-keyring`, { adminKeyring: false });
  t.is(r.status, 409);
  t.is((r.json as { code: string }).code, 'SPEC_OWNED');
  t.true((await q.store.mustGet<NodeSpec>(Kind.Node, n!.id)).spec.adminKeyring);
  await q.remove('admin.yaml');
  await waitFor(
    'the admin flag dropped with its file',
    async () => (await q.store.mustGet<NodeSpec>(Kind.Node, n!.id)).spec.adminKeyring === undefined,
  );
});

test('specs admin node: a file that does not name adminKeyring leaves it to the API', async (t) => {
  const q = await specsLab(t, 1);
  const [n] = await allActive(q, 1);
  const c = await q.admin();
  await q.put('plain.yaml', doc('Node', 'n1', `match: { mac: "${MAC1}" }`));
  await q.until('plain.yaml', (x) => x.state === 'applied' && x.objects.length > 0);
  t.deepEqual((await c.post(`/ceph/nodes/${n!.id}/admin-keyring`, { adminKeyring: true })).json, { status: 'updated' });
  t.true((await q.store.mustGet<NodeSpec>(Kind.Node, n!.id)).spec.adminKeyring);
});
