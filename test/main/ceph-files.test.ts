import test from 'ava';
import { mkdtemp, readFile, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureCluster } from '../../src/main/ceph.js';
import { MasterCephFiles } from '../../src/main/ceph-files.js';
import { defaultTemplatesDir } from '../../src/render/ceph-conf.js';
import { fileTemplates } from '../../src/render/template-file.js';
import { createMemoryStore } from '../../src/store/index.js';

test('master ceph files: calls at once each bring the conf up to date, and leave no temporary file', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'qceph-master-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const store = await createMemoryStore();
  await ensureCluster(store);
  // One instance per CLI (ceph, radosgw-admin), several calls of each in flight.
  const files = [new MasterCephFiles(store, dir, fileTemplates(defaultTemplatesDir)), new MasterCephFiles(store, dir, fileTemplates(defaultTemplatesDir))];
  await Promise.all(Array.from({ length: 8 }, (_, i) => files[i % 2]!.sync()));
  t.regex(await readFile(join(dir, 'ceph.conf'), 'utf8'), /^fsid = [0-9a-f-]{36}$/m);
  t.deepEqual((await readdir(dir)).filter((f) => f.endsWith('.tmp')), []);
});
