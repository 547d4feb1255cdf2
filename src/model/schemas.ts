// JSON Schemas of each kind's spec and status. One source of truth: the store validates
// documents with them, and the HTTP layer and the specs folder reuse the spec schemas.
import { DAEMONS, DEVICE_CLASSES, NODE_DAEMON_TYPES, type DaemonEntry, type NodeDaemonType } from '../catalogue/index.js';
import { CephKind, clusterSchemas, keyringSchemas } from './ceph-kinds.js';
import { DisruptionKind, disruptionBudgetSchemas } from './disruption-kinds.js';
import { ipOrEmptySchema } from './agent-report.js';
import { ImageKind, imageSchemas } from './image-kinds.js';
import { DISK_HISTORY_EVENTS, DISK_HISTORY_MAX, Kind, OSD_PHASES, OsdRemoval } from './kinds.js';
import { StorageKind, filesystemSchemas, rgwUserSchemas, rgwUserSecretSchemas } from './storage-kinds.js';
import { NetworkKind, networkSchemas } from './network-kinds.js';
import { TemplateKind, templateSchemas, templateVersionSchemas } from './template-kinds.js';
import { TokenKind, apiTokenSchemas, signingKeySchemas } from './token-kinds.js';
import { AuditKind, auditEntrySchemas } from './audit-kinds.js';
import { FleetKind, nodeHeartbeatSchemas, nodeInventorySchemas } from './fleet-kinds.js';
import { BootKind, nodeBootsSchemas } from './boot-kinds.js';

export type JsonSchema = Record<string, unknown>;

const uuid = { type: 'string', format: 'uuid' } as const;
const count = { type: 'integer', minimum: 0 } as const;
const timestamp = { type: 'string', format: 'date-time' } as const;
const nullableString = { type: ['string', 'null'] } as const;

export const conditionSchema: JsonSchema = {
  type: 'object',
  required: ['type', 'status', 'reason', 'message', 'lastTransitionTime', 'observedGeneration'],
  additionalProperties: false,
  properties: {
    type: { type: 'string', minLength: 1 },
    status: { enum: ['True', 'False', 'Unknown'] },
    reason: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9]*$' },
    message: { type: 'string', maxLength: 4096 },
    lastTransitionTime: timestamp,
    observedGeneration: count,
  },
};

const commonStatus = {
  phase: { type: 'string' },
  conditions: { type: 'array', items: conditionSchema },
  observedGeneration: count,
} as const;

const hostname = { type: 'string', pattern: '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$' } as const;
const mac = { type: 'string', pattern: '^[0-9a-f]{2}(:[0-9a-f]{2}){5}$' } as const;
const empty = { type: 'object', additionalProperties: false, properties: {} } as const;

/** A node daemon's entry in NodeSpec.daemons. */
function daemonSpecSchema(t: NodeDaemonType): JsonSchema {
  const d: DaemonEntry = DAEMONS[t];
  const required = [...(d.needsDisk ? ['diskId'] : []), ...(d.required ?? [])];
  return {
    type: 'object',
    ...(required.length ? { required } : {}),
    additionalProperties: false,
    properties: { ...(d.needsDisk ? { diskId: uuid } : {}), ...d.params },
  };
}

/** What a Ceph daemon loop last concluded about its daemon on a node (or an OSD on a disk). */
export const daemonStateSchema: JsonSchema = {
  type: 'object',
  required: ['phase', 'reason', 'message'],
  additionalProperties: false,
  properties: {
    phase: { enum: ['pending', 'blocked', 'starting', 'running', 'failed', 'orphaned'] },
    reason: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9]*$' },
    message: { type: 'string', maxLength: 4096 },
  },
};

/** A BMC as ipmitool is given it: an IPv4 address or a hostname, a UDP port, an IPMI user
 * name (at most 16 bytes) and password (at most 20 bytes: IPMI v2's limit), printable only. */
export const bmcAddressSchema: JsonSchema = {
  type: 'string',
  maxLength: 253,
  pattern: '^[A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?$',
  description: 'an IPv4 address or a hostname',
};
export const bmcUsernameSchema: JsonSchema = { type: 'string', pattern: '^[A-Za-z0-9._@-]{1,16}$', description: 'an IPMI user name' };
export const bmcPasswordSchema: JsonSchema = {
  type: 'string',
  minLength: 1,
  maxLength: 20,
  pattern: '^[\\x20-\\x7e]+$',
  description: 'an IPMI password (printable ASCII, at most 20)',
};
export const bmcPortSchema: JsonSchema = { type: 'integer', minimum: 1, maximum: 65535 };
const bmcSpecSchema: JsonSchema = {
  type: 'object',
  required: ['address', 'username', 'password'],
  additionalProperties: false,
  properties: { address: bmcAddressSchema, port: bmcPortSchema, username: bmcUsernameSchema, password: bmcPasswordSchema },
};

export const nodeSpecSchema: JsonSchema = {
  type: 'object',
  required: ['hostname', 'macs', 'role', 'image', 'power', 'restartGeneration', 'shutdownGeneration', 'daemons'],
  additionalProperties: false,
  properties: {
    hostname,
    macs: { type: 'array', items: mac, minItems: 1, maxItems: 16, uniqueItems: true },
    role: { enum: ['master', 'worker'] },
    image: nullableString,
    power: { enum: ['on', 'off'] },
    restartGeneration: count,
    shutdownGeneration: count,
    approved: { type: 'boolean' },
    daemons: {
      type: 'object',
      additionalProperties: false,
      // One per node daemon of the catalogue: { diskId } for one that needsDisk, else its params.
      properties: Object.fromEntries(NODE_DAEMON_TYPES.map((t) => [t, daemonSpecSchema(t)])),
    },
    adminKeyring: { type: 'boolean', description: 'an admin node: its agent is also handed client.admin' },
    bmc: bmcSpecSchema,
    fencing: { enum: ['none', 'bmc'] },
    powerOnGeneration: count,
    maintenance: { type: 'boolean', description: 'the node is to be in maintenance' },
  },
};

export const nodeStatusSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...commonStatus,
    phase: { enum: ['discovered', 'booting', 'active', 'rebooting', 'shutting-down', 'maintenance', 'offline', 'error'] },
    // What the agent reported, checked again here: it goes into ceph.conf's mon_host.
    ip: ipOrEmptySchema,
    observedRestartGeneration: count,
    observedShutdownGeneration: count,
    observedPowerOnGeneration: count,
    bootCount: count,
    bootLoopResetAt: timestamp,
    bootAddress: { type: 'string', maxLength: 64 },
    bootId: { type: 'string' },
    diskIds: { type: 'array', items: uuid },
    ceph: {
      type: 'object',
      additionalProperties: false,
      properties: Object.fromEntries(NODE_DAEMON_TYPES.map((t) => [t, daemonStateSchema])),
    },
    nics: {
      type: 'array',
      maxItems: 64,
      items: {
        type: 'object',
        required: ['name', 'mac', 'ip', 'connected', 'mtu'],
        additionalProperties: false,
        properties: {
          name: { type: 'string' },
          mac,
          ip: ipOrEmptySchema,
          connected: { type: 'boolean' },
          mtu: { type: 'integer', minimum: 0 },
        },
      },
    },
    daemons: {
      type: 'object',
      additionalProperties: false,
      properties: { ...Object.fromEntries(NODE_DAEMON_TYPES.map((t) => [t, { type: 'boolean' }])), osds: { type: 'array', items: count } },
    },
    disruption: {
      type: 'object',
      required: ['state', 'kind', 'since'],
      additionalProperties: false,
      properties: {
        state: { enum: ['held', 'waiting'] },
        kind: { type: 'string', maxLength: 64 },
        since: timestamp,
        heldBy: { type: 'array', maxItems: 1000, items: { type: 'string', maxLength: 512 } },
        reason: { type: 'string', maxLength: 4096 },
      },
    },
    daemonConfig: {
      type: 'object',
      required: ['bootId', 'hashes'],
      additionalProperties: false,
      properties: {
        bootId: { type: 'string', maxLength: 128 },
        hashes: { type: 'object', maxProperties: 64, additionalProperties: { type: 'string', pattern: '^[0-9a-f]{8,64}$' } },
      },
    },
  },
};

const serialSchema = { type: 'string', minLength: 1, maxLength: 128 } as const;

export const diskSpecSchema: JsonSchema = {
  type: 'object',
  required: ['nodeId', 'serial', 'osd', 'wipeGeneration'], // catalogue-exempt: the field Disk.spec.osd
  additionalProperties: false,
  properties: {
    nodeId: uuid,
    serial: serialSchema,
    osd: { type: 'boolean' },
    wipeGeneration: count,
    osdRemoval: { enum: Object.values(OsdRemoval) },
    deviceClass: { enum: [...DEVICE_CLASSES] },
    replaces: uuid,
  },
};

/** A disk's OSD state: a daemon's, with the removal's and replacement's phases. */
const osdStateSchema: JsonSchema = {
  type: 'object',
  required: ['phase', 'reason', 'message'],
  additionalProperties: false,
  properties: {
    phase: { enum: [...OSD_PHASES] },
    reason: { type: 'string', pattern: '^[A-Za-z][A-Za-z0-9]*$' },
    message: { type: 'string', maxLength: 4096 },
  },
};

export const diskStatusSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    ...commonStatus,
    devicePath: { type: 'string' },
    capacityBytes: count,
    rotational: { type: 'boolean' },
    interface: { type: 'string' },
    model: { type: 'string' },
    vendor: { type: 'string' },
    isSystem: { type: 'boolean' },
    hasFilesystem: { type: 'boolean' },
    present: { type: 'boolean' },
    osdId: { type: ['integer', 'null'], minimum: 0 },
    osdUuid: uuid,
    eligible: { type: 'boolean' },
    reasons: { type: 'array', items: { type: 'string' } },
    observedWipeGeneration: count,
    osd: osdStateSchema,
    label: {
      type: 'object',
      required: ['fsid', 'osdUuid', 'osdId'],
      additionalProperties: false,
      properties: { fsid: { type: 'string', maxLength: 64 }, osdUuid: uuid, osdId: count },
    },
    drain: {
      type: 'object',
      required: ['osdId', 'startPgs', 'startBytes', 'pgs', 'bytes', 'observedAt'],
      additionalProperties: false,
      properties: { osdId: count, startPgs: count, startBytes: count, pgs: count, bytes: count, observedAt: timestamp },
    },
    history: {
      type: 'array',
      maxItems: DISK_HISTORY_MAX,
      items: {
        type: 'object',
        required: ['at', 'event', 'osdId', 'message'],
        additionalProperties: false,
        properties: {
          at: timestamp,
          event: { enum: [...DISK_HISTORY_EVENTS] },
          osdId: { type: ['integer', 'null'], minimum: 0 },
          otherSerial: serialSchema,
          message: { type: 'string', maxLength: 4096 },
        },
      },
    },
    replacedBy: uuid,
  },
};

export const taskRunSpecSchema: JsonSchema = {
  type: 'object',
  required: ['taskName', 'targetKind', 'targetId', 'generation', 'nodeId', 'nodeHostname', 'args', 'timeoutMs', 'attempt'],
  additionalProperties: false,
  properties: {
    taskName: { type: 'string', pattern: '^[a-z][a-z0-9-]*(\\.[a-z][a-z0-9-]*)*$' },
    targetKind: { type: 'string', minLength: 1 },
    targetId: { type: 'string', minLength: 1 },
    targetName: nullableString,
    targetNames: {
      type: 'object',
      additionalProperties: false,
      properties: {
        yamlName: { type: 'string' },
        file: { type: 'string' },
        hostname: { type: 'string' },
        devicePath: { type: 'string' },
        serial: { type: 'string' },
      },
    },
    requestId: nullableString,
    generation: count,
    nodeId: { type: ['string', 'null'], format: 'uuid' },
    nodeHostname: nullableString,
    args: { type: 'object' },
    timeoutMs: { type: 'integer', minimum: 1 },
    attempt: { type: 'integer', minimum: 1 },
  },
};

export const taskRunStatusSchema: JsonSchema = {
  type: 'object',
  required: ['state', 'startedAt', 'completedAt', 'error', 'question', 'result'],
  additionalProperties: false,
  properties: {
    state: { enum: ['pending', 'running', 'completed', 'failed', 'canceled'] },
    startedAt: { anyOf: [timestamp, { type: 'null' }] },
    completedAt: { anyOf: [timestamp, { type: 'null' }] },
    error: nullableString,
    result: { type: ['object', 'null'] },
    question: {
      anyOf: [
        { type: 'null' },
        {
          type: 'object',
          required: ['id', 'prompt', 'options', 'createdAt', 'answer'],
          additionalProperties: false,
          properties: {
            id: uuid,
            prompt: { type: 'string' },
            options: { type: 'array', items: { type: 'string' }, minItems: 1 },
            createdAt: timestamp,
            answer: nullableString,
            answeredBy: { type: 'string' },
            answeredAt: timestamp,
          },
        },
      ],
    },
  },
};

export const userSpecSchema: JsonSchema = {
  type: 'object',
  required: ['username', 'name', 'email', 'isAdmin', 'passwordHash'],
  additionalProperties: false,
  properties: {
    username: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$' },
    name: { type: 'string', maxLength: 256 },
    email: { type: 'string', maxLength: 254 },
    isAdmin: { type: 'boolean' },
    passwordHash: { type: 'string', pattern: '^scrypt\\$' },
  },
};

export const sessionSpecSchema: JsonSchema = {
  type: 'object',
  required: ['userId', 'refreshJti', 'expiresAt'],
  additionalProperties: false,
  properties: {
    userId: { anyOf: [uuid, { type: 'string', pattern: '^agent:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' }] },
    refreshJti: { type: 'string', minLength: 16 },
    expiresAt: timestamp,
  },
};

export const agentCredentialSpecSchema: JsonSchema = {
  type: 'object',
  required: ['nodeId', 'secretHash', 'initialSecret', 'issuedAt', 'firstUsedAt', 'rotatedAt'],
  additionalProperties: false,
  properties: {
    nodeId: uuid,
    secretHash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    initialSecret: { type: ['string', 'null'], minLength: 32, maxLength: 256 },
    issuedAt: timestamp,
    firstUsedAt: { anyOf: [timestamp, { type: 'null' }] },
    rotatedAt: { anyOf: [timestamp, { type: 'null' }] },
    boundAddress: { type: ['string', 'null'], maxLength: 64 },
    expiresAt: { anyOf: [timestamp, { type: 'null' }] },
    claimedBy: { type: ['string', 'null'], maxLength: 64 },
    installHash: { anyOf: [{ type: 'string', pattern: '^[0-9a-f]{64}$' }, { type: 'null' }] },
    conflict: {
      anyOf: [
        { type: 'null' },
        {
          type: 'object',
          required: ['at', 'message'],
          additionalProperties: false,
          properties: { at: timestamp, message: { type: 'string', maxLength: 1024 } },
        },
      ],
    },
  },
};

export interface KindSchemas {
  spec: JsonSchema;
  status: JsonSchema;
}

/** A status schema with the phase, conditions and observedGeneration every kind shares. */
const withCommonStatus = (s: KindSchemas): KindSchemas => ({
  spec: s.spec,
  status: { ...s.status, properties: { ...commonStatus, ...(s.status.properties as object) } },
});

export const kindSchemas: Record<string, KindSchemas> = {
  [Kind.Node]: { spec: nodeSpecSchema, status: nodeStatusSchema },
  [Kind.Disk]: { spec: diskSpecSchema, status: diskStatusSchema },
  [Kind.TaskRun]: { spec: taskRunSpecSchema, status: taskRunStatusSchema },
  [Kind.User]: { spec: userSpecSchema, status: empty },
  [Kind.Session]: { spec: sessionSpecSchema, status: empty },
  [Kind.AgentCredential]: { spec: agentCredentialSpecSchema, status: empty },
  [CephKind.Cluster]: clusterSchemas,
  [CephKind.Keyring]: keyringSchemas,
  [DisruptionKind.DisruptionBudget]: disruptionBudgetSchemas,
  [StorageKind.Filesystem]: withCommonStatus(filesystemSchemas),
  [StorageKind.RgwUser]: withCommonStatus(rgwUserSchemas),
  [StorageKind.RgwUserSecret]: rgwUserSecretSchemas,
  [NetworkKind.Network]: withCommonStatus(networkSchemas),
  [ImageKind.Image]: withCommonStatus(imageSchemas),
  [TemplateKind.Template]: templateSchemas,
  [TemplateKind.TemplateVersion]: templateVersionSchemas,
  [TokenKind.ApiToken]: apiTokenSchemas,
  [TokenKind.SigningKey]: signingKeySchemas,
  [AuditKind.AuditEntry]: auditEntrySchemas,
  [FleetKind.NodeHeartbeat]: nodeHeartbeatSchemas,
  [FleetKind.NodeInventory]: nodeInventorySchemas,
  [BootKind.NodeBoots]: nodeBootsSchemas,
};
