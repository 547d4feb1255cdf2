// Every step a loop starts as a task run, one entry each: the only place a step's name is
// spelled. Master-level steps run a script on the master; node-level ones are carried out by
// the node's agent (src/agent/steps) or, in the lab, by a simulated one (src/sim), whose
// registries are typed maps over the node-level names here. Each step's arguments have a strict
// JSON Schema: the agent (and the lab's) refuses a run whose arguments do not match before it
// does anything (src/catalogue/validate.ts; docs/catalogue.md says why the master does not
// check when it starts one). The argument and result
// types derive from the schemas (StepArgs<'ceph.rgw.start'>).
import type { FromSchema } from 'json-schema-to-ts';
import { DAEMONS } from './daemons.js';

/** Hostnames (a daemon's name is its node's hostname), as the Node schema has them. */
const hostname = { type: 'string', pattern: '^[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?$', description: 'a hostname' } as const;
const fsid = { type: 'string', pattern: '^[A-Za-z0-9-]{1,64}$', description: 'a cluster fsid' } as const;
const ipv4 = { type: 'string', format: 'ipv4', description: 'an IPv4 address' } as const;
const port = { type: 'integer', minimum: 1, maximum: 65535, description: 'a TCP port' } as const;
const count = { type: 'integer', minimum: 0, maximum: 2 ** 53 - 1, description: 'a non-negative integer' } as const;
const uuid = { type: 'string', format: 'uuid', description: 'a UUID' } as const;
/** A block device (or, in tests, a file standing in for one): absolute, no `..`, no blanks. */
const devicePath = {
  type: 'string',
  pattern: '^(/[A-Za-z0-9_+:@-][A-Za-z0-9._+:@-]*)+$',
  maxLength: 4096,
  description: 'an absolute device path',
} as const;
const entity = { type: 'string', pattern: '^[a-z]+(\\.[A-Za-z0-9_-]+)+$', maxLength: 256, description: 'a Ceph entity name' } as const;
const name = { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$', description: 'a name' } as const;
/** CRUSH device class (crush_device_class), as the disk reports it or a selector sets it. */
export const DEVICE_CLASSES = ['hdd', 'ssd', 'nvme'] as const;
const deviceClass = { enum: DEVICE_CLASSES, description: 'device class' } as const;
const none = { type: 'object', additionalProperties: false, properties: {} } as const;
const obj = <const P extends Record<string, unknown>, const R extends readonly string[]>(properties: P, required: R) =>
  ({ type: 'object', additionalProperties: false, required, properties }) as const;

/** The monitors of a first monmap, each by name and address (and the node it is on). */
const initialMembers = {
  type: 'array',
  minItems: 1,
  maxItems: 16,
  description: 'a non-empty list of { name, addr }',
  items: obj({ nodeId: { type: 'string', maxLength: 64 }, name: hostname, addr: ipv4 }, ['name', 'addr']),
} as const;

/** What the monitor loop passes to a bootstrap or join (the same for both). `addr` and
 * `devicePath` may be empty while the node has not reported them; the agent then refuses. */
const monArgs = {
  fsid,
  monName: hostname,
  addr: ipv4,
  monPort: port,
  devicePath: { type: 'string', pattern: '^((/[A-Za-z0-9_+:@-][A-Za-z0-9._+:@-]*)+)?$', maxLength: 4096 },
  initialMembers,
} as const;

const nodeRequest = obj({ request: count, bootId: { type: ['string', 'null'], maxLength: 128 } }, ['request']);
const powerState = { enum: ['on', 'off'], description: 'a chassis power state' } as const;
const bmcRequest = obj({ request: count }, ['request']);
/** When the node's maintenance lease was taken (an ISO time): ties a run to one maintenance. */
const leaseSince = { type: 'string', pattern: '^[0-9T:.Z+-]{1,40}$', description: 'an ISO time' } as const;
const maintenanceRequest = obj({ lease: leaseSince }, ['lease']);
/** Daemons by their Ceph entity names (`osd.3`, `mon.node-1`). */
const daemonNames = { type: 'array', maxItems: 1024, items: entity } as const;
/** What the BMC said the chassis power was before the step acted (`on`/`off`). */
const bmcResult = obj({ was: powerState }, []);

export interface StepEntry {
  /** 'master': a script on the master; 'node': the node's agent. */
  level: 'master' | 'node';
  /** The loop(s) that start it (their Reconciler names). */
  loop: string | readonly string[];
  args: Record<string, unknown>;
  result: Record<string, unknown>;
  /** What it destroys, if anything: an operator is told before it runs (gitops plans). */
  destroys?: string;
  /** Node steps that take the machine down once reported. */
  power?: 'reboot' | 'poweroff';
  /** What it takes out of service without destroying it (a daemon stopped, data moved): a
   * disruptive step, shown in plans and taking its turn in the disruption budget. */
  disrupts?: string;
}

export const STEPS = {
  'network.dhcp.start': {
    level: 'master',
    loop: 'network',
    args: obj(
      {
        nic: { type: 'string', pattern: '^[A-Za-z0-9_.:@-]{1,15}$' },
        configHash: { type: 'string', pattern: '^[A-Za-z0-9+/=_-]{1,128}$' },
        crashes: count,
      },
      ['nic', 'configHash'],
    ),
    result: none,
  },
  'image.download': {
    level: 'master',
    loop: 'image',
    args: obj(
      {
        name: { type: 'string', minLength: 1, maxLength: 256 },
        files: { type: 'array', maxItems: 64, items: { type: 'string', minLength: 1, maxLength: 256 } },
      },
      ['name', 'files'],
    ),
    result: none,
  },
  'image.remove': {
    level: 'master',
    loop: 'image',
    destroys: "the image's downloaded files",
    args: obj({ name: { type: 'string', minLength: 1, maxLength: 256 } }, ['name']),
    result: none,
  },
  'node.restart': { level: 'node', loop: 'node', power: 'reboot', args: nodeRequest, result: none },
  'node.shutdown': { level: 'node', loop: 'node', power: 'poweroff', args: nodeRequest, result: none },
  // Maintenance (reconcilers/node/maintenance.ts): every Ceph daemon of the node stopped cleanly
  // (gateways, MDS, manager, OSDs, the monitor last), and started again the way each was last
  // started. `lease`: when the node's disruption lease was taken, so a run is found again for
  // the maintenance it belongs to. Both idempotent: a daemon already stopped (started) is success.
  'node.daemons-stop': {
    level: 'node',
    loop: 'node',
    disrupts: 'every Ceph daemon of the node, stopped for its maintenance (noout holds its OSDs in)',
    args: maintenanceRequest,
    result: obj({ stopped: daemonNames }, []),
  },
  'node.daemons-start': {
    level: 'node',
    loop: 'node',
    args: maintenanceRequest,
    result: obj({ started: daemonNames }, []),
  },
  'ceph.mon.bootstrap': {
    level: 'node',
    loop: 'mon',
    // monPort: the lab's monitors take the default; the real agent requires it.
    args: obj(monArgs, ['fsid', 'monName', 'addr']),
    result: obj(
      { fsid, monName: hostname, addr: { type: 'string' }, initialMembers: { type: 'array', items: hostname }, monmapEpoch: count },
      [],
    ),
  },
  'ceph.mon.join': {
    level: 'node',
    loop: 'mon',
    args: obj(monArgs, ['monName', 'addr']),
    result: obj({ monName: hostname, addr: { type: 'string' }, monmapEpoch: count }, []),
  },
  'ceph.mon.remove': {
    level: 'node',
    loop: 'mon',
    destroys: "the monitor's store",
    args: obj({ monName: hostname }, ['monName']),
    result: obj({ monName: hostname, inMonmap: { type: 'boolean' }, storeRemoved: { type: 'boolean' } }, ['monName']),
  },
  'ceph.mon.monmap-remove': {
    level: 'master',
    loop: 'mon',
    destroys: "the monitor's place in the monmap",
    args: obj({ monName: hostname }, ['monName']),
    result: none,
  },
  'ceph.mon.import-admin-key': { level: 'master', loop: 'mon', args: none, result: none },
  'ceph.mgr.key': { level: 'master', loop: 'mgr', args: obj({ entity }, ['entity']), result: none },
  'ceph.mgr.start': {
    level: 'node',
    loop: 'mgr',
    args: obj({ name: hostname, fsid }, ['name']),
    result: obj({ name: hostname }, []),
  },
  // A manager or MDS no longer desired (`state: absent`): stopped, like `systemctl stop`.
  'ceph.mgr.stop': {
    level: 'node',
    loop: 'mgr',
    args: obj({ name: hostname }, ['name']),
    result: obj({ name: hostname }, []),
  },
  'ceph.mds.stop': {
    level: 'node',
    loop: 'mds',
    args: obj({ name: hostname }, ['name']),
    result: obj({ name: hostname }, []),
  },
  'ceph.mds.key': { level: 'master', loop: 'mds', args: obj({ entity }, ['entity']), result: none },
  'ceph.mds.start': {
    level: 'node',
    loop: 'mds',
    args: obj({ name: hostname, fsid }, ['name']),
    result: obj({ name: hostname }, []),
  },
  'ceph.rgw.key': { level: 'master', loop: 'rgw', args: obj({ entity }, ['entity']), result: none },
  'ceph.rgw.start': {
    level: 'node',
    loop: 'rgw',
    args: obj({ name: hostname, fsid, port }, ['name', 'port']),
    result: obj({ name: hostname, endpoint: { type: 'string' } }, []),
  },
  'ceph.rgw.stop': {
    level: 'node',
    loop: 'rgw',
    args: obj({ name: hostname }, ['name']),
    result: obj({ name: hostname }, []),
  },
  'ceph.nfs.key': { level: 'master', loop: 'nfs', args: obj({ entity }, ['entity']), result: none },
  'ceph.nfs.start': {
    level: 'node',
    loop: 'nfs',
    args: obj(
      {
        name: hostname,
        fsid,
        export: DAEMONS.nfs.params.export,
        path: {
          type: 'string',
          pattern: DAEMONS.nfs.params.path.pattern,
          maxLength: 1024,
          description: 'an absolute path of plain segments',
        },
        port,
      },
      ['name', 'export'],
    ),
    result: obj(
      { name: hostname, export: { type: 'string' }, path: { type: 'string' }, pseudo: { type: 'string' }, endpoint: { type: 'string' } },
      [],
    ),
  },
  'ceph.nfs.stop': {
    level: 'node',
    loop: 'nfs',
    args: obj({ name: hostname }, ['name']),
    result: obj({ name: hostname }, []),
  },
  // `id`: the id of a destroyed OSD this disk replaces (`osd new <uuid> <id>`), so CRUSH keeps
  // its position and data moves once. `deviceClass` becomes its crush_device_class.
  'ceph.osd.new': {
    level: 'master',
    loop: 'osd',
    args: obj({ uuid, id: count, deviceClass }, ['uuid']),
    result: obj({ osdId: count, uuid }, []),
  },
  'ceph.osd.out': {
    level: 'master',
    loop: 'osd',
    disrupts: "the OSD's share of data placement: its PGs move to the other OSDs (ceph osd out)",
    args: obj({ osdId: count }, ['osdId']),
    result: none,
  },
  // A removal undone before its OSD was purged or destroyed: the OSD takes data again.
  'ceph.osd.in': { level: 'master', loop: 'osd', args: obj({ osdId: count }, ['osdId']), result: none },
  'ceph.osd.stop': {
    level: 'node',
    loop: 'osd',
    disrupts: 'the OSD daemon, stopped for good before it is purged or destroyed',
    args: obj({ osdId: count }, ['osdId']),
    result: obj({ osdId: count }, []),
  },
  'ceph.osd.purge': {
    level: 'master',
    loop: 'osd',
    destroys: "the OSD's id, CRUSH entry and key (ceph osd purge)",
    args: obj({ osdId: count }, ['osdId']),
    result: none,
  },
  'ceph.osd.destroy': {
    level: 'master',
    loop: 'osd',
    destroys: "the OSD's key and data; its id and CRUSH position are kept for the disk that replaces it (ceph osd destroy)",
    args: obj({ osdId: count }, ['osdId']),
    result: none,
  },
  'ceph.osd.zap': {
    level: 'node',
    loop: 'osd',
    destroys: 'everything on the disk of a purged or destroyed OSD (a verified wipe: signatures, both ends, BlueStore label copies)',
    args: obj({ osdId: count, devicePath }, ['osdId', 'devicePath']),
    result: obj({ devicePath }, ['devicePath']),
  },
  'ceph.osd.create': {
    level: 'node',
    loop: 'osd',
    destroys: 'whatever the disk holds (BlueStore is made on the whole device)',
    args: obj({ osdId: count, uuid, devicePath, sizeBytes: count, deviceClass }, ['osdId', 'uuid', 'devicePath']),
    result: obj({ osdId: count, devicePath, host: hostname }, ['osdId']),
  },
  'ceph.daemon.restart': {
    level: 'node',
    loop: ['mon', 'osd'],
    args: obj({ daemon: { enum: Object.keys(DAEMONS) as Array<keyof typeof DAEMONS>, description: 'daemon type' }, name, id: count }, [
      'daemon',
    ]),
    result: obj({ daemon: { type: 'string' }, name: { type: 'string' } }, []),
  },
  // The node loop's rolling restart for a config change (reconcilers/node/rollout.ts): the
  // node's daemons the change concerns, one after another in one run (the node's lease covers
  // them together; one run per node and config keeps the loop's bookkeeping to one run). `config`
  // is the key of the config they are restarted to take.
  'ceph.config.restart': {
    level: 'node',
    loop: 'node',
    disrupts: 'the daemons a config change concerns, restarted one after another to take it',
    args: obj(
      {
        config: { type: 'string', pattern: '^[0-9a-f]{8,64}$', description: 'a config key' },
        daemons: {
          type: 'array',
          minItems: 1,
          maxItems: 256,
          description: 'the daemons to restart',
          items: obj({ daemon: { enum: Object.keys(DAEMONS) as Array<keyof typeof DAEMONS>, description: 'daemon type' }, name }, [
            'daemon',
            'name',
          ]),
        },
      },
      ['config', 'daemons'],
    ),
    result: obj({ restarted: { type: 'array', items: { type: 'string' } } }, []),
  },
  'disk.wipe.confirm': {
    level: 'master',
    loop: 'osd',
    args: obj({ request: count, prompt: { type: 'string', maxLength: 4096 } }, ['request', 'prompt']),
    result: none,
  },
  'disk.wipe': {
    level: 'node',
    loop: 'osd',
    destroys: "the disk's data (a verified wipe: signatures, both ends, BlueStore label copies)",
    args: obj({ request: count, devicePath }, ['devicePath']),
    result: obj({ devicePath }, ['devicePath']),
  },
  // A node's BMC over IPMI (src/power): the master runs `ipmitool -I lanplus` against the
  // address the node's spec declares, the password in the environment (IPMI_PASSWORD), never
  // in the arguments. `request` is the node's counter the run acts for. The BMC's address and
  // user are not arguments: the script reads them (and the secret) from the node's spec.
  'bmc.power-on': { level: 'master', loop: 'node', args: bmcRequest, result: bmcResult },
  // Waits up to graceMs for the soft power-off the agent started to read off, then forces it.
  'bmc.power-off': {
    level: 'master',
    loop: 'node',
    disrupts: 'the whole machine: its power is cut when a soft power-off did not end in time',
    args: obj({ request: count, graceMs: count }, ['request']),
    result: obj({ was: powerState, forced: { type: 'boolean' } }, []),
  },
  'bmc.power-status': { level: 'master', loop: 'node', args: bmcRequest, result: bmcResult },
  // The seam for fencing (`fencing: bmc`): a hung node power-cycled, only inside the budget.
  'bmc.power-cycle': {
    level: 'master',
    loop: 'node',
    disrupts: 'the whole machine: power cut and restored (fencing a hung node)',
    args: bmcRequest,
    result: bmcResult,
  },
  // A host bucket placed under the CRUSH buckets its node's labels name (src/model/crush.ts):
  // each bucket made and moved under the one above it, root first, then the host. Idempotent.
  // Data under the host moves with it: Ceph's work, not a stop (no disruption budget).
  'ceph.crush.place-host': {
    level: 'master',
    loop: 'cluster',
    args: obj(
      {
        // The CRUSH host bucket: the machine's own short hostname, which need not be Quarry's.
        host: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$', description: 'a CRUSH host bucket' },
        location: {
          type: 'array',
          minItems: 1,
          maxItems: 12,
          items: { type: 'string', pattern: '^[a-z]{1,16}=[A-Za-z0-9_.-]{1,64}$', description: 'TYPE=NAME, root first' },
        },
      },
      ['host', 'location'],
    ),
    result: none,
  },
  // The replicated rule of a failure domain (quarry-<type>) made, and Quarry's pools set to it.
  'ceph.crush.rule': {
    level: 'master',
    loop: 'cluster',
    args: obj(
      {
        rule: { type: 'string', pattern: '^quarry-[a-z]{1,16}$' },
        failureDomain: { type: 'string', pattern: '^[a-z]{1,16}$' },
        pools: { type: 'array', maxItems: 1024, items: { type: 'string', minLength: 1, maxLength: 255 } },
      },
      ['rule', 'failureDomain', 'pools'],
    ),
    result: none,
  },
  // noout for the OSDs under a CRUSH host bucket (`ceph osd set-group noout <host>`), set before a
  // node's daemons stop (maintenance, restart, shutdown) so Ceph does not mark them out and move
  // their data while they are briefly down; unset when they are back (or the node is off for
  // good). Idempotent both ways. `lease`: the disruption lease it is set under. `osds`: the node's
  // OSDs, flagged one by one when the host bucket is named otherwise than Quarry's hostname.
  'ceph.osd.noout': {
    level: 'master',
    loop: 'node',
    args: obj(
      {
        host: { type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$', description: 'a CRUSH host bucket' },
        set: { type: 'boolean' },
        lease: leaseSince,
        osds: { type: 'array', maxItems: 1024, items: count },
      },
      ['host', 'set', 'lease'],
    ),
    result: none,
  },
  // The spec of the Filesystem / RgwUser document, which the store has validated already.
  'ceph.fs.create': { level: 'master', loop: 'fs', args: { type: 'object' }, result: none },
  'ceph.rgw.user.create': { level: 'master', loop: 'rgw-user', args: { type: 'object' }, result: none },
  // Data-bearing deletions (a file's `state: absent`): a question naming what goes, then on
  // "yes" the deletion. `generation` is the spec generation the request was made at.
  'ceph.fs.delete.confirm': {
    level: 'master',
    loop: 'fs',
    args: obj({ generation: count, prompt: { type: 'string', maxLength: 4096 } }, ['generation']),
    result: none,
  },
  'ceph.fs.delete': {
    level: 'master',
    loop: 'fs',
    destroys: 'the filesystem and its metadata and data pools, with every object in them',
    args: obj({ generation: count }, ['generation']),
    result: none,
  },
  'ceph.rgw.user.delete.confirm': {
    level: 'master',
    loop: 'rgw-user',
    args: obj({ generation: count, prompt: { type: 'string', maxLength: 4096 } }, ['generation']),
    result: none,
  },
  'ceph.rgw.user.delete': {
    level: 'master',
    loop: 'rgw-user',
    destroys: 'the RGW user, its keys and its buckets with every object in them (radosgw-admin user rm --purge-data)',
    args: obj({ generation: count }, ['generation']),
    result: none,
  },
} as const satisfies Record<string, StepEntry>;

export type StepName = keyof typeof STEPS;

/** The steps by role, for the code that starts, awaits or plans them (the daemon loops take
 * theirs from DAEMONS' `steps`). Checked against STEPS. */
export const Step = {
  dhcpStart: 'network.dhcp.start',
  imageDownload: 'image.download',
  imageRemove: 'image.remove',
  nodeRestart: 'node.restart',
  nodeShutdown: 'node.shutdown',
  nodeDaemonsStop: 'node.daemons-stop',
  nodeDaemonsStart: 'node.daemons-start',
  osdNoout: 'ceph.osd.noout',
  bmcPowerOn: 'bmc.power-on',
  bmcPowerOff: 'bmc.power-off',
  bmcPowerStatus: 'bmc.power-status',
  bmcPowerCycle: 'bmc.power-cycle',
  monBootstrap: 'ceph.mon.bootstrap',
  monJoin: 'ceph.mon.join',
  monRemove: 'ceph.mon.remove',
  monmapRemove: 'ceph.mon.monmap-remove',
  monImportAdminKey: 'ceph.mon.import-admin-key',
  daemonRestart: 'ceph.daemon.restart',
  configRestart: 'ceph.config.restart',
  osdNew: 'ceph.osd.new',
  osdCreate: 'ceph.osd.create',
  osdOut: 'ceph.osd.out',
  osdIn: 'ceph.osd.in',
  osdStop: 'ceph.osd.stop',
  osdPurge: 'ceph.osd.purge',
  osdDestroy: 'ceph.osd.destroy',
  osdZap: 'ceph.osd.zap',
  wipeConfirm: 'disk.wipe.confirm',
  wipe: 'disk.wipe',
  fsCreate: 'ceph.fs.create',
  rgwUserCreate: 'ceph.rgw.user.create',
  fsDeleteConfirm: 'ceph.fs.delete.confirm',
  fsDelete: 'ceph.fs.delete',
  rgwUserDeleteConfirm: 'ceph.rgw.user.delete.confirm',
  rgwUserDelete: 'ceph.rgw.user.delete',
  crushPlaceHost: 'ceph.crush.place-host',
  crushRule: 'ceph.crush.rule',
} as const satisfies Record<string, StepName>;
export type NodeStepName = { [K in StepName]: (typeof STEPS)[K]['level'] extends 'node' ? K : never }[StepName];
export type MasterStepName = Exclude<StepName, NodeStepName>;
/** Node steps that take the machine down once reported (their `power`). */
export type PowerStepName = { [K in NodeStepName]: (typeof STEPS)[K] extends { power: string } ? K : never }[NodeStepName];

export type StepArgs<K extends StepName> = FromSchema<(typeof STEPS)[K]['args']>;
export type StepResult<K extends StepName> = FromSchema<(typeof STEPS)[K]['result']>;

const names = Object.keys(STEPS) as StepName[];
export const STEP_NAMES: readonly StepName[] = names;
export const NODE_STEP_NAMES: readonly NodeStepName[] = names.filter((n) => STEPS[n].level === 'node') as NodeStepName[];

export const isStepName = (s: unknown): s is StepName => typeof s === 'string' && Object.hasOwn(STEPS, s);
export const isNodeStep = (s: unknown): s is NodeStepName => isStepName(s) && STEPS[s].level === 'node';
/** A step's entry, widened (its optional fields read without narrowing). */
export const step = (n: StepName): StepEntry => STEPS[n];
