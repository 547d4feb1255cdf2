// The kinds a specs file declares, each with the one JSON Schema of its spec. Networks,
// filesystems and RGW users share theirs with the API routes that declare them (the same
// objects, as are template settings); nodes, images and the cluster say in a file what the API says through operations:
// nodes and disks by identities an operator knows (MAC, hostname, serial, device path),
// because ids are Quarry's.
import { DAEMONS, DEVICE_CLASSES, NODE_DAEMON_TYPES, type DaemonEntry } from '../catalogue/index.js';
import { crushLevelsSchema, failureDomainSchema } from './ceph-kinds.js';
import { budgetSettingsSchema } from './disruption-settings.js';
import { ID_OR_SHORT_PATTERN } from './image-kinds.js';
import { networkInputSchema } from './network-input.js';
import { filesystemInputSchema, rgwUserInputSchema } from './storage-input.js';
import { templateSettingsSchema } from './template-kinds.js';
import { bmcAddressSchema, bmcPortSchema, bmcUsernameSchema } from './schemas.js';

type JsonSchema = Record<string, unknown>;

export const SPEC_API_VERSION = 'quarry/v1';

export const SpecKind = {
  Cluster: 'Cluster',
  Network: 'Network',
  Image: 'Image',
  Node: 'Node',
  Filesystem: 'Filesystem',
  RgwUser: 'RgwUser',
  /** A template's settings; the template is named by metadata.name. */
  Template: 'Template',
} as const;
export type SpecKind = (typeof SpecKind)[keyof typeof SpecKind];

const mac = { type: 'string', pattern: '^[0-9A-Fa-f]{2}([:-][0-9A-Fa-f]{2}){5}$' };
const hostname = { type: 'string', pattern: '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$' };
const cidr = { type: ['string', 'null'], pattern: '^[0-9.]+/[0-9]{1,2}$' };
/** `state: absent` is the only way a file removes what holds data. */
export const stateSchema: JsonSchema = { enum: ['present', 'absent'], default: 'present' };
/** "1TB", "960 GB", "1.5TiB" or a number of bytes. */
export const SIZE_PATTERN = '^[0-9]+(\\.[0-9]+)? ?([KMGTP]i?B|B)?$';
const size = {
  anyOf: [
    { type: 'integer', minimum: 0 },
    { type: 'string', pattern: SIZE_PATTERN },
  ],
};

export const diskRefSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  maxProperties: 1,
  properties: { serial: { type: 'string', minLength: 1, maxLength: 128 }, path: { type: 'string', pattern: '^/dev/[A-Za-z0-9/_.-]+$' } },
};

/** One disk by serial or path, or every eligible disk that matches the filters. */
export const diskSelectorSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
    serial: { type: 'string', minLength: 1, maxLength: 128 },
    path: { type: 'string', pattern: '^/dev/[A-Za-z0-9/_.-]+$' },
    all: { const: true, description: 'every eligible disk of the node (with the filters below)' },
    rotational: { type: 'boolean' },
    interface: { enum: ['sata', 'sas', 'nvme', 'scsi', 'virtio'] },
    minSize: size,
    maxSize: size,
    // `absent` on a disk with an OSD removes it: drained, purged, the disk wiped and eligible again.
    state: stateSchema,
    replaces: {
      type: 'string',
      minLength: 1,
      maxLength: 128,
      description:
        'serial of a disk of the same node whose OSD this one takes over, id and CRUSH position kept (the old OSD is destroyed first unless it is already)',
    },
    deviceClass: {
      enum: [...DEVICE_CLASSES],
      description: 'CRUSH device class of the OSD; default: from the disk (nvme, hdd if rotational, else ssd)',
    },
  },
  // Exactly one of serial, path and all: said in words by the resolver, which ajv's oneOf cannot.
  minProperties: 1,
};

const daemon = (extra: Record<string, JsonSchema> = {}): JsonSchema => ({
  type: 'object',
  additionalProperties: false,
  properties: { ...extra, state: stateSchema },
});

/** The environment variables a file may take a BMC password from: Quarry's own others
 * (SECRETS_KEY, ...) are out of a file's reach. */
export const BMC_PASSWORD_ENV_PATTERN = '^QUARRY_BMC_[A-Z0-9_]{1,64}$';

/** A node's BMC in a file: its password only by reference (a file lives in git). */
const bmcInputSchema: JsonSchema = {
  type: 'object',
  required: ['address', 'username'],
  additionalProperties: false,
  properties: {
    address: bmcAddressSchema,
    port: bmcPortSchema,
    username: bmcUsernameSchema,
    passwordFrom: {
      type: 'object',
      required: ['env'],
      additionalProperties: false,
      properties: { env: { type: 'string', pattern: BMC_PASSWORD_ENV_PATTERN, description: "a variable of Quarry's environment" } },
      description: 'where Quarry reads the password: { env: QUARRY_BMC_<NAME> }',
    },
    // Named so that a plaintext password gets a clear refusal, not "additional property".
    password: { type: 'string', description: 'refused: a password in a file would be in git; use passwordFrom' },
  },
  description: "its BMC (IPMI over LAN), the password from Quarry's environment (passwordFrom: { env: QUARRY_BMC_<NAME> })",
};

export const nodeInputSchema: JsonSchema = {
  type: 'object',
  required: ['match'],
  additionalProperties: false,
  properties: {
    match: {
      type: 'object',
      additionalProperties: false,
      minProperties: 1,
      maxProperties: 1,
      properties: { mac, hostname },
      description: 'the machine: by the MAC of one of its NICs, or its hostname',
    },
    role: { enum: ['master', 'worker'], default: 'worker' },
    power: { enum: ['on', 'off'], default: 'on' },
    image: { type: ['string', 'null'], pattern: ID_OR_SHORT_PATTERN, default: null },
    daemons: {
      type: 'object',
      additionalProperties: false,
      default: {},
      // One per node daemon of the catalogue; one that needsDisk names its disk.
      properties: Object.fromEntries(
        NODE_DAEMON_TYPES.map((t) => {
          const d: DaemonEntry = DAEMONS[t];
          const schema = daemon({ ...(d.needsDisk ? { disk: diskRefSchema } : {}), ...d.params });
          return [t, d.required?.length ? { ...schema, required: [...d.required] } : schema];
        }),
      ),
    },
    osds: { type: 'array', items: diskSelectorSchema, maxItems: 256, default: [] },
    // No default: a file that does not name it leaves it to the API (and does not own it).
    adminKeyring: {
      type: 'boolean',
      description: 'an admin node: its agent is also handed client.admin (default: only the master holds it)',
    },
    // No default either: a file that names them owns them.
    bmc: bmcInputSchema,
    fencing: { enum: ['none', 'bmc'], description: '`bmc`: a hung node may be power-cycled through its BMC (default none)' },
    // The file owns it whether it names it or not: removing the line ends the maintenance.
    maintenance: { type: 'boolean', description: 'the node in maintenance: noout, its Ceph daemons stopped (default false)' },
  },
};

export const imageInputSchema: JsonSchema = {
  type: 'object',
  required: ['id'],
  additionalProperties: false,
  properties: {
    id: { type: 'string', pattern: ID_OR_SHORT_PATTERN, description: 'catalog id, full or its first 8 hex digits' },
    downloaded: { type: 'boolean', default: true },
    default: { type: 'boolean', default: false, description: 'the boot image; at most one' },
  },
};

export const clusterInputSchema: JsonSchema = {
  type: 'object',
  additionalProperties: false,
  properties: {
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
    disruptionBudget: budgetSettingsSchema,
  },
};

export const specInputSchemas: Record<SpecKind, JsonSchema> = {
  [SpecKind.Cluster]: clusterInputSchema,
  [SpecKind.Network]: networkInputSchema,
  [SpecKind.Image]: imageInputSchema,
  [SpecKind.Node]: nodeInputSchema,
  [SpecKind.Filesystem]: filesystemInputSchema,
  [SpecKind.RgwUser]: rgwUserInputSchema,
  [SpecKind.Template]: templateSettingsSchema,
};

/** The envelope of every document; `spec.state` is taken off before the kind's schema sees it. */
export const envelopeSchema: JsonSchema = {
  type: 'object',
  required: ['apiVersion', 'kind', 'metadata', 'spec'],
  additionalProperties: false,
  properties: {
    apiVersion: { const: SPEC_API_VERSION },
    kind: { enum: Object.values(SpecKind) },
    metadata: {
      type: 'object',
      required: ['name'],
      additionalProperties: false,
      properties: {
        name: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$' },
        labels: { type: 'object', maxProperties: 64, additionalProperties: { type: 'string', maxLength: 256 } },
      },
    },
    spec: { type: 'object', properties: { state: stateSchema } },
  },
};

const UNITS: Record<string, number> = {
  B: 1,
  KB: 1e3,
  MB: 1e6,
  GB: 1e9,
  TB: 1e12,
  PB: 1e15,
  KiB: 2 ** 10,
  MiB: 2 ** 20,
  GiB: 2 ** 30,
  TiB: 2 ** 40,
  PiB: 2 ** 50,
};

/** Bytes of a size the schema admitted. */
export function sizeBytes(size: number | string): number {
  if (typeof size === 'number') return size;
  const m = /^([0-9.]+) ?([A-Za-z]*)$/.exec(size);
  return Math.round(Number(m?.[1] ?? 0) * (UNITS[m?.[2] || 'B'] ?? 1));
}
