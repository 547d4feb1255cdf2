// The watched folder with a running watcher: files added, changed, renamed, deleted, written in
// two goes, broken, or hostile. A file is applied whole or not at all, and never affects another.
import test from 'ava';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { NetworkKind, networkId, type NetworkSpec } from '../../src/model/network-kinds.js';
import { StorageKind, filesystemId } from '../../src/model/storage-kinds.js';
import { waitFor } from '../lab/harness.js';
import { bomb, doc, files } from './fixtures.js';
import { ENO1, ENO2, network, specsLab } from './helpers.js';

const FS = doc('Filesystem', 'cephfs', 'name: cephfs\nmetadataPool: cephfs_metadata\ndataPool: cephfs_data');

test('folder: a file added, changed, renamed and deleted is applied, updated, handed over and pruned', async (t) => {
  const q = await specsLab(t, 0);
  const id = networkId('10.0.0.0/16');
  await q.put('net.yaml', network('lab', '10.0.0.0/16', '10.0.0.1'));
  await q.until('net.yaml', (s) => s.state === 'applied');
  const created = await q.store.mustGet<NetworkSpec>(NetworkKind.Network, id);
  t.like(created.spec, { cidr: '10.0.0.0/16', gateway: '10.0.0.1', dnsServers: ['10.0.0.1'], nicId: ENO1 });
  t.like(created.metadata.source, { type: 'file', file: 'net.yaml', document: 0 });
  t.deepEqual(q.specs.folder.status().find((s) => s.file === 'net.yaml')?.objects, [
    { kind: 'Network', id, name: '10.0.0.0/16', document: 0 },
  ]);

  await q.put('net.yaml', network('lab', '10.0.0.0/16', '10.0.0.1', '  rangeStart: 10.0.8.1\n  rangeEnd: 10.0.8.200\n'));
  const changed = await waitFor('range changed', async () => {
    const n = await q.store.get<NetworkSpec>(NetworkKind.Network, id);
    return n?.spec.rangeStart === '10.0.8.1' ? n : undefined;
  });
  t.is(changed.metadata.generation, 2);

  await q.move('net.yaml', 'site/net.yaml');
  const moved = await waitFor('owned by the new name', async () => {
    const n = await q.store.get<NetworkSpec>(NetworkKind.Network, id);
    return n?.metadata.source?.file === 'site/net.yaml' && !q.specs.folder.status().some((s) => s.file === 'net.yaml') ? n : undefined;
  });
  t.is(moved.spec.rangeStart, '10.0.8.1', 'the same network, not a new one');

  await q.remove('site/net.yaml');
  await waitFor('pruned', async () => (await q.store.get(NetworkKind.Network, id)) === undefined);
  // A removed file that left nothing behind is forgotten.
  await waitFor('forgotten', () => !q.specs.folder.status().some((s) => s.file === 'site/net.yaml'));
  t.pass();
});

test('folder: a file caught half-written is applied once complete', async (t) => {
  const q = await specsLab(t, 0);
  const text = files(network('lab', '10.0.0.0/16', '10.0.0.1'), FS);
  const fh = await open(join(q.dir, 'half.yaml'), 'w');
  await fh.write(text.slice(0, text.length / 2));
  await fh.sync();
  await new Promise((r) => setTimeout(r, 10));
  await fh.write(text.slice(text.length / 2));
  await fh.close();
  const s = await q.until('half.yaml', (x) => x.state === 'applied' && x.objects.length === 2);
  t.is(s.lastError, null);
  t.truthy(await q.store.get(StorageKind.Filesystem, filesystemId('cephfs')));
  t.truthy(await q.store.get(NetworkKind.Network, networkId('10.0.0.0/16')));
});

test('folder: a bad document among good ones changes nothing, is reported where it is, and leaves other files alone', async (t) => {
  const q = await specsLab(t, 0);
  await q.put('good.yaml', network('lab', '10.0.0.0/16', '10.0.0.1'));
  await q.until('good.yaml', (s) => s.state === 'applied');
  const bad = network('other', '10.9.0.0/16', '10.9.0.1').replace(`nicId: ${ENO1}`, 'nicId: not-a-uuid');
  await q.put('mixed.yaml', files(FS, bad));
  const s = await q.until('mixed.yaml', (x) => x.state === 'failed');
  t.deepEqual(
    s.lastError?.errors.map(({ document, line, column, field }) => ({ document, line, column, field })),
    [{ document: 1, line: 16, column: 10, field: '/spec/nicId' }],
  );
  t.is(await q.store.get(StorageKind.Filesystem, filesystemId('cephfs')), undefined, 'the good document of the bad file was not applied');
  t.is(q.specs.folder.status().find((x) => x.file === 'good.yaml')?.state, 'applied');
  const event = q.events.find((e) => e.type === 'specs.failed' && (e.payload as { file: string }).file === 'mixed.yaml');
  t.like(event?.payload, { file: 'mixed.yaml', errors: [{ file: 'mixed.yaml', document: 1, line: 16, field: '/spec/nicId' }] });

  // A valid nicId, but the interface good.yaml's network serves: refused as the API refuses it.
  await q.put('mixed.yaml', files(FS, network('other', '10.9.0.0/16', '10.9.0.1')));
  const clash = await q.until('mixed.yaml', (x) => x.lastError?.errors.some((e) => /NIC_IN_USE/.test(e.message)) ?? false);
  t.like(clash.lastError?.errors[0], { document: 1, field: '/spec/cidr' });
  t.is(await q.store.get(StorageKind.Filesystem, filesystemId('cephfs')), undefined);
  // On the other interface, the file applies whole.
  await q.put('mixed.yaml', files(FS, network('other', '10.9.0.0/16', '10.9.0.1').replace(ENO1, ENO2)));
  await q.until('mixed.yaml', (x) => x.state === 'applied' && x.objects.length === 2);
});

test('folder: a YAML bomb is refused on its aliases and nothing else suffers', async (t) => {
  const q = await specsLab(t, 0);
  await q.put('bomb.yaml', bomb(12));
  await q.put('good.yaml', network('lab', '10.0.0.0/16', '10.0.0.1'));
  const s = await q.until('bomb.yaml', (x) => x.state === 'failed');
  t.regex(s.lastError?.errors[0]?.message ?? '', /alias/i);
  await q.until('good.yaml', (x) => x.state === 'applied');
});

test('folder: template settings from a file; the API may no longer change them, a source still', async (t) => {
  const q = await specsLab(t, 0);
  await q.put('tpl.yaml', doc('Template', 'ceph.conf', 'path: /etc/ceph/ceph.conf\npostHook: systemctl reload ceph.target'));
  await q.until('tpl.yaml', (s) => s.state === 'applied');
  const c = await q.admin();
  const listed = ((await c.get('/templates')).json as Array<{ name: string; path: string; postHook: string }>).find(
    (x) => x.name === 'ceph.conf',
  );
  t.like(listed, { path: '/etc/ceph/ceph.conf', postHook: 'systemctl reload ceph.target' });
  const refused = await c.request('PUT', '/templates/ceph.conf/settings', { json: { postHook: '' } });
  t.is(refused.status, 409);
  t.like(refused.json, { code: 'SPEC_OWNED' });
  t.regex((refused.json as { detail: string }).detail, /postHook is owned by the specs file tpl\.yaml/);
  await q.put('bad-tpl.yaml', doc('Template', 'no-such-template', 'path: /x'));
  const bad = await q.until('bad-tpl.yaml', (s) => s.state === 'failed');
  t.like(bad.lastError?.errors[0], { field: '/metadata/name', line: 4, column: 9 });
});
