// The kinds of the storage cluster: the one Cluster, and the keys Quarry holds for it.
import type { CommonStatus } from './conditions.js';
import { CRUSH_TYPES } from './crush.js';

type JsonSchema = Record<string, unknown>;

export const CephKind = { Cluster: 'Cluster', Keyring: 'Keyring' } as const;

/** The id of the one Cluster document. */
export const CLUSTER_ID = 'default';

export interface ClusterSpec {
  fsid: string;
  /** CIDRs daemons bind in; null lets Ceph pick the address of the node's boot NIC. */
  publicNetwork: string | null;
  clusterNetwork: string | null;
  /** msgr2 port of the monitors; msgr1 is monPort + 1 when monPort is not 3300. */
  monPort: number;
  poolDefaults: { size: number; minSize: number };
  /** CRUSH levels a node's labels place its host under, root-most first (crush.ts; default
   * datacenter, room, row, rack), and the failure domain of Quarry's replicated rule (default host). */
  crushLevels?: string[];
  failureDomain?: string;
}

export interface ClusterMetrics {
  health: string;
  monCount: number;
  osdCount: number;
  osdUp: number;
  osdIn: number;
  pgCount: number;
  poolCount: number;
  usedBytes: number;
  availableBytes: number;
  totalBytes: number;
}

/** The CRUSH map as the cluster loop last saw it against the nodes' labels (crush.ts). */
export interface CrushStatus {
  failureDomain: string;
  /** The Quarry rule (quarry-<type>) pools are on; null while they are on the default rule. */
  rule: string | null;
  /** Each host bucket's place, root first ("default/r1/storage-1"'s parents: "default/r1"). */
  hosts: Record<string, string>;
  /** What it is doing or waiting for. */
  message: string;
}

/** Written by the cluster loop from `ceph status` and `ceph mon getmap`; the API only reads it. */
export interface ClusterStatus extends CommonStatus {
  /** The first monitor has created the cluster. */
  bootstrapped?: boolean;
  monmapEpoch?: number;
  /** The binary monmap of that epoch, base64. */
  monmap?: string;
  quorum?: string[];
  metrics?: ClusterMetrics;
  crush?: CrushStatus;
  /** Ceph's health checks (`ceph health detail`, at most HEALTH_DETAIL_MAX lines each), which
   * GET /status attaches to the objects they name (src/model/readiness.ts). */
  healthChecks?: HealthCheckSeen[];
}

/** One of Ceph's health checks as the cluster loop stored it (`ceph health detail`). */
export interface HealthCheckSeen {
  code: string;
  severity: 'HEALTH_OK' | 'HEALTH_WARN' | 'HEALTH_ERR';
  message: string;
  count: number;
  detail: string[];
}

/** Detail lines kept per health check (Ceph itself stops at 50). */
export const HEALTH_DETAIL_MAX = 50;

/** A cephx identity. The key is in status: Quarry generated or fetched it, nobody declared it. */
export interface KeyringSpec {
  entity: string;
  /** The node whose daemon uses it; null for cluster-wide keys (mon., client.admin). */
  nodeId: string | null;
  caps: Record<string, string>;
}

export interface KeyringStatus {
  key?: string;
  /** The master put this key into the cluster's auth database itself (`auth import`):
   * client.admin, which no node's mkfs carries. */
  imported?: boolean;
}

/** The two CRUSH fields of a Cluster spec; their order and consistency are checked by
 * crushSpecErrors (crush.ts), which a schema cannot say. */
export const crushLevelsSchema: JsonSchema = {
  type: 'array',
  items: { enum: [...CRUSH_TYPES] },
  maxItems: CRUSH_TYPES.length,
  uniqueItems: true,
  description: 'CRUSH bucket types a node label places its host under, root-most first (default: datacenter, room, row, rack)',
};
export const failureDomainSchema: JsonSchema = {
  enum: ['host', ...CRUSH_TYPES],
  description: "failure domain of the replicated rule of Quarry's pools: host (the default) or one of crushLevels",
};

const cidr: JsonSchema = { type: ['string', 'null'], pattern: '^[0-9.]+/[0-9]{1,2}$' };
const count = { type: 'integer', minimum: 0 };

export const clusterSchemas = {
  spec: {
    type: 'object',
    required: ['fsid', 'publicNetwork', 'clusterNetwork', 'monPort', 'poolDefaults'],
    additionalProperties: false,
    properties: {
      fsid: { type: 'string', format: 'uuid' },
      publicNetwork: cidr,
      clusterNetwork: cidr,
      monPort: { type: 'integer', minimum: 1, maximum: 65534 },
      poolDefaults: {
        type: 'object',
        required: ['size', 'minSize'],
        additionalProperties: false,
        properties: { size: { type: 'integer', minimum: 1, maximum: 10 }, minSize: { type: 'integer', minimum: 1, maximum: 10 } },
      },
      crushLevels: crushLevelsSchema,
      failureDomain: failureDomainSchema,
    },
  },
  status: {
    type: 'object',
    additionalProperties: true,
    properties: {
      bootstrapped: { type: 'boolean' },
      monmapEpoch: count,
      monmap: { type: 'string' },
      quorum: { type: 'array', items: { type: 'string' } },
      metrics: {
        type: 'object',
        additionalProperties: false,
        required: ['health', 'monCount', 'osdCount', 'osdUp', 'osdIn', 'pgCount', 'poolCount', 'usedBytes', 'availableBytes', 'totalBytes'],
        properties: {
          health: { enum: ['HEALTH_OK', 'HEALTH_WARN', 'HEALTH_ERR'] },
          monCount: count,
          osdCount: count,
          osdUp: count,
          osdIn: count,
          pgCount: count,
          poolCount: count,
          usedBytes: count,
          availableBytes: count,
          totalBytes: count,
        },
      },
    },
  },
} satisfies { spec: JsonSchema; status: JsonSchema };

export const keyringSchemas = {
  spec: {
    type: 'object',
    required: ['entity', 'nodeId', 'caps'],
    additionalProperties: false,
    properties: {
      entity: { type: 'string', pattern: '^(mon\\.|client\\.[A-Za-z0-9._-]+|(mgr|mds|osd)\\.[A-Za-z0-9._-]+)$' },
      nodeId: { type: ['string', 'null'], format: 'uuid' },
      caps: { type: 'object', additionalProperties: { type: 'string' } },
    },
  },
  status: {
    type: 'object',
    additionalProperties: false,
    properties: { key: { type: 'string', pattern: '^[A-Za-z0-9+/]{38}==$' }, imported: { type: 'boolean' } },
  },
} satisfies { spec: JsonSchema; status: JsonSchema };
