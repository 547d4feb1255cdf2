// The real route table's leader-only routes, and a node agent working through a follower: a lab
// Quarry leads (it has no LeaderView: it is the only one that runs tasks), and a bare HTTP app on
// the same store, STATE_DIR and SECRETS_KEY follows it.
import test from 'ava';
import type { AgentGateway } from '../../src/fleet/gateway.js';
import { agentRoutes, taskRoutes } from '../../src/http/router.js';
import { parseKey, SecretBox } from '../../src/store/secret-box.js';
import type { TaskService } from '../../src/tasks/service.js';
import { SECRETS_KEY, startLab, type LabQuarry } from '../lab/harness.js';
import { hardware, nodeRun, readyAgent, admin } from './agent-helpers.js';
import { cookieOf, send } from './forward-helpers.js';
import { startHarness, type Harness } from './harness.js';

/** Every route that needs the leader's memory or disk, by the audit of #18 (route.ts `leader`). */
const LEADER_ROUTES = [
  // The agents' protocol but the credential rotation (a store write): Fleet, run queues, runs.
  'GET /node/runs/{runId}',
  'POST /node/hardware',
  'POST /node/runs/claim',
  'POST /node/runs/{runId}/finish',
  'POST /node/runs/{runId}/logs',
  // The run engine, its index, the question desk, the run log files.
  'GET /task/runs/recent',
  'GET /task/run/{runId}',
  'GET /task/run/{runId}/logs',
  'POST /task/run/{runId}/cancel',
  'GET /task/questions/pending',
  'POST /task/question/{questionId}/answer',
  // The specs folder is watched by the leader alone; /status shows its pending entries.
  'GET /specs/files',
  'GET /specs/files/{name}',
  'PUT /specs/files/{name}',
  'DELETE /specs/files/{name}',
  'GET /specs/status',
  'POST /specs/plan',
  'GET /status',
  // Whether a monitor is scheduled: the run index.
  'GET /ceph/nodes/{nodeId}/keyrings',
  // Gateway addresses: the Fleet's observations.
  'GET /s3/buckets',
  'POST /s3/buckets',
  'GET /s3/buckets/{bucket}/objects',
  'POST /s3/buckets/{bucket}/objects/delete',
  // Files the image loop downloaded under the leader's STATE_DIR.
  'GET /images/{imageId}/files/{file}',
  // The interfaces dnsmasq serves on: the leader's.
  'GET /networks/interfaces',
  'POST /networks/create',
];

/** Whatever a follower's handlers of leader-only routes would touch: never reached. */
const unreachable: object = new Proxy(
  {},
  {
    get: () => {
      throw new Error('a follower served a leader-only route itself');
    },
  },
);

async function follow(t: Parameters<typeof startLab>[0], q: LabQuarry): Promise<Harness> {
  const h = await startHarness({
    // The real areas, over parts a follower would not hold: it relays, so none is used.
    areas: [(area) => agentRoutes(unreachable as AgentGateway, area.auth), taskRoutes(unreachable as TaskService)],
    store: q.store,
    stateDir: q.config.stateDir,
    keepStateDir: true,
    secrets: new SecretBox(parseKey(SECRETS_KEY, 'SECRETS_KEY')),
    leader: { isLeader: () => false, leaderUrl: () => q.url },
  });
  t.teardown(() => h.close());
  return h;
}

test('leader forward the leader-only routes of the table are the audited ones', async (t) => {
  const q = await startLab(t, 0);
  const marked = q.http.routes.filter((r) => r.leader).map((r) => `${r.method} ${r.path}`);
  t.deepEqual(marked.sort(), [...LEADER_ROUTES].sort());
});

test("leader forward an agent works through a follower: its report records the agent's address, not the follower's nor one it wrote", async (t) => {
  const q = await startLab(t, 0);
  const f = await follow(t, q);
  const a = await readyAgent(q, 1);
  const cookie = cookieOf(a.client.jar);
  const report = await send(`${f.base}/node/hardware`, {
    method: 'POST',
    from: '127.0.0.2',
    headers: { cookie, 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.9' },
    body: JSON.stringify(hardware(1)),
  });
  t.is(report.status, 200, report.text);
  t.is(q.fleet.observe(a.nodeId).address, '127.0.0.2');

  const run = await nodeRun(q, a.nodeId);
  const claim = await send(`${f.base}/node/runs/claim`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/json' },
    body: JSON.stringify({ waitMs: 10_000 }),
  });
  t.is(claim.status, 200, claim.text);
  t.is((JSON.parse(claim.text) as { id: string }).id, run.id);
  const finish = await send(`${f.base}/node/runs/${run.id}/finish`, {
    method: 'POST',
    headers: { cookie, 'content-type': 'application/json' },
    body: JSON.stringify({ ok: true, result: {} }),
  });
  t.is(finish.status, 200, finish.text);
  const logs = await (await admin(q)).clone(f.base).get<Array<{ message: string }>>(`/task/run/${run.id}/logs`);
  t.is(logs.status, 200);
  t.true(logs.json.some((l) => l.message.includes('demo.step')));
});
