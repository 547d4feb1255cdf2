// What a node's agent may say about its node, as a schema. Every field here ends up somewhere
// an attacker on the provisioning network would like to write: the node's address goes into
// ceph.conf's mon_host (served to every worker) and used to pick where S3 requests go; device
// paths go into node-level steps; names and serials into the API, logs and specs. So each field
// has the shape its source really has (lsblk, `ip -j addr`, the kernel's rules), a bounded
// length, and no control character; every array is bounded. The HTTP route and the in-process
// gateway (src/fleet/gateway.ts) both check reports against this one schema.
import { isIP } from 'node:net';
import { NODE_DAEMON_TYPES } from '../catalogue/index.js';
/** As src/model/schemas.ts has it (not imported: schemas.ts imports this file). */
type JsonSchema = Record<string, unknown>;

const bool: JsonSchema = { type: 'boolean' };

/** An IPv4 or IPv6 address, or '' for none (an agent with no address yet). */
export const ipOrEmptySchema: JsonSchema = {
  type: 'string',
  maxLength: 45,
  anyOf: [{ const: '' }, { format: 'ipv4' }, { format: 'ipv6' }],
  description: "an IPv4 or IPv6 address, '' when none",
};

/** RFC 1123 host name: dot-separated labels of letters, digits and inner hyphens, 63 each, 253 in all. */
export const HOSTNAME_PATTERN =
  '^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$';

/** A device node under /dev: path segments of letters, digits and `_ + : @ . -`, none of them
 * starting with a dot (so no `..`), as lsblk's PATH and /dev/disk/by-* links are. */
export const DEVICE_PATH_PATTERN = '^/dev(?:/[A-Za-z0-9_+:@-][A-Za-z0-9_+:@.-]*)+$';

/** The kernel's rule for interface names (dev_valid_name): 1 to 15 bytes, no '/', ':' or white
 * space, not '.' or '..'; here also printable ASCII only. */
export const NIC_NAME_PATTERN = '^(?!\\.\\.?$)[\\x21-\\x2e\\x30-\\x39\\x3b-\\x7e]{1,15}$';

export const MAC_PATTERN = '^[0-9A-Fa-f]{2}(:[0-9A-Fa-f]{2}){5}$';

/** Printable ASCII (what lsblk prints for serials, models and vendors; it escapes the rest). */
const printable = (min: number, max: number): JsonSchema => ({
  type: 'string',
  minLength: min,
  maxLength: max,
  pattern: '^[\\x20-\\x7e]*$',
});

export const diskReportSchema: JsonSchema = {
  type: 'object',
  required: ['serial', 'devicePath', 'sizeBytes', 'rotational', 'model', 'vendor', 'interface', 'isSystem', 'hasFilesystem'],
  additionalProperties: false,
  properties: {
    // lsblk's serial, else its WWN, else the device path.
    serial: printable(1, 128),
    devicePath: { type: 'string', maxLength: 256, pattern: DEVICE_PATH_PATTERN },
    sizeBytes: { type: 'integer', minimum: 0, maximum: Number.MAX_SAFE_INTEGER },
    rotational: bool,
    model: printable(0, 256),
    vendor: printable(0, 256),
    // lsblk's TRAN (sata, sas, nvme, usb, ...), loop or virtio, or ''.
    interface: { type: 'string', pattern: '^[A-Za-z0-9_-]{0,32}$' },
    isSystem: bool,
    hasFilesystem: bool,
    // The BlueStore label at the head of the disk, when there is one: whose OSD it holds. It
    // decides adoption (this cluster's fsid) and nothing is wiped because of it alone.
    bluestore: {
      type: 'object',
      required: ['fsid', 'osdUuid', 'osdId'],
      additionalProperties: false,
      properties: {
        fsid: { type: 'string', pattern: '^[0-9a-fA-F-]{1,64}$' },
        osdUuid: { type: 'string', format: 'uuid' },
        osdId: { type: 'integer', minimum: 0, maximum: 2 ** 31 - 1 },
      },
    },
  },
};

export const nicReportSchema: JsonSchema = {
  type: 'object',
  required: ['name', 'mac', 'ip', 'connected', 'mtu'],
  additionalProperties: false,
  properties: {
    name: { type: 'string', pattern: NIC_NAME_PATTERN },
    mac: { type: 'string', pattern: MAC_PATTERN },
    ip: ipOrEmptySchema,
    connected: bool,
    mtu: { type: 'integer', minimum: 0, maximum: 65535 },
  },
};

export const daemonReportSchema: JsonSchema = {
  type: 'object',
  // A daemon kind it does not name is not running (an agent older than that kind of the catalogue).
  required: ['osds'],
  additionalProperties: false,
  properties: {
    ...Object.fromEntries(NODE_DAEMON_TYPES.map((t) => [t, bool])),
    osds: { type: 'array', maxItems: 4096, items: { type: 'integer', minimum: 0, maximum: 2 ** 31 - 1 } },
  },
};

export const agentReportSchema: JsonSchema = {
  type: 'object',
  required: ['bootId', 'hostname', 'ip', 'disks', 'nics', 'daemons'],
  additionalProperties: false,
  properties: {
    // The kernel's boot_id is a UUID; anything of that kind of alphabet will do.
    bootId: { type: 'string', pattern: '^[A-Za-z0-9._-]{1,128}$' },
    hostname: { type: 'string', maxLength: 253, pattern: HOSTNAME_PATTERN },
    ip: ipOrEmptySchema,
    disks: { type: 'array', maxItems: 512, items: diskReportSchema },
    nics: { type: 'array', maxItems: 64, items: nicReportSchema },
    daemons: daemonReportSchema,
  },
};

/** An address as the master may use it in a config file or a URL: a valid IP, nothing else. */
export const isIpAddress = (v: unknown): v is string => typeof v === 'string' && isIP(v) !== 0;
