// The audit trail of a running Quarry: what a spec file changes is recorded as that file's doing,
// what Quarry makes by itself as Quarry's, beside the API's changes (test/http/audit.test.ts).
import test from 'ava';
import type { AuditEntrySpec } from '../../src/model/audit-kinds.js';
import { networkId } from '../../src/model/network-kinds.js';
import { createMemoryStore } from '../../src/store/index.js';
import { waitFor } from '../lab/harness.js';
import { network, specsLab } from './helpers.js';

type Entry = AuditEntrySpec & { id: string };

test('audit a spec file creating and changing a network is recorded as file:<path>; a no-op re-apply records nothing', async (t) => {
  const q = await specsLab(t, 0, { store: await createMemoryStore({ auditMaxEntries: 10_000 }) });
  const admin = await q.admin();
  const id = networkId('10.0.0.0/16');
  await q.put('site/net.yaml', network('lab', '10.0.0.0/16', '10.0.0.1'));
  await q.until('site/net.yaml', (s) => s.state === 'applied');
  await q.put('site/net.yaml', network('lab', '10.0.0.0/16', '10.0.0.1', '  rangeStart: 10.0.8.1\n  rangeEnd: 10.0.8.200\n'));
  const entries = await waitFor('two entries of the file', async () => {
    const r = await admin.get<{ entries: Entry[] }>(`/audit?actor=${encodeURIComponent('file:site/net.yaml')}`);
    return r.json.entries.length >= 2 ? r.json.entries : undefined;
  });
  t.is(entries.length, 2);
  t.like(entries[1], {
    actor: { type: 'file', name: 'site/net.yaml' },
    action: 'create',
    kind: 'Network',
    objectId: id,
    names: { yamlName: 'lab', file: 'site/net.yaml' },
    generationAfter: 1,
    requestId: null,
  });
  t.like(entries[0], { action: 'update', generationBefore: 1, generationAfter: 2 });
  t.deepEqual(entries[0]?.changedFields, ['/rangeEnd', '/rangeStart']);
  // The same text again (touched): applied, nothing changed, nothing recorded.
  const before = (await admin.get<{ entries: Entry[] }>('/audit?limit=1000')).json.entries.length;
  await q.put('site/net.yaml', network('lab', '10.0.0.0/16', '10.0.0.1', '  rangeStart: 10.0.8.1\n  rangeEnd: 10.0.8.200\n'));
  await q.specs.folder.fileChanged(
    'site/net.yaml',
    network('lab', '10.0.0.0/16', '10.0.0.1', '  rangeStart: 10.0.8.1\n  rangeEnd: 10.0.8.200\n'),
  );
  t.is((await admin.get<{ entries: Entry[] }>('/audit?limit=1000')).json.entries.length, before);
  // What Quarry made by itself at its first start (the Cluster document) is Quarry's.
  const cluster = (await admin.get<{ entries: Entry[] }>('/audit?kind=Cluster')).json.entries;
  t.like(cluster.at(-1), { action: 'create', actor: { type: 'system', name: 'quarry' } });
});
