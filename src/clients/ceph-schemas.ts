// Raw shapes of Ceph 16 (Pacific) `--format json` output for cluster-wide queries, as
// recorded in test/fixtures/ceph. Only the fields Quarry reads are listed; extra ones pass.
import { arr, bool, int, mapOf, num, obj, shape, str } from './ceph-output.js';

const healthStatus = { type: 'string', enum: ['HEALTH_OK', 'HEALTH_WARN', 'HEALTH_ERR'] } as const;
type RawHealthStatus = 'HEALTH_OK' | 'HEALTH_WARN' | 'HEALTH_ERR';

export interface RawHealthCheck {
  severity: RawHealthStatus;
  summary: { message: string; count: number };
  /** Only in `health detail`. */
  detail?: { message: string }[];
  muted: boolean;
}
export interface RawHealth {
  status: RawHealthStatus;
  checks: Record<string, RawHealthCheck>;
}
const healthSchema = obj({
  status: healthStatus,
  checks: mapOf(
    obj(
      {
        severity: healthStatus,
        summary: obj({ message: str, count: int }),
        detail: arr(obj({ message: str })),
        muted: bool,
      },
      ['detail'],
    ),
  ),
});
export const healthShape = shape<RawHealth>('health', healthSchema);

export interface RawStatus {
  fsid: string;
  health: RawHealth;
  quorum_names: string[];
  monmap: { num_mons: number };
  osdmap: { num_osds: number; num_up_osds: number; num_in_osds: number };
  pgmap: {
    pgs_by_state: { state_name: string; count: number }[];
    num_pgs: number;
    num_pools: number;
    bytes_used: number;
    bytes_avail: number;
    bytes_total: number;
  };
  mgrmap: { available: boolean };
}
export const statusShape = shape<RawStatus>(
  'status',
  obj({
    fsid: str,
    health: healthSchema,
    quorum_names: arr(str),
    monmap: obj({ num_mons: int }),
    osdmap: obj({ num_osds: int, num_up_osds: int, num_in_osds: int }),
    pgmap: obj({
      pgs_by_state: arr(obj({ state_name: str, count: int })),
      num_pgs: int,
      num_pools: int,
      bytes_used: int,
      bytes_avail: int,
      bytes_total: int,
    }),
    mgrmap: obj({ available: bool }),
  }),
);

export interface RawDf {
  stats: { total_bytes: number; total_avail_bytes: number; total_used_bytes: number; total_used_raw_bytes: number };
  pools: {
    name: string;
    id: number;
    stats: { stored: number; objects: number; bytes_used: number; percent_used: number; max_avail: number };
  }[];
}
export const dfShape = shape<RawDf>(
  'df',
  obj({
    stats: obj({ total_bytes: int, total_avail_bytes: int, total_used_bytes: int, total_used_raw_bytes: int }),
    pools: arr(
      obj({
        name: str,
        id: int,
        stats: obj({ stored: int, objects: int, bytes_used: int, percent_used: num, max_avail: int }),
      }),
    ),
  }),
);

/** `pg stat` wraps its numbers in pg_summary and names them differently from status.pgmap. */
export interface RawPgStat {
  pg_ready: boolean;
  pg_summary: { num_pg_by_state: { name: string; num: number }[]; num_pgs: number };
}
export const pgStatShape = shape<RawPgStat>(
  'pg-stat',
  obj({
    pg_ready: bool,
    pg_summary: obj({ num_pg_by_state: arr(obj({ name: str, num: int })), num_pgs: int }),
  }),
);

export type RawVersions = Record<string, Record<string, number>> & { overall: Record<string, number> };
export const versionsShape = shape<RawVersions>('versions', {
  ...obj({ overall: mapOf(int) }),
  additionalProperties: mapOf(int),
});

interface RawMonmap {
  epoch: number;
  fsid: string;
  mons: {
    rank: number;
    name: string;
    addr: string;
    public_addrs: { addrvec: { type: string; addr: string }[] };
  }[];
}
// Pacific prints keys such as "disallowed_leaders: " (with the colon) here: nothing strict.
const monmapSchema = obj({
  epoch: int,
  fsid: str,
  mons: arr(
    obj({
      rank: int,
      name: str,
      addr: str,
      public_addrs: obj({ addrvec: arr(obj({ type: str, addr: str })) }),
    }),
  ),
});
export type RawMonDump = RawMonmap & { quorum: number[] };
export const monDumpShape = shape<RawMonDump>('mon-dump', {
  ...monmapSchema,
  properties: { ...(monmapSchema.properties as object), quorum: arr(int) },
  required: [...(monmapSchema.required as string[]), 'quorum'],
});

export interface RawMonStat {
  epoch: number;
  num_mons: number;
  leader: string;
  quorum: { rank: number; name: string }[];
}
export const monStatShape = shape<RawMonStat>(
  'mon-stat',
  obj({ epoch: int, num_mons: int, leader: str, quorum: arr(obj({ rank: int, name: str })) }),
);

export interface RawQuorumStatus {
  election_epoch: number;
  quorum: number[];
  quorum_names: string[];
  quorum_leader_name: string;
  monmap: RawMonmap;
}
export const quorumStatusShape = shape<RawQuorumStatus>(
  'quorum-status',
  obj({
    election_epoch: int,
    quorum: arr(int),
    quorum_names: arr(str),
    quorum_leader_name: str,
    monmap: monmapSchema,
  }),
);

export interface RawMgrStat {
  epoch: number;
  available: boolean;
  active_name: string;
  num_standby: number;
}
export const mgrStatShape = shape<RawMgrStat>('mgr-stat', obj({ epoch: int, available: bool, active_name: str, num_standby: int }));
