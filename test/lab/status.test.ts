// Convergence against the lab: GET /status says converged once everything declared runs, a
// killed OSD makes its disk not Ready with Ceph's OSD_DOWN attached, and a specs file whose
// object is blocked says applied but not converged, with the reason. One lab at a time.
import test from 'ava';
import type { FileConvergence, StatusSummary } from '../../src/services/convergence.js';
import { specsLab } from '../gitops/helpers.js';
import { cluster, diskDocs, eligible } from './ceph-cluster.js';
import { waitFor } from './harness.js';

test.serial('status a converged lab says converged; a killed OSD makes its disk not Ready, listed with OSD_DOWN', async (t) => {
  const { q, c, ids } = await cluster(t);
  await c.post('/ceph/mgr', { nodeId: ids[0] });
  // On lab machine 3, whose restarts the test makes fail below.
  const third = (await q.nodeOf(3)).id;
  const target = (await diskDocs(q)).find((d) => d.spec.nodeId === third && eligible(d))!;
  await c.post('/invoke/disk', { operation: 'ceph.create-osd', diskIds: [target.id] });
  const get = async () => (await c.get<StatusSummary>('/status')).json;
  const converged = await waitFor('GET /status says converged', async () => ((await get()).converged ? get() : undefined), 60_000).catch(
    async (err: unknown) => {
      throw new Error(`${(err as Error).message}: ${JSON.stringify((await get()).blocked)}`);
    },
  );
  t.is(converged.blockedCount, 0);
  const count = (s: StatusSummary, kind: string) => s.convergence.find((x) => x.kind === kind)!;
  t.like(count(converged, 'Node'), { ready: 3, total: 3 });
  t.like(count(converged, 'Daemon'), { ready: 4, total: 4 }, 'three monitors and a manager');
  t.is(count(converged, 'Disk').ready, count(converged, 'Disk').total);
  const details = (
    await c.get<Array<{ id: string; ready: { ready: boolean }; daemonsReady: Array<{ type: string; ready: boolean }> }>>('/nodes/details')
  ).json;
  const first = details.find((n) => n.id === ids[0])!;
  t.true(first.ready.ready);
  t.deepEqual(
    first.daemonsReady.map((d) => d.ready),
    [true, true],
    '/nodes/details: its monitor and manager, each Ready',
  );

  const osdId = (await diskDocs(q)).find((d) => d.id === target.id)!.status.osdId!;
  q.lab!.failNext(3, 'ceph.daemon.restart', 1_000);
  q.lab!.ceph.killOsd(osdId);
  const down = await waitFor('the disk blocked with OSD_DOWN', async () => {
    const s = await get();
    const d = s.blocked.find((b) => b.id === target.id);
    return d?.checks.some((x) => x.code === 'OSD_DOWN') ? { s, d } : undefined;
  });
  t.false(down.s.converged);
  t.is(down.d.kind, 'Disk');
  t.regex(down.d.checks.find((x) => x.code === 'OSD_DOWN')!.detail[0]!, new RegExp(`^osd\\.${osdId} `));
  t.deepEqual(
    down.s.health.checks.find((x) => x.code === 'OSD_DOWN')?.objects.map((o) => o.id),
    [target.id],
  );
  // The OSD loop sees it from the agent's report, on its own time: its own Ready goes False too.
  await waitFor(
    "the disk's own Ready condition says False",
    async () => (await diskDocs(q)).find((d) => d.id === target.id)!.status.conditions?.find((x) => x.type === 'Ready')?.status === 'False',
  );
  q.lab!.machine(3).faults.failNext.delete('ceph.daemon.restart');
});

test.serial('status a specs file whose object is blocked says applied but not converged, with the reason', async (t) => {
  const q = await specsLab(t, 0);
  const fs = 'apiVersion: quarry/v1\nkind: Filesystem\nmetadata: { name: cephfs }\nspec: { name: cephfs, metadataPool: m, dataPool: d }\n';
  await q.put('fs.yaml', fs);
  await q.until('fs.yaml', (s) => s.state === 'applied', 'applied');
  const c = await q.admin();
  const file = await waitFor('fs.yaml blocked on quorum', async () => {
    const f = (await c.get<FileConvergence[]>('/specs/status')).json.find((x) => x.file === 'fs.yaml');
    return f?.blocking[0]?.reason === 'WaitingForQuorum' ? f : undefined;
  });
  t.is(file.state, 'applied');
  t.false(file.converged);
  t.like(file.blocking[0], { kind: 'Filesystem', name: 'cephfs', message: 'waiting for monitor quorum' });
  t.is(file.blocking[0]!.id, file.objects[0]!.id);
});
