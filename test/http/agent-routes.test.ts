// The route layer's callers over the bare HTTP app: a route open to users and agents, decided
// per node with mayReadNodeSecrets (as GET /ceph/nodes/{nodeId}/keyrings will be), and agent
// logins refused when the app has no agent credentials.
import test from 'ava';
import { ForbiddenError } from '../../src/errors.js';
import { mayReadNodeSecrets, type AgentVerifier } from '../../src/http/auth/index.js';
import { route } from '../../src/http/route.js';
import { startHarness } from './harness.js';
import type { ProblemBody } from './bodies.js';

const NODE_A = '0a000000-0000-4000-8000-000000000001';
const NODE_B = '0b000000-0000-4000-8000-000000000002';
const SECRET = 'a'.repeat(43);

// Every node's agent knows SECRET and has rotated: the route layer is what is under test.
const agents: AgentVerifier = {
  verify: async (_nodeId, secret) => (secret === SECRET ? { rotated: true, firstUse: false } : null),
  state: async () => ({ rotated: true }),
};

const secrets = route<unknown, unknown, { nodeId: string }>({
  method: 'GET',
  path: '/test/nodes/{nodeId}/secrets',
  summary: 'stand-in for the node keyrings',
  agent: 'also',
  admin: true,
  response: { description: 'x' },
  handler: ({ principal, agent, params }) => {
    if (!mayReadNodeSecrets(principal ?? agent, params.nodeId)) throw new ForbiddenError('not your node');
    return { nodeId: params.nodeId };
  },
});

test('agent routes a route open to agents too: an admin reads any node, an agent its own, other users nothing', async (t) => {
  const h = await startHarness({ areas: [[secrets]], agents });
  t.teardown(() => h.close());
  const admin = await h.admin();
  await h.createUser('viewer');
  const viewer = await h.login('viewer', 'viewer-password');
  const agentA = await h.login(`agent:${NODE_A}`, SECRET);
  const get = (c: typeof admin, nodeId: string) => c.get(`/test/nodes/${nodeId}/secrets`);
  t.is((await get(admin, NODE_B)).status, 200);
  t.is((await get(agentA, NODE_A)).status, 200);
  t.is((await get(agentA, NODE_B)).status, 403);
  t.is((await get(viewer, NODE_A)).status, 403);
  t.is((await agentA.get('/user/me')).status, 403, 'and nothing else');
});

test('agent routes without agent credentials an agent username is the generic 401', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const r = await h.client().post<ProblemBody>('/user/login', { username: `agent:${NODE_A}`, password: SECRET });
  t.is(r.status, 401);
  t.is(r.json.code, 'UNAUTHENTICATED');
});
