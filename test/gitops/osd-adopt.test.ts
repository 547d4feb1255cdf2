// Issue 14 in the lab: an OSD that runs but no one wants (orphaned) is declared again by a
// specs file and adopted, not refused (`holds-osd`) and not created anew. What this part decides
// (operations, plan, the file's state, the spec), then that the same OSD runs on, owned.
import test from 'ava';
import { Kind, type DiskSpec } from '../../src/model/kinds.js';
import type { InvokeResults } from '../http/bodies.js';
import { allActive, waitFor } from '../lab/harness.js';
import { doc } from './fixtures.js';
import { specsLab } from './helpers.js';

interface DiskView {
  id: string;
  nodeId: string;
  serial: string;
  eligible: boolean;
  osdId: number | null;
  osdState: string | null;
  capacityBytes: number;
}
interface PlanView {
  valid: boolean;
  pending: unknown[];
  tasks: unknown[];
  updated: Array<{ id: string; fields: string[] }>;
}

test.serial('osd adoption: an orphaned OSD declared again by a file is adopted: no refusal, no task, the same OSD runs', async (t) => {
  const q = await specsLab(t, 1);
  const [n] = await allActive(q, 1);
  const c = await q.admin();
  const disks = async () => (await c.get<DiskView[]>('/disks')).json.filter((d) => d.nodeId === n!.id);
  const eligible = (await disks()).filter((d) => d.eligible).sort((a, b) => a.capacityBytes - b.capacityBytes);
  t.true(eligible.length >= 2);
  const [monDisk, osdDisk] = [eligible[0]!, eligible[eligible.length - 1]!];
  await waitFor('monitor declared', async () => (await c.post('/ceph/mon/create', { nodeId: n!.id, diskId: monDisk.id })).status === 200);
  t.like((await c.post('/ceph/osd', { nodeId: n!.id, diskId: osdDisk.id })).json, { status: 'scheduled' });
  const view = async () => (await disks()).find((d) => d.id === osdDisk.id)!;
  const first = await waitFor('the OSD runs', async () => ((await view()).osdState === 'running' ? view() : undefined), 40_000);
  const osdId = first.osdId;
  t.not(osdId, null);

  // Its owner forgets it (as `state: absent` did before removals existed): it runs on, orphaned.
  await q.store.mutateSpec<DiskSpec>(Kind.Disk, osdDisk.id, (d) => ({ ...d.spec, osd: false }));
  await waitFor('orphaned', async () => (await view()).osdState === 'orphaned');
  t.deepEqual((await c.get(`/disks/${osdDisk.id}/operations`)).json, ['ceph.create-osd', 'ceph.remove-osd', 'ceph.replace-osd']);

  const text = doc('Node', 'n1', `match: { hostname: ${n!.spec.hostname} }\ndaemons: { mon: {} }\nosds: [{ serial: ${osdDisk.serial} }]`);
  const plan = await c.request<PlanView>('POST', '/specs/plan?file=n.yaml', {
    body: text,
    headers: { 'content-type': 'application/yaml' },
  });
  t.true(plan.json.valid);
  t.deepEqual(plan.json.pending, [], 'not DiskNotEligible: holds-osd');
  t.deepEqual(plan.json.tasks, [], 'nothing created');
  t.deepEqual(plan.json.updated.find((x) => x.id === osdDisk.id)?.fields, ['osd']);

  const created = async () =>
    ((await c.get('/task/runs/recent?limit=1000')).json as Array<{ taskName: string; targetId: string }>).filter(
      (r) => r.targetId === osdDisk.id && /^ceph\.osd\.(new|create)$/.test(r.taskName),
    ).length;
  const runsBefore = await created();
  await q.put('n.yaml', text);
  const applied = await q.until('n.yaml', (s) => s.state !== 'pending' && s.objects.some((o) => o.id === osdDisk.id));
  t.is(applied.state, 'applied');
  const disk = await q.store.mustGet<DiskSpec>(Kind.Disk, osdDisk.id);
  t.true(disk.spec.osd);
  t.like(disk.metadata.source, { type: 'file', file: 'n.yaml' });
  const after = await waitFor('running again, owned', async () => ((await view()).osdState === 'running' ? view() : undefined));
  t.is(after.osdId, osdId, 'the same OSD');
  t.is(await created(), runsBefore, 'no OSD created anew');
  // Owned by the file now: the API may not remove it behind the file's back.
  const removal = await c.post<InvokeResults>('/invoke/disk', { operation: 'ceph.remove-osd', diskIds: [osdDisk.id] });
  t.like(removal.json.results[0], { status: 'rejected', code: 'SPEC_OWNED' });
});
