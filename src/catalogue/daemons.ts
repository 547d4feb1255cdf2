// The daemons Quarry places, one entry each: the only place a daemon kind is spelled. The
// spec's `daemons` properties, the node operations offered, the agent's report, the daemon loops
// and the agent's and the lab's processes all read this table (docs/catalogue.md says how to
// add a kind). OSDs are in it too: they are daemons the agent starts and restarts, but placed on
// a disk (Disk.spec.osd), not named in a node's spec, so `NodeDaemonType` leaves them out.

/** A JSON Schema, as the model's schemas are written. */
export type JsonSchema = Record<string, unknown>;

export interface DaemonEntry {
  /** The program the agent starts (ceph-mon, radosgw...). */
  binary: string;
  /** A word for messages: 'monitor', 'gateway'. */
  title: string;
  /** Its Ceph entity, from the node's hostname (or the OSD's id). */
  entity(id: string): string;
  /** Has a data directory (Ceph's $type_data, <dataDir>/<type>/ceph-<id>): its key lives there. */
  dataDir: boolean;
  /** Started as `-n <entity>` (a client entity, like a gateway), not `-i <id>`. */
  byEntity: boolean;
  /** Node daemons are named in a node's spec; OSDs are placed on a disk. */
  placement: 'node' | 'disk';
  /** Cephx caps of its key (`ceph auth get-or-create`); null: the key is made another way (the
   * monitors share `mon.`). */
  caps: Readonly<Record<string, string>> | null;
  /** Caps that depend on its spec entry (what an NFS gateway exports): replace `caps` when set. */
  capsFor?: (params: Readonly<Record<string, unknown>>) => Readonly<Record<string, string>>;
  /** Holds data of its own (a store, a disk): never simply stopped and forgotten. */
  holdsData: boolean;
  /** One running but no longer desired is stopped (its `stop` step). */
  stopOrphan: boolean;
  /** The spec names a disk for it (spec.daemons.<type>.diskId; `disk` in a specs-folder file). */
  needsDisk: boolean;
  /** Further fields of its spec entry (spec.daemons.<type>), as JSON Schema properties; the
   * daemon loop passes them to its start step with its name and the cluster's fsid. */
  params: Readonly<Record<string, JsonSchema>>;
  /** Which of `params` a spec must give. */
  required?: readonly string[];
  /** Fixed arguments of its start step besides name, fsid and params (the gateway's port). */
  startArgs?: Readonly<Record<string, unknown>>;
  /** The operation an operator invokes to create one (on the node, or on the disk for an OSD). */
  operation: string;
  /** Its steps, by role: names of STEPS (src/catalogue/index.ts checks that they are). */
  steps: Readonly<{ create?: readonly string[]; key?: string; start?: string; stop?: string; remove?: string }>;
}

export const DAEMONS = {
  mon: {
    binary: 'ceph-mon',
    title: 'monitor',
    entity: (host: string) => `mon.${host}`,
    dataDir: true,
    byEntity: false,
    placement: 'node',
    caps: null,
    holdsData: true,
    stopOrphan: false,
    needsDisk: true,
    params: {},
    operation: 'ceph.create-mon',
    steps: { create: ['ceph.mon.bootstrap', 'ceph.mon.join'], remove: 'ceph.mon.remove' },
  },
  mgr: {
    binary: 'ceph-mgr',
    title: 'manager',
    entity: (host: string) => `mgr.${host}`,
    dataDir: true,
    byEntity: false,
    placement: 'node',
    // Measured on Ceph 16 (docs/real-components.md).
    caps: { mon: 'allow profile mgr', osd: 'allow *', mds: 'allow *' },
    holdsData: false,
    // Its state is in the monitors' store: one no longer desired is simply stopped.
    stopOrphan: true,
    needsDisk: false,
    params: {},
    operation: 'ceph.create-mgr',
    steps: { key: 'ceph.mgr.key', start: 'ceph.mgr.start', stop: 'ceph.mgr.stop' },
  },
  mds: {
    binary: 'ceph-mds',
    title: 'metadata server',
    entity: (host: string) => `mds.${host}`,
    dataDir: true,
    byEntity: false,
    placement: 'node',
    caps: { mon: 'profile mds', mgr: 'profile mds', mds: 'allow *', osd: 'allow *' },
    holdsData: false,
    // Its journal is in the filesystem's metadata pool: one no longer desired is simply
    // stopped (a standby, if any, takes over).
    stopOrphan: true,
    needsDisk: false,
    params: {},
    operation: 'ceph.create-mds',
    steps: { key: 'ceph.mds.key', start: 'ceph.mds.start', stop: 'ceph.mds.stop' },
  },
  rgw: {
    binary: 'radosgw',
    title: 'RADOS gateway',
    entity: (host: string) => `client.rgw.${host}`,
    dataDir: false,
    byEntity: true,
    placement: 'node',
    caps: { mon: 'allow rw', osd: 'allow rwx', mgr: 'allow rw' },
    holdsData: false,
    // Its state is in RADOS pools: one no longer desired is simply stopped.
    stopOrphan: true,
    needsDisk: false,
    params: {},
    // radosgw's own default port; S3 clients are pointed at it (src/services/s3.ts).
    startArgs: { port: 7480 },
    operation: 'ceph.create-rgw',
    steps: { key: 'ceph.rgw.key', start: 'ceph.rgw.start', stop: 'ceph.rgw.stop' },
  },
  nfs: {
    binary: 'ganesha.nfsd',
    title: 'NFS gateway',
    entity: (host: string) => `client.nfs.${host}`,
    // Its ganesha.conf and grace-period records live in its data dir; its key in the keyring dir.
    dataDir: true,
    byEntity: true,
    placement: 'node',
    caps: null,
    // What `ceph fs authorize <fs> client.nfs.<host> <path> rw` grants: that filesystem only
    // (docs/real-components.md, "NFS gateway").
    capsFor: (p: Readonly<Record<string, unknown>>) => {
      const [fs, path] = [String(p.export), typeof p.path === 'string' ? p.path : '/'];
      return {
        mon: `allow r fsname=${fs}`,
        mds: `allow rw fsname=${fs}${path === '/' ? '' : ` path=${path}`}`,
        osd: `allow rw tag cephfs data=${fs}`,
      };
    },
    holdsData: false,
    // Its exports are CephFS: one no longer desired is simply stopped.
    stopOrphan: true,
    needsDisk: false,
    params: {
      export: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$', description: 'the CephFS filesystem it exports' },
      path: {
        type: 'string',
        pattern: '^/([A-Za-z0-9_+:@-][A-Za-z0-9._+:@-]*(/[A-Za-z0-9_+:@-][A-Za-z0-9._+:@-]*)*)?$',
        maxLength: 1024,
        default: '/',
        description: 'the directory of the filesystem it exports',
      },
    },
    required: ['export'],
    // NFS's own port: clients mount <node>:/<fs> without naming one.
    startArgs: { port: 2049 },
    operation: 'ceph.create-nfs',
    steps: { key: 'ceph.nfs.key', start: 'ceph.nfs.start', stop: 'ceph.nfs.stop' },
  },
  osd: {
    binary: 'ceph-osd',
    title: 'OSD',
    entity: (id: string) => `osd.${id}`,
    dataDir: true,
    byEntity: false,
    placement: 'disk',
    // The caps `ceph-volume` gives an OSD's key (the bootstrap-osd profile).
    caps: { mon: 'allow profile osd', mgr: 'allow profile osd', osd: 'allow *' },
    holdsData: true,
    stopOrphan: false,
    needsDisk: false,
    params: {},
    operation: 'ceph.create-osd',
    // Removal: out, stop, purge, zap; a replacement destroys instead of purging (keeps the id).
    steps: { create: ['ceph.osd.new', 'ceph.osd.create'], stop: 'ceph.osd.stop', remove: 'ceph.osd.purge' },
  },
} as const satisfies Record<string, DaemonEntry>;

/** Every daemon kind the agent runs (and ceph.daemon.restart knows). */
export type DaemonType = keyof typeof DAEMONS;
/** The daemons a node's spec names (spec.daemons): all but the disk-placed OSDs. */
export type NodeDaemonType = { [K in DaemonType]: (typeof DAEMONS)[K]['placement'] extends 'node' ? K : never }[DaemonType];
/** Node daemons whose key the master makes and the agent starts with (the daemon loop's kinds). */
export type KeyedDaemonType = { [K in DaemonType]: (typeof DAEMONS)[K]['steps'] extends { key: string } ? K : never }[DaemonType];

const entries = Object.entries(DAEMONS) as Array<[DaemonType, DaemonEntry]>;

export const DAEMON_TYPES: readonly DaemonType[] = entries.map(([t]) => t);
/** Each daemon type as a value (`Daemon.mgr`): how code outside the catalogue names one. */
export const Daemon = Object.fromEntries(DAEMON_TYPES.map((t) => [t, t])) as { readonly [T in DaemonType]: T };
export const NODE_DAEMON_TYPES: readonly NodeDaemonType[] = entries
  .filter(([, d]) => d.placement === 'node')
  .map(([t]) => t as NodeDaemonType);
export const KEYED_DAEMON_TYPES: readonly KeyedDaemonType[] = entries
  .filter(([, d]) => d.steps.key !== undefined)
  .map(([t]) => t as KeyedDaemonType);
/** The disk-placed daemon (OSDs): one, which this names without spelling it elsewhere. */
export const DISK_DAEMON_TYPE = entries.find(([, d]) => d.placement === 'disk')![0] as Exclude<DaemonType, NodeDaemonType>;

/** Daemons with a data directory (all but the gateway today). */
export type DataDaemonType = { [K in DaemonType]: (typeof DAEMONS)[K]['dataDir'] extends true ? K : never }[DaemonType];
export const DATA_DAEMON_TYPES: readonly DataDaemonType[] = entries.filter(([, d]) => d.dataDir).map(([t]) => t as DataDaemonType);

/** The daemon an entity name is of (mon.a, client.rgw.gw1, osd.3), with its id. */
export function daemonOfEntity(entity: string): { type: DaemonType; id: string } | undefined {
  for (const [type, d] of entries) {
    const prefix = d.entity('');
    if (entity.startsWith(prefix) && entity.length > prefix.length) return { type, id: entity.slice(prefix.length) };
  }
  return undefined;
}

export const isDaemonType = (s: unknown): s is DaemonType => typeof s === 'string' && Object.hasOwn(DAEMONS, s);
export const isNodeDaemonType = (s: unknown): s is NodeDaemonType => isDaemonType(s) && DAEMONS[s].placement === 'node';

/** A daemon's entry, widened to the interface (optional steps read without narrowing). */
export const daemon = (t: DaemonType): DaemonEntry => DAEMONS[t];
