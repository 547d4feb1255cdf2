// Issue 16's proof on real Ceph: the bring-up's filesystem declared `state: absent` in a specs
// file is deleted only after an operator says "yes" to a question naming its pools, and then
// leaves no pool behind (`ceph osd pool ls`), nor mon_allow_pool_delete set.
import type { ExecutionContext } from 'ava';
import { rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FS } from './cluster-bringup.js';
import type { NetnsCluster } from './netns-cluster.js';
import { until } from './node-sandbox.js';

interface Pending {
  id: string;
  taskName: string;
  prompt: string;
}

export async function fsDeletedAfterYes(t: ExecutionContext, c: NetnsCluster): Promise<void> {
  const text = [
    'apiVersion: quarry/v1',
    'kind: Filesystem',
    `metadata: { name: ${FS.name} }`,
    'spec:',
    ...Object.entries(FS).map(([k, v]) => `  ${k}: ${v}`),
    '  state: absent',
  ].join('\n');
  const tmp = join(c.dir, 'fs-delete.yaml.tmp');
  await writeFile(tmp, `${text}\n`);
  await rename(tmp, join(c.specsDir, 'fs-delete.yaml'));
  const q = await until(
    'the question before deleting the filesystem',
    () => c.admin.get<Pending[]>('/task/questions/pending').then((r) => r.json.find((p) => p.taskName === 'ceph.fs.delete.confirm')),
    (p) => p !== undefined,
    60_000,
  );
  t.log(q!.prompt);
  t.regex(q!.prompt, new RegExp(`pool ${FS.metadataPool} \\(\\d+ objects?, [^)]+\\) and pool ${FS.dataPool} \\(\\d+ objects?`));
  t.true(
    (await c.ceph.poolList()).some((p) => p.name === FS.dataPool),
    'nothing is deleted before the answer',
  );
  t.is((await c.admin.post(`/task/question/${q!.id}/answer`, { answer: 'yes' })).status, 200);
  const pools = await until(
    'no pool of the filesystem in `ceph osd pool ls`',
    () => c.ceph.poolList(),
    (ps) => !ps.some((p) => p.name === FS.metadataPool || p.name === FS.dataPool),
    120_000,
  );
  t.log(`pools left: ${pools.map((p) => p.name).join(', ')}`);
  t.false((await c.ceph.fsList()).some((f) => f.name === FS.name));
  t.is(await c.ceph.configGet('mon', 'mon_allow_pool_delete'), 'false', 'pool deletion is not left allowed');
  await until(
    'the Filesystem document gone',
    () => c.admin.get<unknown[]>('/ceph/fs').then((r) => r.json.length),
    (n) => n === 0,
    30_000,
  );
}
