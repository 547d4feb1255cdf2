// The storage cluster as the loops observed it: metrics, the ceph.conf every worker uses and
// its hash, the monmap, and each node's Ceph state. Reads of stored status only; nothing here
// talks to Ceph (the cluster loop does, and writes what it saw).
import { NODE_DAEMON_TYPES } from '../../catalogue/index.js';
import { createHash } from 'node:crypto';
import { ForbiddenError, ServiceUnavailableError } from '../../errors.js';
import { keyringText } from '../../model/keyring.js';
import { CLUSTER_ID, CephKind, type ClusterSpec, type ClusterStatus, type KeyringSpec, type KeyringStatus } from '../../model/ceph-kinds.js';
import { mayReadNodeSecrets } from '../auth/principal.js';
import type { Doc } from '../../model/document.js';
import { CephConfRenderer, monitorsForConf, type CephConfContext } from '../../render/ceph-conf.js';
import type { Store } from '../../store/types.js';
import type { Inventory } from '../inventory.js';
import { route, type AnyRoute } from '../route.js';
import { object, statusSchema, uuidSchema } from '../schemas.js';
import { Kind, type NodeSpec } from '../../model/kinds.js';
import { MON_CREATE_TASKS, nodeMayHold } from '../node-keys.js';

const unavailable = (message: string) => new ServiceUnavailableError(message, 'CLUSTER_UNAVAILABLE');

const int = { type: 'integer', minimum: 0 };
const metricsProps = {
  health: { enum: ['HEALTH_OK', 'HEALTH_WARN', 'HEALTH_ERR'] },
  monCount: int, osdCount: int, osdUp: int, osdIn: int, pgCount: int, poolCount: int,
  usedBytes: int, availableBytes: int, totalBytes: int,
};
const nodeStateProps = {
  nodeId: uuidSchema,
  ...Object.fromEntries(NODE_DAEMON_TYPES.map((t) => [t, { type: 'boolean' }])),
  osdIds: { type: 'array', items: int },
};

export class CephConfig {
  constructor(
    private readonly store: Store,
    private readonly inventory: Pick<Inventory, 'nodes' | 'mustNode'>,
    private readonly renderer: CephConfRenderer,
    /** The task runs, to know when a node's monitor is scheduled; without them a node gets
     * `mon.` only once its monitor runs. */
    private readonly runs?: { latestFor(kind: string, id: string, taskName?: string): Promise<unknown> },
  ) {}

  /** The keys of the daemons scheduled on a node, and client.admin only for an admin node
   * (node-keys.ts has the rule). */
  async keyringsOf(nodeId: string): Promise<Array<{ entity: string; keyring: string }>> {
    const node = await this.inventory.mustNode(nodeId);
    const all = await this.store.list<KeyringSpec, KeyringStatus>(CephKind.Keyring);
    const monScheduled = node.spec.daemons.mon !== undefined && (await this.monScheduled(nodeId));
    return all
      .filter((k) => k.status.key && nodeMayHold(node, k.spec, monScheduled))
      .map((k) => ({ entity: k.spec.entity, keyring: keyringText({ entity: k.spec.entity, key: k.status.key!, caps: k.spec.caps }) }))
      .sort((a, b) => a.entity.localeCompare(b.entity));
  }

  /** Whether the monitor loop has started creating this node's monitor (any run of it). */
  private async monScheduled(nodeId: string): Promise<boolean> {
    if (!this.runs) return false;
    const runs = await Promise.all(MON_CREATE_TASKS.map((t) => this.runs!.latestFor(Kind.Node, nodeId, t)));
    return runs.some((r) => r !== undefined);
  }

  /** Makes a node an admin node (its agent is handed client.admin) or not. A specs file that
   * names the field owns it (409 SPEC_OWNED). */
  async setAdminKeyring(nodeId: string, on: boolean): Promise<void> {
    await this.inventory.mustNode(nodeId);
    await this.store.mutateSpec<NodeSpec>(Kind.Node, nodeId, (fresh) => {
      if ((fresh.spec.adminKeyring === true) === on) return undefined;
      const { adminKeyring: _, ...rest } = fresh.spec;
      return on ? { ...rest, adminKeyring: true } : rest;
    });
  }

  async cluster(): Promise<Doc<ClusterSpec, ClusterStatus>> {
    return this.store.mustGet<ClusterSpec, ClusterStatus>(CephKind.Cluster, CLUSTER_ID);
  }

  /** The rendered ceph.conf: what GET /ceph/cluster/config serves and its hash covers. */
  async text(): Promise<string> {
    return this.renderer.renderConf(await this.context());
  }

  /** What the ceph.conf template sees, here and in GET /templates/rendered/ceph.conf. */
  async context(): Promise<CephConfContext> {
    const { spec } = await this.cluster();
    const mons = (await this.inventory.nodes())
      .filter((n) => n.spec.daemons.mon)
      .map((n) => ({ hostname: n.spec.hostname, ip: n.status.ip ?? '', running: n.status.daemons?.mon === true }));
    return {
      fsid: spec.fsid,
      ...monitorsForConf(mons, spec.monPort),
      publicNetwork: spec.publicNetwork,
      clusterNetwork: spec.clusterNetwork,
      poolDefaults: spec.poolDefaults,
    };
  }
}

export function cephRoutes(config: CephConfig, inventory: Inventory): AnyRoute[] {
  return [
    route({
      method: 'GET', path: '/ceph/metrics', summary: 'Cluster health, daemon counts, placement groups and capacity, as last observed', tags: ['ceph'],
      response: { description: 'metrics', schema: object(metricsProps, Object.keys(metricsProps)) },
      errors: [503],
      handler: async () => {
        const m = (await config.cluster()).status.metrics;
        if (!m) throw unavailable('no metrics yet: the cluster has not reached monitor quorum');
        return m;
      },
    }),
    route({
      method: 'GET', path: '/ceph/cluster/config', summary: 'The ceph.conf every node uses, base64', tags: ['ceph'],
      // Every node's agent writes this file for its daemons (no secret in it).
      agent: 'also',
      response: { description: 'config', schema: object({ config: { type: 'string', contentEncoding: 'base64' } }, ['config']) },
      errors: [422], // the ceph.conf template fails to render
      handler: async () => ({ config: Buffer.from(await config.text()).toString('base64') }),
    }),
    route({
      method: 'GET', path: '/ceph/cluster/config/hash', summary: 'SHA-256 of exactly the bytes GET /ceph/cluster/config encodes', tags: ['ceph'],
      // Agents compare their copy with it.
      agent: 'also',
      response: { description: 'hash', schema: object({ hash: { type: 'string', pattern: '^[0-9a-f]{64}$' } }, ['hash']) },
      errors: [422], // the ceph.conf template fails to render
      handler: async () => ({ hash: createHash('sha256').update(await config.text()).digest('hex') }),
    }),
    route({
      method: 'GET', path: '/ceph/monmap', summary: 'The current monitor map, binary', tags: ['ceph'],
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
      method: 'GET', path: '/ceph/nodes/{nodeId}/keyrings', summary: "The keyrings of a node's daemons: secrets, for admins and that node's own agent only", tags: ['ceph'],
      agent: 'also',
      admin: true,
      params: object({ nodeId: uuidSchema }, ['nodeId']),
      response: {
        description: 'keyrings',
        schema: object({ nodeId: uuidSchema, keyrings: { type: 'array', items: object({ entity: { type: 'string' }, keyring: { type: 'string' } }, ['entity', 'keyring']) } }, ['nodeId', 'keyrings']),
      },
      errors: [403, 404],
      handler: async ({ params, principal, agent }) => {
        if (!mayReadNodeSecrets(principal ?? agent, params.nodeId)) throw new ForbiddenError("only an admin or the node's own agent may read its keyrings");
        return { nodeId: params.nodeId, keyrings: await config.keyringsOf(params.nodeId) };
      },
    }),
    route<{ adminKeyring: boolean }, unknown, { nodeId: string }>({
      method: 'POST', path: '/ceph/nodes/{nodeId}/admin-keyring', tags: ['ceph'], admin: true,
      summary: "Make a node an admin node (`adminKeyring: true`: its agent is also handed client.admin) or not (the default: only the master holds client.admin)",
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
      method: 'GET', path: '/ceph/nodes/{nodeId}/state', summary: "A node's Ceph daemons: desired and running", tags: ['ceph'],
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
