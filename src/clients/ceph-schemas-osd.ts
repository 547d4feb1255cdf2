// Raw shapes of Ceph 16 (Pacific) `--format json` output for OSDs, pools, filesystems and
// auth, as recorded in test/fixtures/ceph. Only the fields Quarry reads are listed.
import { arr, bool, int, mapOf, num, obj, shape, str, type Schema } from './ceph-output.js';

export interface RawTreeNode {
  id: number;
  name: string;
  type: string;
  children?: number[];
  status?: string;
  device_class?: string;
  crush_weight?: number;
  reweight?: number;
}
const treeNode = obj(
  {
    id: int,
    name: str,
    type: str,
    children: arr(int),
    status: str,
    device_class: str,
    crush_weight: num,
    reweight: num,
  },
  ['children', 'status', 'device_class', 'crush_weight', 'reweight'],
);
/** `stray` lists OSDs that exist but are not in the CRUSH map (a new OSD before it boots). */
export interface RawOsdTree {
  nodes: RawTreeNode[];
  stray: RawTreeNode[];
}
export const osdTreeShape = shape<RawOsdTree>('osd-tree', obj({ nodes: arr(treeNode), stray: arr(treeNode) }));

export interface RawOsdStat {
  epoch: number;
  num_osds: number;
  num_up_osds: number;
  num_in_osds: number;
  num_remapped_pgs: number;
}
export const osdStatShape = shape<RawOsdStat>(
  'osd-stat',
  obj({ epoch: int, num_osds: int, num_up_osds: int, num_in_osds: int, num_remapped_pgs: int }),
);

interface RawPoolCommon {
  pool_name: string;
  size: number;
  min_size: number;
  pg_num: number;
  application_metadata: Record<string, unknown>;
}
const poolCommon: Record<string, Schema> = {
  pool_name: str,
  size: int,
  min_size: int,
  pg_num: int,
  application_metadata: { type: 'object' },
};

/** In `osd dump` a pool's id is `pool`; in `osd pool ls detail` it is `pool_id`. */
export interface RawOsdDump {
  epoch: number;
  fsid: string;
  flags: string;
  max_osd: number;
  osds: { osd: number; uuid: string; up: number; in: number; state: string[] }[];
  pools: (RawPoolCommon & { pool: number })[];
}
export const osdDumpShape = shape<RawOsdDump>(
  'osd-dump',
  obj({
    epoch: int,
    fsid: str,
    flags: str,
    max_osd: int,
    osds: arr(obj({ osd: int, uuid: str, up: int, in: int, state: arr(str) })),
    pools: arr(obj({ pool: int, ...poolCommon })),
  }),
);

export interface RawOsdDfNode {
  id: number;
  /** Absent for an OSD without a class in CRUSH (as in `osd tree`). */
  device_class?: string;
  kb: number;
  kb_used: number;
  kb_used_data: number;
  pgs: number;
  status: string;
}
/** `osd df -f json` on Ceph 16: OSDs in `nodes` (with CRUSH buckets in tree mode only). */
export const osdDfShape = shape<{ nodes: RawOsdDfNode[] }>(
  'osd-df',
  obj({
    nodes: arr(obj({ id: int, device_class: str, kb: int, kb_used: int, kb_used_data: int, pgs: int, status: str }, ['device_class'])),
  }),
);

export type RawPoolDetail = RawPoolCommon & { pool_id: number; pg_autoscale_mode: string };
export const poolLsShape = shape<RawPoolDetail[]>('osd-pool-ls-detail', arr(obj({ pool_id: int, ...poolCommon, pg_autoscale_mode: str })));

export interface RawOkToStop {
  ok_to_stop: boolean;
  osds: number[];
  num_ok_pgs: number;
  num_not_ok_pgs: number;
}
export const okToStopShape = shape<RawOkToStop>(
  'osd-ok-to-stop',
  obj({ ok_to_stop: bool, osds: arr(int), num_ok_pgs: int, num_not_ok_pgs: int }),
);

export interface RawSafeToDestroy {
  safe_to_destroy: number[];
  active: number[];
  missing_stats: number[];
  stored_pgs: number[];
}
export const safeToDestroyShape = shape<RawSafeToDestroy>(
  'osd-safe-to-destroy',
  obj({ safe_to_destroy: arr(int), active: arr(int), missing_stats: arr(int), stored_pgs: arr(int) }),
);

export interface RawOsdNew {
  osdid: number;
}
export const osdNewShape = shape<RawOsdNew>('osd-new', obj({ osdid: int }));

export interface RawMdsInfo {
  gid: number;
  name: string;
  rank: number;
  state: string;
}
const mdsInfo = obj({ gid: int, name: str, rank: int, state: str });
export interface RawFsMap {
  epoch: number;
  standbys: RawMdsInfo[];
  filesystems: {
    id: number;
    mdsmap: {
      fs_name: string;
      max_mds: number;
      metadata_pool: number;
      data_pools: number[];
      info: Record<string, RawMdsInfo>;
    };
  }[];
}
const fsMapSchema = obj({
  epoch: int,
  standbys: arr(mdsInfo),
  filesystems: arr(
    obj({
      id: int,
      mdsmap: obj({ fs_name: str, max_mds: int, metadata_pool: int, data_pools: arr(int), info: mapOf(mdsInfo) }),
    }),
  ),
});
export const fsDumpShape = shape<RawFsMap>('fs-dump', fsMapSchema);
export const mdsStatShape = shape<{ fsmap: RawFsMap }>('mds-stat', obj({ fsmap: fsMapSchema }));

export interface RawFsLsEntry {
  name: string;
  metadata_pool: string;
  metadata_pool_id: number;
  data_pools: string[];
  data_pool_ids: number[];
}
export const fsLsShape = shape<RawFsLsEntry[]>(
  'fs-ls',
  arr(obj({ name: str, metadata_pool: str, metadata_pool_id: int, data_pools: arr(str), data_pool_ids: arr(int) })),
);

export interface RawAuthEntity {
  entity: string;
  key: string;
  caps: Record<string, string>;
}
/** `auth get` and `auth get-or-create` both answer a one-element array. */
export const authShape = shape<RawAuthEntity[]>('auth', { ...arr(obj({ entity: str, key: str, caps: mapOf(str) })), minItems: 1 });

/** `fs status` comes from the mgr's status module (Python): a different style again. */
export interface RawFsStatus {
  clients: { fs: string; clients: number }[];
  mdsmap: { name: string; rank?: number; state: string }[];
  pools: { id: number; name: string; type: string; used: number; avail: number }[];
}
export const fsStatusShape = shape<RawFsStatus>(
  'fs-status',
  obj({
    clients: arr(obj({ fs: str, clients: int })),
    mdsmap: arr(obj({ name: str, rank: int, state: str }, ['rank'])),
    pools: arr(obj({ id: int, name: str, type: str, used: int, avail: int })),
  }),
);

/** `config get WHO KEY` in JSON: the value typed as the option is (a boolean for a flag). */
export const configValueShape = shape<boolean | number | string>('config-get', { type: ['boolean', 'number', 'string'] });
