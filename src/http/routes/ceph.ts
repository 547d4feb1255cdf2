// The storage cluster as the loops observed it: metrics, the ceph.conf every worker uses and
// its hash, the monmap, and each node's Ceph state. Reads of stored status only; nothing here
// talks to Ceph (the cluster loop does, and writes what it saw).
import { NODE_DAEMON_TYPES } from '../../catalogue/index.js';
import { createHash } from 'node:crypto';
import { ForbiddenError, ServiceUnavailableError } from '../../errors.js';
import { mayReadNodeSecrets } from '../auth/principal.js';
import type { CephConfig } from '../../services/ceph-config.js';
import type { Inventory } from '../../services/inventory.js';
import { route, type AnyRoute } from '../route.js';
import { object, statusSchema, uuidSchema } from '../schemas.js';

const unavailable = (message: string) => new ServiceUnavailableError(message, 'CLUSTER_UNAVAILABLE');

const int = { type: 'integer', minimum: 0 };
const metricsProps = {
  health: { enum: ['HEALTH_OK', 'HEALTH_WARN', 'HEALTH_ERR'] },
  monCount: int,
  osdCount: int,
  osdUp: int,
  osdIn: int,
  pgCount: int,
  poolCount: int,
  usedBytes: int,
  availableBytes: int,
  totalBytes: int,
};
const nodeStateProps = {
  nodeId: uuidSchema,
  ...Object.fromEntries(NODE_DAEMON_TYPES.map((t) => [t, { type: 'boolean' }])),
  osdIds: { type: 'array', items: int },
};

export function cephRoutes(config: CephConfig, inventory: Inventory): AnyRoute[] {
  return [
    route({
      method: 'GET',
      path: '/ceph/metrics',
      summary: 'Cluster health, daemon counts, placement groups and capacity, as last observed',
      tags: ['ceph'],
      response: { description: 'metrics', schema: object(metricsProps, Object.keys(metricsProps)) },
      errors: [503],
      handler: async () => {
        const m = (await config.cluster()).status.metrics;
        if (!m) throw unavailable('no metrics yet: the cluster has not reached monitor quorum');
        return m;
      },
    }),
    route({
      method: 'GET',
      path: '/ceph/cluster/config',
      summary: 'The ceph.conf every node uses, base64',
      tags: ['ceph'],
      // Every node's agent writes this file for its daemons (no secret in it).
      agent: 'also',
      response: { description: 'config', schema: object({ config: { type: 'string', contentEncoding: 'base64' } }, ['config']) },
      errors: [422], // the ceph.conf template fails to render
      handler: async () => ({ config: Buffer.from(await config.text()).toString('base64') }),
    }),
    route({
      method: 'GET',
      path: '/ceph/cluster/config/hash',
      summary: 'SHA-256 of exactly the bytes GET /ceph/cluster/config encodes',
      tags: ['ceph'],
      // Agents compare their copy with it.
      agent: 'also',
      response: { description: 'hash', schema: object({ hash: { type: 'string', pattern: '^[0-9a-f]{64}$' } }, ['hash']) },
      errors: [422], // the ceph.conf template fails to render
      handler: async () => ({
        hash: createHash('sha256')
          .update(await config.text())
          .digest('hex'),
      }),
    }),
    route({
      method: 'GET',
      path: '/ceph/monmap',
      summary: 'The current monitor map, binary',
      tags: ['ceph'],
      // A joining monitor's mkfs reads it on its node.
      agent: 'also',
      response: { description: 'the monmap', contentType: 'application/octet-stream' },
      errors: [503],
      handler: async ({ ctx }) => {
        const { monmap, monmapEpoch } = (await config.cluster()).status;
        if (!monmap) throw unavailable('no monmap yet: no monitor has been created');
        ctx.type = 'application/octet-stream';
        ctx.set('Content-Disposition', `attachment; filename="monmap.${monmapEpoch ?? 0}"`);
        ctx.body = Buffer.from(monmap, 'base64');
        return undefined;
      },
    }),
    route<unknown, unknown, { nodeId: string }>({
      method: 'GET',
      path: '/ceph/nodes/{nodeId}/keyrings',
      // Whether the node's monitor is scheduled comes from the leader's run index (CephConfig).
      leader: true,
      summary: "The keyrings of a node's daemons: secrets, for admins and that node's own agent only",
      tags: ['ceph'],
      agent: 'also',
      admin: true,
      params: object({ nodeId: uuidSchema }, ['nodeId']),
      response: {
        description: 'keyrings',
        schema: object(
          {
            nodeId: uuidSchema,
            keyrings: { type: 'array', items: object({ entity: { type: 'string' }, keyring: { type: 'string' } }, ['entity', 'keyring']) },
          },
          ['nodeId', 'keyrings'],
        ),
      },
      errors: [403, 404],
      handler: async ({ params, principal, agent }) => {
        if (!mayReadNodeSecrets(principal ?? agent, params.nodeId))
          throw new ForbiddenError("only an admin or the node's own agent may read its keyrings");
        return { nodeId: params.nodeId, keyrings: await config.keyringsOf(params.nodeId) };
      },
    }),
    route<{ adminKeyring: boolean }, unknown, { nodeId: string }>({
      method: 'POST',
      path: '/ceph/nodes/{nodeId}/admin-keyring',
      tags: ['ceph'],
      admin: true,
      summary:
        'Make a node an admin node (`adminKeyring: true`: its agent is also handed client.admin) or not (the default: only the master holds client.admin)',
      params: object({ nodeId: uuidSchema }, ['nodeId']),
      body: object({ adminKeyring: { type: 'boolean' } }, ['adminKeyring']),
      response: { description: 'updated', schema: statusSchema('updated') },
      errors: [404, 409],
      handler: async ({ params, body }) => {
        await config.setAdminKeyring(params.nodeId, body.adminKeyring);
        return { status: 'updated' };
      },
    }),
    route<unknown, unknown, { nodeId: string }>({
      method: 'GET',
      path: '/ceph/nodes/{nodeId}/state',
      summary: "A node's Ceph daemons: desired and running",
      tags: ['ceph'],
      params: object({ nodeId: uuidSchema }, ['nodeId']),
      response: { description: 'node Ceph state', schema: object(nodeStateProps, Object.keys(nodeStateProps)) },
      errors: [404],
      handler: async ({ params }) => {
        const node = await inventory.mustNode(params.nodeId);
        const running = node.status.daemons ?? {};
        const want = node.spec.daemons;
        const osdIds = (await inventory.disksOf(node)).map((d) => d.status.osdId).filter((id): id is number => typeof id === 'number');
        return {
          nodeId: node.id,
          // A daemon counts when it is both wanted and running: the state an operator relies on.
          ...Object.fromEntries(NODE_DAEMON_TYPES.map((t) => [t, !!want[t] && running[t] === true])),
          osdIds: osdIds.sort((a, b) => a - b),
        };
      },
    }),
  ];
}
