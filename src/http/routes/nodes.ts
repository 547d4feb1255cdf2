// Nodes, their NICs and the operations each offers now. Reads only.
import { NODE_DAEMON_TYPES } from '../../catalogue/index.js';
import { offeredNodeOperations } from '../../model/operations.js';
import type { Inventory } from '../../services/inventory.js';
import { route, type AnyRoute } from '../route.js';
import { object, uuidSchema } from '../schemas.js';
import { nicViews, nodeDetail, nodeSummary } from '../../services/views.js';

const str = { type: 'string' };
const bool = { type: 'boolean' };
const int = { type: 'integer', minimum: 0 };
const summaryProps = {
  id: uuidSchema,
  hostname: str,
  role: { enum: ['master', 'worker'] },
  ip: str,
  createdAt: { type: 'string', format: 'date-time' },
};
const summarySchema = object(summaryProps, Object.keys(summaryProps));
const detailProps = {
  ...summaryProps,
  name: { type: 'string', description: 'the name a spec file gives the node (its metadata.name); "" when no file declares it' },
  labels: {
    type: 'object',
    additionalProperties: str,
    description: "the spec file's labels; those named by the Cluster's crushLevels place the node's CRUSH host bucket (rack: r1)",
  },
  status: { enum: ['discovered', 'booting', 'active', 'rebooting', 'shutting-down', 'maintenance', 'offline', 'error'] },
  // has<Type> (desired) and <type>Exists (running), for each node daemon of the catalogue.
  ...Object.fromEntries(NODE_DAEMON_TYPES.map((t) => [`has${t.charAt(0).toUpperCase()}${t.slice(1)}`, bool])),
  ...Object.fromEntries(NODE_DAEMON_TYPES.map((t) => [`${t}Exists`, bool])),
  diskCount: int,
  osdCount: int,
  approved: {
    type: 'boolean',
    description: 'enrollment: false for a machine found by network boot until an admin approves it (node.approve)',
  },
  bootAddress: {
    type: 'string',
    description: 'the source address of its last boot request ("" when none since Quarry started): what an admin checks before approving',
  },
  bmc: {
    oneOf: [
      object({ address: str, port: int, username: str, passwordSet: bool }, ['address', 'port', 'username', 'passwordSet']),
      { type: 'null' },
    ],
    description: 'its BMC (IPMI over LAN), never the password; null: no power control',
  },
  fencing: { enum: ['none', 'bmc'] },
  blocked: {
    oneOf: [object({ reason: str, message: str }, ['reason', 'message']), { type: 'null' }],
    description: 'why a request on it waits (NoPowerControl, DisruptionBudget, ...); null when nothing does',
  },
  disruption: {
    description:
      'the disruption lease its restart or shutdown holds or waits for (state held | waiting, kind, since, heldBy, reason); null when neither',
    oneOf: [
      { type: 'null' },
      object(
        {
          state: { enum: ['held', 'waiting'] },
          kind: str,
          since: { type: 'string', format: 'date-time' },
          heldBy: { type: 'array', items: str },
          reason: str,
        },
        ['state', 'kind', 'since'],
      ),
    ],
  },
  ready: {
    ...object({ ready: bool, reason: str, message: str }, ['ready', 'reason', 'message']),
    description:
      'whether the node is as its spec says (active, or off when declared off), and why not (docs/api-conventions.md, Convergence)',
  },
  daemonsReady: {
    type: 'array',
    items: object({ type: { enum: NODE_DAEMON_TYPES }, ready: bool, phase: str, reason: str, message: str }, [
      'type',
      'ready',
      'phase',
      'reason',
      'message',
    ]),
    description:
      "each daemon its spec names: Ready when its loop says running and the agent reports it, else why not; phase: its loop's (pending before any)",
  },
};
const detailSchema = object(detailProps, Object.keys(detailProps));
const nicProps = { nodeId: uuidSchema, nodeHostname: str, name: str, mac: str, ip: str, connected: bool, mtu: int };
const nicSchema = object(nicProps, Object.keys(nicProps));

export function nodeRoutes(inventory: Inventory): AnyRoute[] {
  return [
    route({
      method: 'GET',
      path: '/nodes',
      summary: 'Every node, in summary',
      tags: ['nodes'],
      response: { description: 'node summaries', schema: { type: 'array', items: summarySchema } },
      handler: async () => (await inventory.nodes()).map(nodeSummary),
    }),
    route({
      method: 'GET',
      path: '/nodes/details',
      summary: 'Every node with its status, Ceph daemons desired (has*) and running (*Exists), disk and OSD counts',
      tags: ['nodes'],
      response: { description: 'node details', schema: { type: 'array', items: detailSchema } },
      // Answered with the projection's cached JSON bytes, the same bytes koa would serialize.
      handler: async ({ ctx }) => {
        const body = await inventory.details.bytes();
        ctx.status = 200;
        ctx.type = 'application/json';
        ctx.body = body;
        return undefined;
      },
    }),
    route<unknown, unknown, { nodeId: string }>({
      method: 'GET',
      path: '/nodes/{nodeId}',
      summary: 'One node in detail, as in GET /nodes/details',
      tags: ['nodes'],
      params: object({ nodeId: uuidSchema }, ['nodeId']),
      response: { description: 'node detail', schema: detailSchema },
      errors: [404],
      handler: async ({ params }) => {
        const node = await inventory.mustNode(params.nodeId);
        return nodeDetail(node, await inventory.disksOf(node));
      },
    }),
    route({
      method: 'GET',
      path: '/nics',
      summary: 'Every NIC of every node, as its agent last reported it',
      tags: ['nodes'],
      response: { description: 'NICs', schema: { type: 'array', items: nicSchema } },
      handler: async () => (await inventory.nodes()).flatMap(nicViews),
    }),
    route<unknown, unknown, { nodeId: string }>({
      method: 'GET',
      path: '/nodes/{nodeId}/operations',
      summary: 'The operation names this node offers in its current state',
      tags: ['operations'],
      params: object({ nodeId: uuidSchema }, ['nodeId']),
      response: { description: 'operation names', schema: { type: 'array', items: str } },
      errors: [404],
      handler: async ({ params }) => {
        const node = await inventory.mustNode(params.nodeId);
        return offeredNodeOperations(node, await inventory.disksOf(node));
      },
    }),
  ];
}
