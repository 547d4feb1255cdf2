import test from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ensureCluster } from '../../src/services/cluster.js';
import { MasterCephFiles } from '../../src/services/ceph-files.js';
import { defaultTemplatesDir } from '../../src/render/ceph-conf.js';
import { fileTemplates } from '../../src/render/template-file.js';
import { createMemoryStore } from '../../src/store/index.js';
import { saveKey } from '../../reconcilers/shared/keys.js';

test('master ceph files: calls at once each bring the conf up to date, and leave no temporary file', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'qceph-master-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const store = await createMemoryStore();
  await ensureCluster(store);
  // One instance per CLI (ceph, radosgw-admin), several calls of each in flight.
  const files = [
    new MasterCephFiles(store, dir, fileTemplates(defaultTemplatesDir)),
    new MasterCephFiles(store, dir, fileTemplates(defaultTemplatesDir)),
  ];
  await Promise.all(Array.from({ length: 8 }, (_, i) => files[i % 2]!.sync()));
  t.regex(await readFile(join(dir, 'ceph.conf'), 'utf8'), /^fsid = [0-9a-f-]{36}$/m);
  t.deepEqual(
    (await readdir(dir)).filter((f) => f.endsWith('.tmp')),
    [],
  );
});

test('master ceph files are owner-only, and the plaintext admin keyring is gone once closed', async (t) => {
  const dir = join(await mkdtemp(join(tmpdir(), 'qceph-master-')), 'ceph');
  t.teardown(() => rm(dirname(dir), { recursive: true, force: true }));
  const store = await createMemoryStore();
  await ensureCluster(store);
  const key = `${randomBytes(28).toString('base64').slice(0, 38)}==`;
  await saveKey(store, { entity: 'client.admin', nodeId: null, caps: {} }, key);
  const files = new MasterCephFiles(store, dir, fileTemplates(defaultTemplatesDir));
  await files.sync();
  const keyring = join(dir, 'ceph.client.admin.keyring');
  t.true((await readFile(keyring, 'utf8')).includes(key));
  t.is((await stat(dir)).mode & 0o777, 0o700);
  t.is((await stat(keyring)).mode & 0o777, 0o600);
  t.is((await stat(join(dir, 'ceph.conf'))).mode & 0o777, 0o600);
  await files.close();
  await t.throwsAsync(stat(keyring), { code: 'ENOENT' });
  await files.sync();
  t.true((await readFile(keyring, 'utf8')).includes(key), 'written again from the store on the next call');
});
