// The maps as Ceph 16 prints them with --format json: monmap (mon dump, mon stat,
// quorum_status), mgr stat, OSD map (osd tree, osd stat, osd dump, pool ls detail) and FSMap
// (fs dump, mds stat, fs ls, fs status). Keys follow test/fixtures/ceph; constant fields carry
// the values a fresh Pacific cluster shows.
import { CRUSH_TYPE_IDS } from './crush.js';
import { CephRefusal } from './errors.js';
import { usageOf } from './usage.js';
import type { SimCephCluster } from './cluster.js';
import { CEPH_VERSION, stamp, v1PortOf, type SimFs, type SimMds, type SimMon, type SimOsd, type SimPool } from './model.js';

const FEATURES = ['kraken', 'luminous', 'mimic', 'osdmap-prune', 'nautilus', 'octopus', 'pacific', 'elector-pinging'];
// Ceph's 4540138314316775423, past 2^53: the double it parses to, which is what the master reads
// from a real cluster's JSON too.
const FEATURE_BITS = 4540138314316775424;
const isoZ = (ms: number): string => new Date(ms).toISOString().replace('Z', '000Z');
const secs = (ms: number): number => Math.floor(ms / 1000);

const monEntry = (m: SimMon) => ({
  rank: m.rank,
  name: m.name,
  public_addrs: {
    addrvec: [
      { type: 'v2', addr: `${m.ip}:${m.port}`, nonce: 0 },
      { type: 'v1', addr: `${m.ip}:${v1PortOf(m.port)}`, nonce: 0 },
    ],
  },
  addr: `${m.ip}:${v1PortOf(m.port)}/0`,
  public_addr: `${m.ip}:${v1PortOf(m.port)}/0`,
  priority: 0,
  weight: 0,
  crush_location: '{}',
});

/** The monmap; Pacific really prints "disallowed_leaders: " and "removed_ranks: " as keys. */
export const rawMonmap = (c: SimCephCluster): Record<string, unknown> => ({
  epoch: c.mons.epoch,
  fsid: c.fsid,
  modified: isoZ(c.mons.modified),
  created: isoZ(c.mons.created),
  min_mon_release: 16,
  min_mon_release_name: 'pacific',
  election_strategy: 1,
  'disallowed_leaders: ': '',
  stretch_mode: false,
  tiebreaker_mon: '',
  'removed_ranks: ': '',
  features: { persistent: FEATURES, optional: [] },
  mons: c.mons.mons.map(monEntry),
});

const quorumOf = (c: SimCephCluster) => c.mons.quorum() ?? [];

export const rawMonDump = (c: SimCephCluster) => ({ ...rawMonmap(c), quorum: quorumOf(c).map((m) => m.rank) });

export const rawMonStat = (c: SimCephCluster) => ({
  epoch: c.mons.epoch,
  min_mon_release_name: 'pacific',
  num_mons: c.mons.mons.length,
  leader: c.mons.leader()?.name ?? '',
  quorum: quorumOf(c).map((m) => ({ rank: m.rank, name: m.name })),
});

export const rawQuorumStatus = (c: SimCephCluster) => ({
  election_epoch: c.mons.electionEpoch,
  quorum: quorumOf(c).map((m) => m.rank),
  quorum_names: quorumOf(c).map((m) => m.name),
  quorum_leader_name: c.mons.leader()?.name ?? '',
  quorum_age: secs(c.options.now() - c.mons.quorumSince),
  features: { quorum_con: String(FEATURE_BITS), quorum_mon: FEATURES },
  monmap: rawMonmap(c),
});

export const rawMgrStat = (c: SimCephCluster) => ({
  epoch: c.mgrs.epoch,
  available: c.mgrs.available,
  active_name: c.mgrs.active ?? '',
  num_standby: c.mgrs.standbys().length,
});

// ---- OSD map ----------------------------------------------------------------------------------
export function rawOsdTree(c: SimCephCluster): Record<string, unknown> {
  const osds = [...c.osdmap.osds.values()];
  const crush = c.osdmap.crush;
  const osdsOf = new Map<string, SimOsd[]>();
  const push = <K, V>(m: Map<K, V[]>, k: K, v: V) => {
    const list = m.get(k);
    if (list) list.push(v);
    else m.set(k, [v]);
  };
  for (const o of osds) if (o.host !== undefined) push(osdsOf, o.host, o);
  // A host bucket without OSDs is not shown (the lab never keeps an empty one around).
  const shown = [...crush.buckets.values()].filter((b) => b.type !== 'host' || osdsOf.has(b.name));
  const childrenOf = new Map<string | null, typeof shown>();
  for (const b of shown) push(childrenOf, b.parent, b);
  // Ceph's tree dumper: each bucket's items sorted by "_NAME" for buckets and "CLASS_osd.%08d"
  // for devices, listed in `children` last first and visited first first (depth first).
  type Item = { key: string; id: number; bucket?: (typeof shown)[number]; osd?: SimOsd };
  const itemsOf = (name: string): Item[] =>
    [
      ...(childrenOf.get(name) ?? []).map((b) => ({ key: `_${b.name}`, id: b.id, bucket: b })),
      ...(osdsOf.get(name) ?? []).map((o) => ({ key: `${o.deviceClass}_osd.${String(o.id).padStart(8, '0')}`, id: o.id, osd: o })),
    ].sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const osdNode = (o: SimOsd, depth: number) => ({
    ...osdItem(o, depth),
    exists: 1,
    status: osdStatus(o),
    reweight: o.in ? 1 : 0,
    primary_affinity: 1,
  });
  const nodes: Record<string, unknown>[] = [];
  const visit = (b: (typeof shown)[number], depth: number): void => {
    const items = itemsOf(b.name);
    const children = items.map((i) => i.id).reverse();
    const typeId = CRUSH_TYPE_IDS[b.type] ?? 0;
    nodes.push(
      b.type === 'root'
        ? { id: b.id, name: b.name, type: b.type, type_id: typeId, children }
        : { id: b.id, name: b.name, type: b.type, type_id: typeId, pool_weights: {}, children },
    );
    for (const i of items) {
      if (i.bucket) visit(i.bucket, depth + 1);
      else if (i.osd) nodes.push(osdNode(i.osd, depth + 1));
    }
  };
  // Roots in id order, as Ceph's set of roots holds them.
  for (const root of (childrenOf.get(null) ?? []).sort((a, b) => a.id - b.id)) visit(root, 0);
  // Created but never booted: not in CRUSH yet (with the class `osd new` was given, if any).
  const stray = osds
    .filter((o) => o.host === undefined)
    .map((o) => ({
      id: o.id,
      ...(o.crushClass ? { device_class: o.deviceClass } : {}),
      name: `osd.${o.id}`,
      type: 'osd',
      type_id: 0,
      crush_weight: 0,
      depth: 0,
      exists: 1,
      status: 'down',
      reweight: o.in ? 1 : 0,
      primary_affinity: 1,
    }));
  return { nodes, stray };
}

export function rawOsdStat(c: SimCephCluster): Record<string, unknown> {
  const osds = [...c.osdmap.osds.values()];
  return {
    epoch: c.osdmap.epoch,
    num_osds: osds.length,
    num_up_osds: osds.filter((o) => o.up).length,
    osd_up_since: secs(c.osdmap.lastUpChange),
    num_in_osds: osds.filter((o) => o.in).length,
    osd_in_since: secs(c.osdmap.lastInChange),
    num_remapped_pgs: c.pgs().filter((pg) => pg.state.split('+').includes('remapped')).length,
  };
}

/** crush_node_flags / device_class_flags: name → its flags, sorted as Ceph's set prints them. */
const flagsByName = (flags: Map<string, Set<string>>): Record<string, string[]> =>
  Object.fromEntries([...flags].map(([name, set]) => [name, [...set].sort()]));

/** An OSD as a CRUSH item, the fields `osd tree` and `osd df` open their rows with. */
const osdItem = (o: SimOsd, depth: number) => ({
  id: o.id,
  device_class: o.deviceClass,
  name: `osd.${o.id}`,
  type: 'osd',
  type_id: 0,
  crush_weight: o.crushWeight,
  depth,
  pool_weights: {},
});

/** `osd tree`/`osd df` status: destroyed wins over down, as recorded. */
const osdStatus = (o: SimOsd): string => (o.destroyed ? 'destroyed' : o.up ? 'up' : 'down');

/** `osd df` (not tree mode): the OSDs in CRUSH in id order, with what they hold. An out OSD
 * shows zero bytes (the mgr drops its stats) but still counts the PGs it serves until they
 * have moved off, as recorded from Ceph 16. */
export function rawOsdDf(c: SimCephCluster, filter?: string): Record<string, unknown> {
  const inCrush = [...c.osdmap.osds.values()].filter((o) => o.host !== undefined);
  const osds = (filter === undefined ? inCrush : osdDfFiltered(inCrush, filter)).sort((a, b) => a.id - b.id);
  // Filtered, only those OSDs' usage (a drain asks about its one OSD at 3,659 OSDs).
  const placed = c.pgs();
  const usage = filter === undefined ? c.usage() : usageOf(osds, [...c.osdmap.pools.values()], placed, c.options.fullRatio);
  const pgs = new Map<number, number>();
  for (const pg of placed) for (const id of pg.acting) pgs.set(id, (pgs.get(id) ?? 0) + 1);
  const kb = (bytes: number) => Math.floor(bytes / 1024);
  const rows = osds.map((o) => {
    const u = usage.osds.get(o.id);
    return { o, u, util: u && u.totalBytes > 0 ? (100 * u.usedBytes) / u.totalBytes : 0 };
  });
  const withStats = rows.filter((r) => r.u !== undefined);
  const total = (f: (u: NonNullable<(typeof rows)[number]['u']>) => number) => withStats.reduce((n, r) => n + (r.u ? kb(f(r.u)) : 0), 0);
  const totalKb = total((u) => u.totalBytes);
  const avg = totalKb > 0 ? (100 * total((u) => u.usedBytes)) / totalKb : 0;
  const vars = withStats.map((r) => (avg > 0 ? r.util / avg : 0));
  const nodes = rows.map(({ o, u, util }) => ({
    ...osdItem(o, 2),
    reweight: o.in ? 1 : 0,
    kb: u ? kb(u.totalBytes) : 0,
    kb_used: u ? kb(u.usedBytes) : 0,
    kb_used_data: u ? kb(u.dataBytes) : 0,
    kb_used_omap: 0,
    kb_used_meta: u ? kb(u.metaBytes) : 0,
    kb_avail: u ? kb(u.availBytes) : 0,
    utilization: util,
    // Ceph divides by the average only when there is one: an out OSD alone shows 1 (recorded).
    var: avg > 0 ? (u ? util / avg : 0) : 1,
    pgs: pgs.get(o.id) ?? 0,
    status: osdStatus(o),
  }));
  const dev = Math.sqrt(withStats.reduce((n, r) => n + (r.util - avg) ** 2, 0) / Math.max(1, withStats.length));
  return {
    nodes,
    stray: [],
    summary: {
      total_kb: totalKb,
      total_kb_used: total((u) => u.usedBytes),
      total_kb_used_data: total((u) => u.dataBytes),
      total_kb_used_omap: 0,
      total_kb_used_meta: total((u) => u.metaBytes),
      total_kb_avail: total((u) => u.availBytes),
      average_utilization: avg,
      min_var: vars.length > 0 ? Math.min(...vars) : -1,
      max_var: vars.length > 0 ? Math.max(...vars) : -1,
      dev,
    },
  };
}

/** The fields `osd dump` and `osd pool ls detail` share for a replicated pool. */
const poolFields = (p: SimPool) => ({
  pool_name: p.name,
  create_time: stamp(p.createdAt),
  flags: 1,
  flags_names: 'hashpspool',
  type: 1,
  size: p.size,
  min_size: p.minSize,
  crush_rule: p.crushRule ?? 0,
  object_hash: 2,
  pg_autoscale_mode: 'on',
  pg_num: p.pgNum,
  pg_placement_num: p.pgNum,
  pg_placement_num_target: p.pgNum,
  pg_num_target: p.pgNum,
  pg_num_pending: p.pgNum,
  last_change: String(p.lastChange),
  auid: 0,
  snap_mode: 'selfmanaged',
  snap_seq: 0,
  snap_epoch: 0,
  pool_snaps: [],
  removed_snaps: '[]',
  quota_max_bytes: 0,
  quota_max_objects: 0,
  tiers: [],
  tier_of: -1,
  read_tier: -1,
  write_tier: -1,
  cache_mode: 'none',
  erasure_code_profile: '',
  stripe_width: 0,
  expected_num_objects: 0,
  fast_read: false,
  options: { ...p.options },
  application_metadata: p.applications,
});

export const rawPoolLs = (c: SimCephCluster) => [...c.osdmap.pools.values()].map((p) => ({ pool_id: p.id, ...poolFields(p) }));

export function rawOsdDump(c: SimCephCluster): Record<string, unknown> {
  const m = c.osdmap;
  const addrs = (ip: string | undefined, port: number) =>
    ip === undefined
      ? { addrvec: [] }
      : {
          addrvec: [
            { type: 'v2', addr: `${ip}:${port}`, nonce: 0 },
            { type: 'v1', addr: `${ip}:${port + 1}`, nonce: 0 },
          ],
        };
  const addr = (ip: string | undefined, port: number) => (ip === undefined ? '(unrecognized address family 0)/0' : `${ip}:${port + 1}/0`);
  return {
    epoch: m.epoch,
    fsid: c.fsid,
    created: stamp(m.created),
    modified: stamp(m.modified),
    last_up_change: stamp(m.lastUpChange),
    last_in_change: stamp(m.lastInChange),
    flags: 'sortbitwise,recovery_deletes,purged_snapdirs,pglog_hardlimit',
    flags_num: 5799936,
    flags_set: ['pglog_hardlimit', 'purged_snapdirs', 'recovery_deletes', 'sortbitwise'],
    crush_version: m.crush.version,
    full_ratio: c.options.fullRatio,
    backfillfull_ratio: c.options.backfillfullRatio,
    nearfull_ratio: c.options.nearfullRatio,
    cluster_snapshot: '',
    pool_max: m.poolMax,
    max_osd: m.maxOsd,
    require_min_compat_client: 'luminous',
    min_compat_client: 'jewel',
    require_osd_release: 'pacific',
    pools: [...m.pools.values()].map((p) => ({ pool: p.id, ...poolFields(p) })),
    osds: [...m.osds.values()]
      .sort((a, b) => a.id - b.id)
      .map((o) => ({
        osd: o.id,
        uuid: o.uuid,
        up: o.up ? 1 : 0,
        in: o.in ? 1 : 0,
        weight: o.in ? 1 : 0,
        primary_affinity: 1,
        last_clean_begin: 0,
        last_clean_end: 0,
        up_from: o.upFrom,
        up_thru: o.up ? m.epoch : 0,
        down_at: o.downAt,
        lost_at: 0,
        public_addrs: addrs(o.ip, 6800),
        cluster_addrs: addrs(o.ip, 6802),
        public_addr: addr(o.ip, 6800),
        cluster_addr: addr(o.ip, 6802),
        // A destroyed OSD: ["destroyed","exists"] and a zero uuid; a reused id is "new" again.
        // Ceph prints the state as a sorted set, its own flags (noout, ...) and autoout included.
        state: o.destroyed
          ? ['destroyed', 'exists']
          : [
              'exists',
              ...(o.up ? ['up'] : []),
              ...(o.booted ? [] : ['new']),
              ...(o.autoOut ? ['autoout'] : []),
              ...(m.osdFlags.get(o.id) ?? []),
            ].sort(),
      })),
    osd_xinfo: [],
    pg_upmap: [],
    pg_upmap_items: [],
    pg_temp: [],
    primary_temp: [],
    blocklist: {},
    range_blocklist: {},
    erasure_code_profiles: { default: { k: '2', m: '1', plugin: 'jerasure', technique: 'reed_sol_van' } },
    removed_snaps_queue: [],
    new_removed_snaps: [],
    new_purged_snaps: [],
    crush_node_flags: flagsByName(m.crushNodeFlags),
    device_class_flags: flagsByName(m.deviceClassFlags),
    stretch_mode: {
      stretch_mode_enabled: false,
      stretch_bucket_count: 0,
      degraded_stretch_mode: 0,
      recovering_stretch_mode: 0,
      stretch_mode_bucket: 0,
    },
  };
}

// ---- FSMap ------------------------------------------------------------------------------------
const mdsInfo = (m: SimMds, active: boolean) => ({
  gid: m.gid,
  name: m.name,
  rank: active ? 0 : -1,
  incarnation: active ? 5 : 0,
  state: active ? 'up:active' : 'up:standby',
  state_seq: 2,
  addr: m.ip === undefined ? '(unrecognized address family 0)/0' : `${m.ip}:6801/${m.gid}`,
  addrs: {
    addrvec:
      m.ip === undefined
        ? []
        : [
            { type: 'v2', addr: `${m.ip}:6800`, nonce: m.gid },
            { type: 'v1', addr: `${m.ip}:6801`, nonce: m.gid },
          ],
  },
  join_fscid: -1,
  export_targets: [],
  features: FEATURE_BITS,
  flags: 0,
});

function mdsmap(c: SimCephCluster, fs: SimFs): Record<string, unknown> {
  const active = c.fsmap.activeFor(fs);
  return {
    epoch: c.fsmap.epoch,
    flags: 18,
    ever_allowed_features: 0,
    explicitly_allowed_features: 0,
    created: stamp(fs.createdAt),
    modified: stamp(fs.createdAt),
    tableserver: 0,
    root: 0,
    session_timeout: 60,
    session_autoclose: 300,
    required_client_features: {},
    max_file_size: 1099511627776,
    last_failure: 0,
    last_failure_osd_epoch: 0,
    max_mds: fs.maxMds,
    in: fs.everActive ? [0] : [],
    up: active ? { mds_0: active.gid } : {},
    failed: fs.everActive && !active ? [0] : [],
    damaged: [],
    stopped: [],
    info: active ? { [`gid_${active.gid}`]: mdsInfo(active, true) } : {},
    data_pools: fs.dataPools,
    metadata_pool: fs.metadataPool,
    enabled: true,
    fs_name: fs.name,
    balancer: '',
    standby_count_wanted: 0,
  };
}

export const rawFsDump = (c: SimCephCluster) => ({
  epoch: c.fsmap.epoch,
  default_fscid: c.fsmap.filesystems[0]?.id ?? -1,
  feature_flags: { enable_multiple: true, ever_enabled_multiple: true },
  standbys: c.fsmap.standbys().map((m) => ({ ...mdsInfo(m, false), epoch: c.fsmap.epoch })),
  filesystems: c.fsmap.filesystems.map((fs) => ({ mdsmap: mdsmap(c, fs), id: fs.id })),
});

export const rawMdsStat = (c: SimCephCluster) => ({ fsmap: rawFsDump(c), mdsmap_first_committed: 1, mdsmap_last_committed: c.fsmap.epoch });

const poolName = (c: SimCephCluster, id: number): string => c.osdmap.pools.get(id)?.name ?? '';

export const rawFsLs = (c: SimCephCluster) =>
  c.fsmap.filesystems.map((fs) => ({
    name: fs.name,
    metadata_pool: poolName(c, fs.metadataPool),
    metadata_pool_id: fs.metadataPool,
    data_pool_ids: fs.dataPools,
    data_pools: fs.dataPools.map((id) => poolName(c, id)),
  }));

/** The mgr status module's view; inode and dentry counts are those of a fresh filesystem. */
export function rawFsStatus(c: SimCephCluster): Record<string, unknown> {
  const u = c.usage();
  const fss = c.fsmap.filesystems;
  return {
    clients: fss.map((fs) => ({ clients: 0, fs: fs.name })),
    mds_version: CEPH_VERSION,
    mdsmap: [
      ...fss.flatMap((fs) => {
        const a = c.fsmap.activeFor(fs);
        return a ? [{ caps: 0, dirs: 12, dns: 10, inos: 13, name: a.name, rank: 0, rate: 0, state: 'active' }] : [];
      }),
      ...c.fsmap.standbys().map((m) => ({ name: m.name, state: 'standby' })),
    ],
    pools: fss.flatMap((fs) =>
      [[fs.metadataPool, 'metadata'] as const, ...fs.dataPools.map((id) => [id, 'data'] as const)].map(([id, type]) => ({
        avail: u.pools.get(id)?.maxAvail ?? 0,
        id,
        name: poolName(c, id),
        type,
        used: u.pools.get(id)?.bytesUsed ?? 0,
      })),
    ),
  };
}

/** `osd df [plain] FILTER`: the OSDs of a CRUSH node (an OSD, a host) or a device class. Ceph
 * also filters by pool; the lab refuses that rather than answer it wrongly. */
function osdDfFiltered(osds: SimOsd[], filter: string): SimOsd[] {
  const one = /^osd\.(\d+)$/.exec(filter);
  if (one) {
    const found = osds.filter((o) => o.id === Number(one[1]));
    if (found.length > 0) return found;
  } else {
    const matched = osds.filter((o) => o.host === filter || o.deviceClass === filter);
    if (matched.length > 0) return matched;
  }
  throw new CephRefusal('EINVAL', `'${filter}' not a pool, crush node or device class name`);
}

/** `osd crush rule dump`: the replicated rules as Ceph 16 prints them. */
export const rawRuleDump = (c: SimCephCluster) =>
  c.osdmap.crush.rules.map((r) => ({
    rule_id: r.id,
    rule_name: r.name,
    ruleset: r.id,
    type: 1,
    min_size: 1,
    max_size: 10,
    steps: [
      {
        op: 'take',
        item: r.deviceClass === undefined ? (c.osdmap.crush.idOf(r.root) ?? -1) : (c.osdmap.crush.idOf(r.root) ?? -1) - 1,
        item_name: r.deviceClass === undefined ? r.root : `${r.root}~${r.deviceClass}`,
      },
      { op: r.type === 'osd' ? 'choose_firstn' : 'chooseleaf_firstn', num: 0, type: r.type },
      { op: 'emit' },
    ],
  }));
