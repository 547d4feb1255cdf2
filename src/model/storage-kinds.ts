// What the cluster stores for its clients: CephFS filesystems and RGW (S3) users. An RGW
// user's secret key lives in a document of its own kind, so that no read of a user's status,
// and no listing of users, can ever carry it.
import { DAEMONS } from '../catalogue/index.js';
import type { CommonStatus } from './conditions.js';
import { nameUuid } from './ids.js';

type JsonSchema = Record<string, unknown>;

export const StorageKind = { Filesystem: 'Filesystem', RgwUser: 'RgwUser', RgwUserSecret: 'RgwUserSecret' } as const;

/** radosgw's own default port; every gateway Quarry starts listens on it. */
export const RGW_PORT = DAEMONS.rgw.startArgs.port;

/** Ids follow the names Ceph knows them by, so a second declaration finds the first. */
export const filesystemId = (name: string): string => nameUuid('quarry/filesystem', name);
export const rgwUserId = (userId: string): string => nameUuid('quarry/rgw-user', userId);

export interface FilesystemSpec {
  name: string;
  metadataPool: string;
  metadataPG: number;
  dataPool: string;
  dataPG: number;
  /** A file's `state: absent`: delete it and its pools, once an operator says "yes". */
  absent?: boolean;
}

export interface PoolSeen {
  name: string;
  pgNum: number;
}

export interface FilesystemStatus extends CommonStatus {
  phase?: 'pending' | 'blocked' | 'creating' | 'ready' | 'degraded' | 'failed' | 'deleting';
  /** The filesystem's pools as Ceph lists them (absent ones are missing). */
  pools?: PoolSeen[];
  /** `ceph fs ls` shows the filesystem over its two pools. */
  created?: boolean;
  mdsActive?: boolean;
  /** The MDS holding rank 0, when one does. */
  activeMds?: string | null;
}

export interface RgwUserSpec {
  userId: string;
  displayName: string;
  email?: string;
  /** A file's `state: absent`: delete it and its buckets, once an operator says "yes". */
  absent?: boolean;
}

export interface RgwUserStatus extends CommonStatus {
  phase?: 'pending' | 'blocked' | 'creating' | 'ready' | 'failed' | 'deleting';
  /** Not a secret: it names the key pair, like a username. */
  accessKey?: string;
}

/** Same id as its RgwUser. The access key is in spec to pair it with the secret in status. */
export interface RgwUserSecretSpec {
  userId: string;
  accessKey: string;
}

export interface RgwUserSecretStatus {
  secretKey?: string;
  /** When POST /gateways/rgw/users handed the secret out; it is shown once. */
  shownAt?: string | null;
}

export const POOL_NAME_PATTERN = '^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$';
export const RGW_USER_ID_PATTERN = '^[a-z0-9][a-z0-9_-]{0,62}$';
const poolName = { type: 'string', pattern: POOL_NAME_PATTERN };
const pg = { type: 'integer', minimum: 1, maximum: 4096 };

export const filesystemSchemas = {
  spec: {
    type: 'object',
    required: ['name', 'metadataPool', 'metadataPG', 'dataPool', 'dataPG'],
    additionalProperties: false,
    properties: { name: poolName, metadataPool: poolName, metadataPG: pg, dataPool: poolName, dataPG: pg, absent: { type: 'boolean' } },
  },
  status: {
    type: 'object',
    additionalProperties: false,
    // phase, conditions and observedGeneration are added where the kinds are registered.
    properties: {
      pools: {
        type: 'array',
        items: {
          type: 'object',
          required: ['name', 'pgNum'],
          additionalProperties: false,
          properties: { name: poolName, pgNum: { type: 'integer', minimum: 0 } },
        },
      },
      created: { type: 'boolean' },
      mdsActive: { type: 'boolean' },
      activeMds: { type: ['string', 'null'] },
    },
  },
} satisfies { spec: JsonSchema; status: JsonSchema };

export const rgwUserSchemas = {
  spec: {
    type: 'object',
    required: ['userId', 'displayName'],
    additionalProperties: false,
    properties: {
      userId: { type: 'string', pattern: RGW_USER_ID_PATTERN },
      displayName: { type: 'string', minLength: 1, maxLength: 256 },
      email: { type: 'string', maxLength: 254 },
      absent: { type: 'boolean' },
    },
  },
  status: {
    type: 'object',
    // A secret key has no place here: the schema refuses any field it does not name.
    additionalProperties: false,
    properties: { accessKey: { type: 'string', minLength: 1 } },
  },
} satisfies { spec: JsonSchema; status: JsonSchema };

export const rgwUserSecretSchemas = {
  spec: {
    type: 'object',
    required: ['userId', 'accessKey'],
    additionalProperties: false,
    properties: { userId: { type: 'string', pattern: RGW_USER_ID_PATTERN }, accessKey: { type: 'string', minLength: 1 } },
  },
  status: {
    type: 'object',
    additionalProperties: false,
    properties: { secretKey: { type: 'string', minLength: 1 }, shownAt: { type: ['string', 'null'], format: 'date-time' } },
  },
} satisfies { spec: JsonSchema; status: JsonSchema };
