// `power:` in a spec file means what it says (#15 part 4), in the lab: a file that turns power
// off shuts the node down through the disruption budget (a lease taken), on again powers it on
// through its BMC; the same file re-applied does nothing; an API shutdown stays allowed on a
// file's node and a file saying on powers an API-shut-down node back on; a power-on against a
// file that says off is refused naming the file; no BMC: Blocked: NoPowerControl.
import test from 'ava';
import { Step } from '../../src/catalogue/index.js';
import { Kind, type NodeSpec, type NodeStatusFields } from '../../src/model/kinds.js';
import type { Doc } from '../../src/model/document.js';
import type { ClusterMetrics } from '../../src/model/ceph-kinds.js';
import { allActive, waitFor } from '../lab/harness.js';
import type { Client } from '../http/client.js';
import { doc } from './fixtures.js';
import { specsLab, type SpecsLab } from './helpers.js';

type NodeDoc = Doc<NodeSpec, NodeStatusFields>;
type Results = { results: Array<{ id: string; status: string; reason?: string; code?: string }> };
interface Detail {
  id: string;
  status: string;
  blocked: { reason: string; message: string } | null;
}

const FAST = { power: { bmcPollMs: 20 } };
const nodeFile = (hostname: string, power: 'on' | 'off') => doc('Node', hostname, `match: { hostname: ${hostname} }\npower: ${power}`);
const nodeNow = (q: SpecsLab, id: string) => q.store.mustGet<NodeSpec, NodeStatusFields>(Kind.Node, id);

async function phase(q: SpecsLab, id: string, want: string, what = `node ${want}`): Promise<NodeDoc> {
  return waitFor(
    what,
    async () => {
      const n = await nodeNow(q, id);
      return n.status.phase === want ? n : undefined;
    },
    30_000,
  );
}

async function invoke(c: Client, operation: string, id: string) {
  return (await c.post<Results>('/invoke/node', { operation, nodeIds: [id] })).json.results[0]!;
}

/** The task names the dry run of `text` as `file` lists, sorted. */
async function plannedFor(c: Client, file: string, text: string): Promise<string[]> {
  const r = await c.request<{ tasks: Array<{ task: string }> }>('POST', `/specs/plan?file=${file}`, {
    body: text,
    headers: { 'content-type': 'application/yaml' },
  });
  return r.json.tasks.map((x) => x.task).sort();
}

const runIds = async (q: SpecsLab) => new Set((await q.tasks.recent(10_000)).map((r) => r.id));

/** The first attempts of the runs for node `id` started since `before`, by task name, sorted. */
async function runsOf(q: SpecsLab, id: string, before: Set<string>): Promise<string[]> {
  const runs = (await q.tasks.recent(10_000)).filter((r) => !before.has(r.id) && r.spec.targetId === id && r.spec.attempt <= 1);
  return runs.map((r) => r.spec.taskName).sort();
}

/** Applies `text` as `file` and waits for that apply (not an earlier one) to be over. */
async function apply(q: SpecsLab, file: string, text: string): Promise<void> {
  const before = q.specs.folder.status().find((s) => s.file === file)?.appliedAt ?? '';
  await q.put(file, text);
  await q.until(file, (s) => s.state === 'applied' && (s.appliedAt ?? '') > before, 'applied anew');
}

test('spec power: off in a file shuts the node down through the budget, on powers it back on through its BMC; re-applied, nothing', async (t) => {
  const q = await specsLab(t, 3, FAST);
  const nodes = await allActive(q, 3);
  const c = await q.admin();
  // Monitors on all three: the node runs Ceph, so its shutdown takes a lease.
  const disks = (await c.get('/disks')).json as Array<{ id: string; nodeId: string; eligible: boolean }>;
  for (const n of nodes) {
    const diskId = disks.find((d) => d.nodeId === n.id && d.eligible)!.id;
    await waitFor(`monitor on ${n.spec.hostname}`, async () => (await c.post('/ceph/mon/create', { nodeId: n.id, diskId })).status === 200);
  }
  await waitFor('quorum of three', async () => (await c.get<ClusterMetrics | undefined>('/ceph/metrics')).json?.monCount === 3, 30_000);
  await waitFor('node 1 reports its monitor', async () => (await nodeNow(q, nodes[0]!.id)).status.daemons?.mon === true);
  const n1 = await q.nodeOf(1); // machine 1, whose BMC is Lab.bmc(1)
  t.is((await c.request('PUT', `/nodes/${n1.id}/bmc`, { json: q.lab!.bmc(1) })).status, 200);

  // The dry run lists the runs the apply starts (plan = apply): the soft power-off, its BMC's check.
  const offText = nodeFile(n1.spec.hostname, 'off');
  const plannedOff = await plannedFor(c, 'n1.yaml', offText);
  t.deepEqual(plannedOff, [Step.bmcPowerOff, Step.nodeShutdown]);
  const beforeOff = await runIds(q);
  await apply(q, 'n1.yaml', offText);
  const off = await phase(q, n1.id, 'offline');
  t.like(off.spec, { power: 'off', shutdownGeneration: 1 });
  await waitFor('the shutdown acknowledged', async () => (await nodeNow(q, n1.id)).status.observedShutdownGeneration === 1);
  t.false(q.lab!.machine(1).powered);
  const taken = q.events.find((e) => e.type === 'disruption.lease.taken');
  t.like(taken?.payload, { holderId: n1.id, kind: 'shutdown', nodes: [n1.id] });
  await waitFor('the lease given back', () => q.events.some((e) => e.type === 'disruption.lease.released'));
  t.deepEqual(await runsOf(q, n1.id, beforeOff), plannedOff);

  // The same file again: no request, the node stays off.
  await apply(q, 'n1.yaml', nodeFile(n1.spec.hostname, 'off'));
  const again = await nodeNow(q, n1.id);
  t.like(again.spec, { power: 'off', shutdownGeneration: 1 });
  t.is(again.spec.powerOnGeneration, undefined);
  t.is(again.status.phase, 'offline');

  const onText = nodeFile(n1.spec.hostname, 'on');
  const plannedOn = await plannedFor(c, 'n1.yaml', onText);
  t.deepEqual(plannedOn, [Step.bmcPowerOn]);
  const beforeOn = await runIds(q);
  await apply(q, 'n1.yaml', onText);
  await phase(q, n1.id, 'active', 'node 1 active again');
  t.deepEqual(await runsOf(q, n1.id, beforeOn), plannedOn);
  t.like((await nodeNow(q, n1.id)).spec, { power: 'on', powerOnGeneration: 1 });
  t.is((await q.tasks.latestFor(Kind.Node, n1.id, Step.bmcPowerOn))?.status.state, 'completed');
  t.true(q.lab!.machine(1).powered);
});

test('spec power: a node shut down through the API is powered on by a file that declares it with power: on', async (t) => {
  const q = await specsLab(t, 1, FAST);
  const [n] = await allActive(q, 1);
  const c = await q.admin();
  t.is((await c.request('PUT', `/nodes/${n!.id}/bmc`, { json: q.lab!.bmc(1) })).status, 200);
  t.is((await invoke(c, 'node.shutdown', n!.id)).status, 'scheduled');
  const off = await phase(q, n!.id, 'offline');
  t.is(off.spec.power, 'off', 'the operation declares the power off');
  await apply(q, 'n.yaml', nodeFile(n!.spec.hostname, 'on'));
  await phase(q, n!.id, 'active', 'the node active again');
  t.like((await nodeNow(q, n!.id)).spec, { power: 'on', shutdownGeneration: 1, powerOnGeneration: 1 });
});

test("spec power: node.shutdown stays allowed on a file's node and the unchanged file does nothing; node.power-on against power: off is refused naming the file", async (t) => {
  const q = await specsLab(t, 1, FAST);
  const [n] = await allActive(q, 1);
  const c = await q.admin();
  t.is((await c.request('PUT', `/nodes/${n!.id}/bmc`, { json: q.lab!.bmc(1) })).status, 200);
  await apply(q, 'n.yaml', nodeFile(n!.spec.hostname, 'on'));
  t.is((await invoke(c, 'node.shutdown', n!.id)).status, 'scheduled');
  await phase(q, n!.id, 'offline');
  t.is((await nodeNow(q, n!.id)).spec.power, 'on', "the file's power stays declared");
  await apply(q, 'n.yaml', nodeFile(n!.spec.hostname, 'on'));
  const after = await nodeNow(q, n!.id);
  t.is(after.spec.powerOnGeneration, undefined, 'the unchanged file asks no power-on');
  t.is(after.status.phase, 'offline');
  t.is((await invoke(c, 'node.power-on', n!.id)).status, 'scheduled', 'the API powers it on');
  await phase(q, n!.id, 'active', 'the node active again');

  await apply(q, 'n.yaml', nodeFile(n!.spec.hostname, 'off'));
  await phase(q, n!.id, 'offline', 'off as the file says');
  const refused = await invoke(c, 'node.power-on', n!.id);
  t.like(refused, { status: 'rejected', code: 'SPEC_OWNED' });
  t.regex(refused.reason ?? '', /power is owned by the specs file n\.yaml/);
  t.like((await nodeNow(q, n!.id)).spec, { power: 'off', shutdownGeneration: 2 });
});

test('spec power: a file that powers on a node without a BMC says Blocked: NoPowerControl in /nodes/details', async (t) => {
  const q = await specsLab(t, 1, FAST);
  const [n] = await allActive(q, 1);
  const c = await q.admin();
  await apply(q, 'n.yaml', nodeFile(n!.spec.hostname, 'off'));
  await phase(q, n!.id, 'offline');
  await apply(q, 'n.yaml', nodeFile(n!.spec.hostname, 'on'));
  const d = await waitFor('blocked', async () => {
    const x = ((await c.get('/nodes/details')).json as Detail[]).find((y) => y.id === n!.id);
    return x?.blocked ? x : undefined;
  });
  t.is(d.status, 'offline');
  t.deepEqual(d.blocked, {
    reason: 'NoPowerControl',
    message: 'no BMC is declared for this node: declare a BMC or power the machine on by hand',
  });
});
