// The public render endpoint against the secrets a running Quarry really keeps: keyrings of a
// monitor it created, password hashes, sessions, agent credentials, the JWT signing key. A
// template that dumps its whole context shows none of them; the only secret a render may carry
// is a node's own first agent secret while that node is being installed.
import test from 'ava';
import { kindSchemas } from '../../src/model/schemas.js';
import { Kind, type AgentCredentialSpec } from '../../src/model/kinds.js';
import { CephKind, type KeyringStatus } from '../../src/model/ceph-kinds.js';
import { Client } from './client.js';
import { admin, discoverApproved } from './agent-helpers.js';
import { allActive, startLab, waitFor, type LabQuarry } from '../lab/harness.js';

const SECRET_FIELD = /secret|key|hash|jti|password|token/i;

/** Every string of 16+ characters under a secret-sounding field, in every document. */
async function storedSecrets(q: LabQuarry): Promise<Set<string>> {
  const found = new Set<string>();
  const walk = (v: unknown, field: string): void => {
    if (typeof v === 'string') {
      if (SECRET_FIELD.test(field) && v.length >= 16) found.add(v);
    } else if (Array.isArray(v)) v.forEach((x) => walk(x, field));
    else if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k);
  };
  for (const kind of Object.keys(kindSchemas)) for (const doc of await q.store.list(kind)) walk({ spec: doc.spec, status: doc.status }, '');
  return found;
}

test('templates the public render shows none of the secrets kept in the store', async (t) => {
  const q = await startLab(t, 1);
  const [node] = await allActive(q, 1);
  const c = await admin(q);
  const disk = ((await c.get('/disks')).json as Array<{ id: string; nodeId: string; eligible: boolean }>).find((d) => d.eligible)!;
  t.is((await c.post('/ceph/mon/create', { nodeId: node!.id, diskId: disk.id })).status, 200);
  await waitFor(
    'keyrings with keys',
    async () => (await q.store.list<unknown, KeyringStatus>(CephKind.Keyring)).filter((k) => k.status.key).length >= 2,
    30_000,
  );
  // A machine that is being installed (approved first), so one credential still has its first secret.
  await discoverApproved(q, '02:00:00:00:bb:01');
  t.is((await new Client(q.url).get('/boot/config?mac=02:00:00:00:bb:01')).status, 200);
  const installing = await waitFor('the new node', async () => (await q.nodes()).find((n) => n.spec.macs.includes('02:00:00:00:bb:01')));
  const firstSecret = (await q.store.mustGet<AgentCredentialSpec>(Kind.AgentCredential, installing.id)).spec.initialSecret!;
  const secrets = await storedSecrets(q);
  t.true(secrets.size >= 6, `found ${secrets.size}`);
  t.true(secrets.has(firstSecret));

  const dump = '<%- JSON.stringify(locals) %>';
  t.is((await c.request('PUT', '/templates/dump', { body: dump, headers: { 'content-type': 'text/plain' } })).status, 200);
  const renders: Record<string, string> = {};
  for (const path of [
    '/templates/rendered/dump',
    `/templates/rendered/dump?nodeId=${node!.id}`,
    `/templates/rendered/dump?mac=${node!.spec.macs[0]}`,
    `/templates/rendered/dump?mac=02:00:00:00:bb:01`,
    `/templates/rendered/cloud-init?nodeId=${node!.id}`,
    '/templates/rendered/ceph.conf',
    '/boot/default',
    `/boot/config?mac=${node!.spec.macs[0]}`,
  ]) {
    const r = await new Client(q.url).get(path);
    t.is(r.status, 200, path);
    renders[path] = r.text;
  }
  t.true(renders[`/templates/rendered/dump?nodeId=${node!.id}`]!.includes(node!.spec.hostname));
  for (const [path, text] of Object.entries(renders)) {
    const isInstall = path.endsWith('02:00:00:00:bb:01');
    const shown = [...secrets].filter((s) => text.includes(s) && !(isInstall && s === firstSecret));
    t.deepEqual(shown, [], path);
  }
  // The documented exception: the install render of the machine being installed.
  t.true(renders['/templates/rendered/dump?mac=02:00:00:00:bb:01']!.includes(firstSecret));
});
