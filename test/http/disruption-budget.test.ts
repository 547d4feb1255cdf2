// GET/PUT /ceph/cluster/disruption-budget over real HTTP against the lab: who may call them (a
// user reads, an admin sets, an agent and nobody neither), bad bodies (400, nothing changed), a
// Cluster file's `disruptionBudget` owning what it names (409 SPEC_OWNED naming the file), and a
// lower limit that revokes no lease held: a new disruption waits instead.
import test from 'ava';
import { DISRUPTION_BUDGET_ID, DisruptionKind, type DisruptionBudgetSpec, type DisruptionLease } from '../../src/model/disruption-kinds.js';
import { BUDGET_DEFAULTS } from '../../src/model/disruption-settings.js';
import { budgetVerdict, limitsOf, DEFAULT_MAX_DISRUPTIONS, DEFAULT_MAX_UNAVAILABLE } from '../../reconcilers/shared/disruption-gate.js';
import { doc } from '../gitops/fixtures.js';
import { specsLab } from '../gitops/helpers.js';
import { allActive, waitFor } from '../lab/harness.js';
import type { ProblemBody } from './bodies.js';
import { Client } from './client.js';

const PATH = '/ceph/cluster/disruption-budget';

interface BudgetBody {
  maxUnavailable: number;
  maxDisruptions: number;
  file: string | null;
  leases: Array<{ holderKind: string; holderId: string; kind: string; what: string; nodes: string[]; domains: string[]; since: string }>;
}

async function login(url: string, username: string, password: string): Promise<Client> {
  const c = new Client(url);
  const r = await c.post('/user/login', { username, password });
  if (r.status !== 200) throw new Error(`login ${username}: ${r.status}`);
  return c;
}

const lease = (n: number): DisruptionLease => ({
  holderKind: 'Node',
  holderId: `00000000-0000-4000-8000-00000000000${n}`,
  what: `restart of n${n}`,
  since: '2026-11-25T00:00:00.000Z',
  kind: 'restart',
  nodes: [`00000000-0000-4000-8000-00000000000${n}`],
  domains: [`n${n}`],
  stops: { osds: [n], mons: [], mds: [] },
});

test('disruption budget route: the defaults the gate uses when nothing set them', (t) => {
  t.deepEqual(BUDGET_DEFAULTS, { maxUnavailable: DEFAULT_MAX_UNAVAILABLE, maxDisruptions: DEFAULT_MAX_DISRUPTIONS });
});

test('disruption budget route: a user reads, an admin sets either limit, an agent and nobody may do neither', async (t) => {
  const q = await specsLab(t, 1);
  const [n] = await allActive(q, 1);
  const admin = await q.admin();
  t.deepEqual((await admin.get(PATH)).json, { maxUnavailable: 1, maxDisruptions: 1, file: null, leases: [] });
  const set = await admin.request<BudgetBody>('PUT', PATH, { json: { maxUnavailable: 2 } });
  t.is(set.status, 200);
  t.like(set.json, { maxUnavailable: 2, maxDisruptions: 1, file: null });
  t.like((await admin.request<BudgetBody>('PUT', PATH, { json: { maxDisruptions: 3 } })).json, { maxUnavailable: 2, maxDisruptions: 3 });
  t.deepEqual((await q.store.mustGet<DisruptionBudgetSpec>(DisruptionKind.DisruptionBudget, DISRUPTION_BUDGET_ID)).spec, {
    maxUnavailable: 2,
    maxDisruptions: 3,
  });
  await admin.post('/users', { username: 'viewer', password: 'viewer-password', name: 'V', email: 'v@example.com' });
  const viewer = await login(q.url, 'viewer', 'viewer-password');
  t.like((await viewer.get(PATH)).json, { maxUnavailable: 2 });
  t.is((await viewer.request('PUT', PATH, { json: { maxUnavailable: 5 } })).status, 403);
  const agent = await login(q.url, `agent:${n!.id}`, q.lab!.machine(1).disk.agentSecret!.secret);
  t.is((await agent.get(PATH)).status, 403);
  t.is((await agent.request('PUT', PATH, { json: { maxUnavailable: 5 } })).status, 403);
  const nobody = new Client(q.url);
  t.is((await nobody.get(PATH)).status, 401);
  t.is((await nobody.request('PUT', PATH, { json: { maxUnavailable: 5 } })).status, 401);
  t.like((await admin.get(PATH)).json, { maxUnavailable: 2, maxDisruptions: 3 }, 'no refused write changed it');
});

test('disruption budget route: a bad body is 400 problem+json and changes nothing', async (t) => {
  const q = await specsLab(t, 0);
  const admin = await q.admin();
  await admin.request('PUT', PATH, { json: { maxUnavailable: 2 } });
  const before = (await q.store.mustGet(DisruptionKind.DisruptionBudget, DISRUPTION_BUDGET_ID)).metadata.resourceVersion;
  for (const json of [
    {},
    { maxUnavailable: 0 },
    { maxUnavailable: 1.5 },
    { maxDisruptions: -1 },
    { maxUnavailable: '2' },
    { maxUnavailable: 2, extra: 1 },
  ]) {
    const r = await admin.request<ProblemBody>('PUT', PATH, { json });
    t.is(r.status, 400, JSON.stringify(json));
    t.is(r.json.code, 'VALIDATION_FAILED');
  }
  t.is((await q.store.mustGet(DisruptionKind.DisruptionBudget, DISRUPTION_BUDGET_ID)).metadata.resourceVersion, before, 'nothing written');
});

test("disruption budget route: a Cluster file that names a limit owns it (409 naming the file); the other stays the API's", async (t) => {
  const q = await specsLab(t, 0);
  const admin = await q.admin();
  await q.put('cluster.yaml', doc('Cluster', 'default', 'disruptionBudget: { maxUnavailable: 2 }'));
  await q.until('cluster.yaml', (s) => s.state === 'applied' && s.objects.some((o) => o.kind === DisruptionKind.DisruptionBudget));
  t.like((await admin.get(PATH)).json, { maxUnavailable: 2, maxDisruptions: 1, file: 'cluster.yaml' });
  const refused = await admin.request<ProblemBody>('PUT', PATH, { json: { maxUnavailable: 3 } });
  t.is(refused.status, 409);
  t.is(refused.json.code, 'SPEC_OWNED');
  t.regex(refused.json.detail, /maxUnavailable is owned by the specs file cluster\.yaml/);
  t.like((await admin.request('PUT', PATH, { json: { maxDisruptions: 2 } })).json, { maxUnavailable: 2, maxDisruptions: 2 });
  // The file changes it; the file gone, the API may again (the value stays).
  await q.put('cluster.yaml', doc('Cluster', 'default', 'disruptionBudget: { maxUnavailable: 4 }'));
  await waitFor("the file's new limit", async () => ((await admin.get<BudgetBody>(PATH)).json.maxUnavailable === 4 ? true : undefined));
  await q.remove('cluster.yaml');
  await waitFor('the file no longer owns it', async () => ((await admin.get<BudgetBody>(PATH)).json.file === null ? true : undefined));
  t.like((await admin.request('PUT', PATH, { json: { maxUnavailable: 1 } })).json, { maxUnavailable: 1, maxDisruptions: 2 });
});

test('disruption budget route: a limit lowered below the leases held revokes none; a new disruption waits', async (t) => {
  const q = await specsLab(t, 0);
  const admin = await q.admin();
  await admin.request('PUT', PATH, { json: { maxUnavailable: 2 } });
  const cur = await q.store.mustGet(DisruptionKind.DisruptionBudget, DISRUPTION_BUDGET_ID);
  await q.store.updateStatus(
    DisruptionKind.DisruptionBudget,
    DISRUPTION_BUDGET_ID,
    { leases: [lease(1), lease(2)] },
    {
      resourceVersion: cur.metadata.resourceVersion,
    },
  );
  const lowered = await admin.request<BudgetBody>('PUT', PATH, { json: { maxUnavailable: 1 } });
  t.is(lowered.status, 200);
  t.is(lowered.json.maxUnavailable, 1);
  t.deepEqual(
    lowered.json.leases.map((l) => [l.holderKind, l.kind, l.domains, l.what, l.since]),
    [
      ['Node', 'restart', ['n1'], 'restart of n1', '2026-11-25T00:00:00.000Z'],
      ['Node', 'restart', ['n2'], 'restart of n2', '2026-11-25T00:00:00.000Z'],
    ],
  );
  const stored = await q.store.mustGet<DisruptionBudgetSpec, { leases: DisruptionLease[] }>(
    DisruptionKind.DisruptionBudget,
    DISRUPTION_BUDGET_ID,
  );
  t.is(stored.status.leases.length, 2, 'both leases still held');
  // A third node's restart, against the lowered limit and the two held: refused by the budget.
  const third = lease(3);
  const verdict = budgetVerdict(limitsOf(stored.spec), stored.status.leases, {
    holder: { kind: third.holderKind, id: third.holderId },
    kind: 'restart',
    what: third.what,
    nodes: third.nodes!,
    domains: third.domains!,
    stops: third.stops!,
  });
  t.truthy(verdict, 'the new disruption waits');
});
