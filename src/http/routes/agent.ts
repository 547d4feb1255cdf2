// The agent protocol: what a node's agent says to the master over HTTP once it has logged in
// as `agent:<nodeId>`. Every operation acts on the caller's own node, which comes from its
// session and never from the request, so no body or path can aim at another node.
// Reports, claims, logs, outcomes and run states go to the leader (`leader`): the Fleet that
// reports feed, the node run queues agents long-poll and the active runs live there. Rotating the
// credential is a store write any controller makes.
import { ForbiddenError } from '../../errors.js';
import { agentUsername } from '../../fleet/credentials.js';
import type { AgentGateway } from '../../fleet/gateway.js';
import type { AgentReport } from '../../fleet/types.js';
import { agentReportSchema } from '../../model/agent-report.js';
import type { JsonSchema } from '../../model/schemas.js';
import type { AgentResult, LogLine } from '../../tasks/types.js';
import type { AgentPrincipal, Auth } from '../auth/index.js';
import { observedPeer } from '../forward/marker.js';
import { route, type AnyRoute } from '../route.js';
import { object, statusSchema, uuidSchema } from '../schemas.js';

const text = (max: number, min = 0): JsonSchema => ({ type: 'string', minLength: min, maxLength: max });
const bool: JsonSchema = { type: 'boolean' };
const list = (items: JsonSchema, maxItems: number): JsonSchema => ({ type: 'array', items, maxItems });

const logLineSchema = object(
  { timestamp: { type: 'string', format: 'date-time' }, level: { enum: ['debug', 'info', 'warn', 'error'] }, message: text(16_384) },
  ['timestamp', 'level', 'message'],
);
const claimedSchema = object({ id: uuidSchema, taskName: { type: 'string' }, args: { type: 'object' } }, ['id', 'taskName', 'args']);
const runStateSchema = object({ state: { enum: ['pending', 'running', 'completed', 'failed', 'canceled'] }, canceled: bool }, [
  'state',
  'canceled',
]);
const credentialSchema = object(
  { username: { type: 'string' }, secret: { type: 'string', description: 'shown once; the previous secret no longer works' } },
  ['username', 'secret'],
);

type RunParams = { runId: string };
const runParams = object({ runId: uuidSchema }, ['runId']);
const tags = ['agent'];

/** The calling agent, once it has replaced the secret it was installed with. */
function rotatedAgent(agent: AgentPrincipal | null): AgentPrincipal {
  if (!agent) throw new ForbiddenError('this operation is for node agents');
  if (!agent.rotated) throw new ForbiddenError('rotate the installed credential first (POST /node/credential)');
  return agent;
}

export function agentRoutes(gateway: AgentGateway, auth: Auth): AnyRoute[] {
  return [
    route({
      method: 'POST',
      path: '/node/credential',
      summary: "Replace the calling agent's secret; the new one is answered once and the old one stops working",
      tags,
      agent: true,
      response: { description: 'the new credential', schema: credentialSchema },
      handler: async ({ agent }) => {
        if (!agent) throw new ForbiddenError('this operation is for node agents');
        const secret = await gateway.credentials.rotate(agent.nodeId);
        // Sessions opened with the old secret end; the one that rotated stays.
        await auth.sessions.revokeUser(agent.username, agent.sessionId);
        return { username: agentUsername(agent.nodeId), secret };
      },
    }),
    route<AgentReport>({
      method: 'POST',
      path: '/node/hardware',
      leader: true,
      summary: "The agent's report (inventory and daemon states) for its node; also its heartbeat",
      tags,
      agent: true,
      body: agentReportSchema,
      response: { description: 'recorded', schema: statusSchema('updated') },
      handler: async ({ agent, body, ctx }) => {
        // The socket's own source address is what the master observed (never a forwarded-for
        // header an agent could write), or, relayed by a follower, the one its signed marker
        // states; the body's `ip` is only what the agent says.
        await gateway.report(rotatedAgent(agent).nodeId, body, { address: observedPeer(ctx) });
        return { status: 'updated' };
      },
    }),
    route<{ waitMs?: number; carrying?: string[] }>({
      method: 'POST',
      path: '/node/runs/claim',
      leader: true,
      summary: "Long-poll: the node's oldest pending run, now running; 204 when none started within waitMs",
      tags,
      agent: true,
      body: object({
        waitMs: { type: 'integer', minimum: 0, maximum: 30_000, default: 0 },
        carrying: {
          type: 'array',
          maxItems: 64,
          items: { type: 'string', format: 'uuid' },
          description:
            'the runs the agent is carrying out now: a run a previous leader handed out that is not among them is failed as interrupted',
        },
      }),
      response: {
        description: 'the claimed run',
        schema: claimedSchema,
        empty: { status: 204, description: 'no run for the node within waitMs' },
      },
      handler: async ({ agent, body, ctx }) => {
        const { nodeId } = rotatedAgent(agent);
        // A client that hangs up ends the wait, so no run is handed to a closed connection.
        const hangup = new AbortController();
        const onClose = (): void => hangup.abort();
        ctx.res.once('close', onClose);
        try {
          const run = await gateway.claim(nodeId, body.waitMs ?? 0, hangup.signal, body.carrying);
          if (run) return run;
          ctx.status = 204;
          return undefined;
        } finally {
          ctx.res.off('close', onClose);
        }
      },
    }),
    route<{ lines: LogLine[] }, unknown, RunParams>({
      method: 'POST',
      path: '/node/runs/{runId}/logs',
      leader: true,
      summary: "Append log lines to one of the node's runs (the agent masks its own secrets)",
      tags,
      agent: true,
      params: runParams,
      body: object({ lines: list(logLineSchema, 1000) }, ['lines']),
      response: { description: 'appended', schema: statusSchema('updated') },
      errors: [404],
      handler: async ({ agent, params, body }) => {
        await gateway.log(rotatedAgent(agent).nodeId, params.runId, body.lines);
        return { status: 'updated' };
      },
    }),
    route<AgentResult, unknown, RunParams>({
      method: 'POST',
      path: '/node/runs/{runId}/finish',
      leader: true,
      summary: "Report the outcome of one of the node's running runs",
      tags,
      agent: true,
      params: runParams,
      body: object({ ok: bool, error: text(4096), result: { type: 'object' } }, ['ok']),
      response: { description: 'recorded', schema: statusSchema('updated') },
      errors: [404, 409],
      handler: async ({ agent, params, body }) => {
        await gateway.finish(rotatedAgent(agent).nodeId, params.runId, body);
        return { status: 'updated' };
      },
    }),
    route<unknown, unknown, RunParams>({
      method: 'GET',
      path: '/node/runs/{runId}',
      leader: true,
      summary: "State of one of the node's runs: whether the agent should keep going",
      tags,
      agent: true,
      params: runParams,
      response: { description: 'the run state', schema: runStateSchema },
      errors: [404],
      handler: ({ agent, params }) => gateway.runState(rotatedAgent(agent).nodeId, params.runId),
    }),
  ];
}
