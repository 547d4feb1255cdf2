// examples/specs applied to the lab: copied into the watched folder, every object it declares
// becomes Ready — the walk-through of examples/README.md, as a test.
import test from 'ava';
import { copyFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { FileConvergence } from '../../src/services/convergence.js';
import { waitFor } from '../lab/harness.js';
import { phaseReady, specsLab } from './helpers.js';

const EXAMPLES = join(process.cwd(), 'examples', 'specs');

test('examples: the lab cluster spec converges, every object it declares Ready', async (t) => {
  const q = await specsLab(t, 3);
  for (const f of await readdir(EXAMPLES)) await copyFile(join(EXAMPLES, f), join(q.dir, f));
  const s = await q.until('lab-cluster.yaml', (x) => x.state === 'applied', 'applied with nothing pending');
  t.is(s.lastError, null);
  const kinds = new Set(s.objects.map((o) => o.kind));
  t.deepEqual([...kinds].sort(), ['Cluster', 'Disk', 'Filesystem', 'Image', 'Network', 'Node', 'RgwUser']);
  const notReady = async () => {
    const status = q.specs.folder.status().find((x) => x.file === 'lab-cluster.yaml')!;
    const docs = await Promise.all(status.objects.map((o) => q.store.mustGet(o.kind, o.id)));
    return docs.filter((d) => !phaseReady(d)).map((d) => `${d.kind} ${d.name}`);
  };
  await waitFor('every object Ready', async () => (await notReady()).length === 0, 60_000).catch(async (err: unknown) => {
    throw new Error(`${(err as Error).message}: ${(await notReady()).join(', ')}`);
  });
  // The same answer from the API: the file says converged, with nothing blocking.
  const c = await q.admin();
  const file = async () => (await c.get<FileConvergence[]>('/specs/status')).json.find((x) => x.file === 'lab-cluster.yaml')!;
  await waitFor('/specs/status says converged', async () => (await file()).converged, 60_000).catch(async (err: unknown) => {
    throw new Error(`${(err as Error).message}: ${JSON.stringify((await file()).blocking)}`);
  });
  t.deepEqual((await file()).blocking, []);
  t.like((await q.store.mustGet('Cluster', 'default')).spec, { publicNetwork: '10.0.0.0/16', poolDefaults: { size: 3, minSize: 2 } });
  const images = (await (await q.admin()).get('/images/downloaded')).json as Array<{ name: string; default: boolean }>;
  t.deepEqual(images, [{ ...images[0]!, name: 'debian-12-amd64', default: true }]);
  const metrics = (await (await q.admin()).get('/ceph/metrics')).json as { osdUp: number };
  t.like(metrics, { monCount: 3 });
  t.is(metrics.osdUp, s.objects.filter((o) => o.kind === 'Disk').length);
});
