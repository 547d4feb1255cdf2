// Raw Ceph JSON (checked by the schemas) → the typed values CephClient returns. Pure.
import type {
  RawFsMap,
  RawFsStatus,
  RawMdsInfo,
  RawOsdDfNode,
  RawOsdDump,
  RawOsdTree,
  RawPoolDetail,
  RawTreeNode,
} from './ceph-schemas-osd.js';
import type { RawDf, RawHealth, RawMonDump, RawQuorumStatus, RawStatus, RawVersions } from './ceph-schemas.js';
import type {
  CephDf,
  CephHealth,
  CephStatus,
  CephVersions,
  HealthCheck,
  MdsDaemon,
  MdsStat,
  MonDump,
  OsdDf,
  OsdDump,
  OsdTree,
  OsdTreeNode,
  Pool,
  QuorumStatus,
} from './ceph-types.js';

export interface FsStatus {
  clients: { fs: string; clients: number }[];
  mds: { name: string; rank?: number; state: string }[];
  pools: { id: number; name: string; type: string; usedBytes: number; availableBytes: number }[];
}

export function toHealthChecks(raw: RawHealth): HealthCheck[] {
  return Object.entries(raw.checks).map(([code, c]) => ({
    code,
    severity: c.severity,
    message: c.summary.message,
    count: c.summary.count,
    detail: (c.detail ?? []).map((d) => d.message),
    muted: c.muted,
  }));
}

export const toHealth = (raw: RawHealth): CephHealth => ({ status: raw.status, checks: toHealthChecks(raw) });

export function toStatus(raw: RawStatus): CephStatus {
  const { osdmap, pgmap } = raw;
  return {
    fsid: raw.fsid,
    health: raw.health.status,
    healthChecks: toHealthChecks(raw.health),
    monCount: raw.monmap.num_mons,
    quorumNames: raw.quorum_names,
    osdCount: osdmap.num_osds,
    osdUp: osdmap.num_up_osds,
    osdIn: osdmap.num_in_osds,
    pgCount: pgmap.num_pgs,
    poolCount: pgmap.num_pools,
    usedBytes: pgmap.bytes_used,
    availableBytes: pgmap.bytes_avail,
    totalBytes: pgmap.bytes_total,
    pgStates: pgmap.pgs_by_state.map((s) => ({ state: s.state_name, count: s.count })),
    mgrAvailable: raw.mgrmap.available,
  };
}

export const toDf = (raw: RawDf): CephDf => ({
  totalBytes: raw.stats.total_bytes,
  availableBytes: raw.stats.total_avail_bytes,
  usedBytes: raw.stats.total_used_bytes,
  usedRawBytes: raw.stats.total_used_raw_bytes,
  pools: raw.pools.map((p) => ({
    id: p.id,
    name: p.name,
    storedBytes: p.stats.stored,
    objects: p.stats.objects,
    usedBytes: p.stats.bytes_used,
    percentUsed: p.stats.percent_used,
    maxAvailableBytes: p.stats.max_avail,
  })),
});

export function toOsdTree(raw: RawOsdTree): OsdTree {
  // An OSD's host is the host bucket that lists it among its children.
  const hostOf = new Map<number, string>();
  for (const n of raw.nodes) {
    if (n.type === 'host') for (const child of n.children ?? []) hostOf.set(child, n.name);
  }
  const node = (n: RawTreeNode, stray: boolean): OsdTreeNode => {
    const out: OsdTreeNode = { id: n.id, name: n.name, type: n.type, children: n.children ?? [], stray };
    if (n.status !== undefined) out.status = n.status;
    const host = hostOf.get(n.id);
    if (n.type === 'osd' && host !== undefined) out.host = host;
    if (n.device_class !== undefined) out.deviceClass = n.device_class;
    if (n.crush_weight !== undefined) out.crushWeight = n.crush_weight;
    if (n.reweight !== undefined) out.reweight = n.reweight;
    return out;
  };
  return { nodes: [...raw.nodes.map((n) => node(n, false)), ...raw.stray.map((n) => node(n, true))] };
}

const applications = (meta: Record<string, unknown>): string[] => Object.keys(meta);

export const toPool = (p: RawPoolDetail): Pool => ({
  id: p.pool_id,
  name: p.pool_name,
  size: p.size,
  minSize: p.min_size,
  pgNum: p.pg_num,
  autoscaleMode: p.pg_autoscale_mode,
  applications: applications(p.application_metadata),
});

export const toOsdDf = (raw: { nodes: RawOsdDfNode[] }): OsdDf[] =>
  raw.nodes.map((n) => ({
    id: n.id,
    deviceClass: n.device_class ?? '',
    pgs: n.pgs,
    dataBytes: n.kb_used_data * 1024,
    usedBytes: n.kb_used * 1024,
    totalBytes: n.kb * 1024,
    status: n.status,
  }));

export const toOsdDump = (raw: RawOsdDump): OsdDump => ({
  epoch: raw.epoch,
  fsid: raw.fsid,
  flags: raw.flags === '' ? [] : raw.flags.split(','),
  maxOsd: raw.max_osd,
  osds: raw.osds.map((o) => ({ id: o.osd, uuid: o.uuid, up: o.up === 1, in: o.in === 1, state: o.state })),
  pools: raw.pools.map((p) => ({
    id: p.pool,
    name: p.pool_name,
    size: p.size,
    minSize: p.min_size,
    pgNum: p.pg_num,
    applications: applications(p.application_metadata),
  })),
});

export function toMonDump(raw: Omit<RawMonDump, 'quorum'> & { quorum?: number[] }): MonDump {
  const out: MonDump = {
    epoch: raw.epoch,
    fsid: raw.fsid,
    mons: raw.mons.map((m) => ({
      name: m.name,
      rank: m.rank,
      addr: m.addr,
      addrs: m.public_addrs.addrvec.map((a) => ({ type: a.type, addr: a.addr })),
    })),
  };
  if (raw.quorum) out.quorum = raw.quorum;
  return out;
}

export const toQuorumStatus = (raw: RawQuorumStatus): QuorumStatus => ({
  electionEpoch: raw.election_epoch,
  quorum: raw.quorum,
  quorumNames: raw.quorum_names,
  leader: raw.quorum_leader_name,
  monmap: toMonDump(raw.monmap),
});

const toMds = (m: RawMdsInfo): MdsDaemon => ({ name: m.name, gid: m.gid, rank: m.rank, state: m.state });

export const toMdsStat = (raw: RawFsMap): MdsStat => ({
  epoch: raw.epoch,
  filesystems: raw.filesystems.map((f) => ({
    id: f.id,
    name: f.mdsmap.fs_name,
    maxMds: f.mdsmap.max_mds,
    metadataPoolId: f.mdsmap.metadata_pool,
    dataPoolIds: f.mdsmap.data_pools,
    daemons: Object.values(f.mdsmap.info).map(toMds),
  })),
  standbys: raw.standbys.map(toMds),
});

export const toFsStatus = (raw: RawFsStatus): FsStatus => ({
  clients: raw.clients.map((c) => ({ fs: c.fs, clients: c.clients })),
  mds: raw.mdsmap.map((m) => (m.rank === undefined ? { name: m.name, state: m.state } : { name: m.name, rank: m.rank, state: m.state })),
  pools: raw.pools.map((p) => ({ id: p.id, name: p.name, type: p.type, usedBytes: p.used, availableBytes: p.avail })),
});

export function toVersions(raw: RawVersions): CephVersions {
  const { overall, ...byType } = raw;
  return { overall, byType };
}
