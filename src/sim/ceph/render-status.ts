// Cluster-wide answers as Ceph 16 prints them with --format json (status, health detail, df,
// pg stat, versions): the same keys as test/fixtures/ceph, values from the simulated state.
import type { SimCephCluster } from './cluster.js';
import type { SimHealth } from './health.js';
import { CEPH_VERSION, stamp } from './model.js';
import { countStates } from './placement.js';
import { rawOsdStat } from './render-maps.js';

const secs = (ms: number): number => Math.floor(ms / 1000);

/** `health [detail]`; `status` embeds the same object without the detail lines. */
export function rawHealth(h: SimHealth, detail: boolean): Record<string, unknown> {
  const checks = Object.fromEntries(
    h.checks.map((c) => [
      c.code,
      {
        severity: c.severity,
        summary: { message: c.message, count: c.count },
        ...(detail ? { detail: c.detail.map((message) => ({ message })) } : {}),
        muted: false,
      },
    ]),
  );
  return { status: h.status, checks, mutes: [] };
}

export function rawStatus(c: SimCephCluster): Record<string, unknown> {
  const quorum = c.mons.quorum() ?? [];
  const pools = [...c.osdmap.pools.values()];
  const pgs = c.pgs();
  const u = c.usage();
  return {
    fsid: c.fsid,
    health: rawHealth(c.health(), false),
    election_epoch: c.mons.electionEpoch,
    quorum: quorum.map((m) => m.rank),
    quorum_names: quorum.map((m) => m.name),
    quorum_age: secs(c.options.now() - c.mons.quorumSince),
    monmap: { epoch: c.mons.epoch, min_mon_release_name: 'pacific', num_mons: c.mons.mons.length },
    // `ceph status` embeds exactly what `ceph osd stat` prints.
    osdmap: rawOsdStat(c),
    pgmap: {
      pgs_by_state: countStates(pgs).map((s) => ({ state_name: s.state, count: s.count })),
      num_pgs: pgs.length,
      num_pools: pools.length,
      num_objects: pools.reduce((n, p) => n + p.objects, 0),
      data_bytes: Math.round(pools.reduce((n, p) => n + p.storedBytes, 0)),
      bytes_used: u.usedBytes,
      bytes_avail: u.availBytes,
      bytes_total: u.totalBytes,
    },
    fsmap: statusFsmap(c),
    mgrmap: { available: c.mgrs.available, num_standbys: c.mgrs.standbys().length, modules: ['iostat'], services: {} },
    servicemap: serviceMap(c),
    progress_events: {},
  };
}

/** Pacific flattens the fsmap summary; with several filesystems it repeats id/up/in/max (a
 * JSON parser keeps the last), so the last filesystem's values are the ones given. */
function statusFsmap(c: SimCephCluster): Record<string, unknown> {
  const last = c.fsmap.filesystems[c.fsmap.filesystems.length - 1];
  const byRank = c.fsmap.filesystems.flatMap((fs) => {
    const mds = c.fsmap.activeFor(fs);
    return mds ? [{ filesystem_id: fs.id, rank: 0, name: mds.name, status: 'up:active', gid: mds.gid }] : [];
  });
  const up = last && c.fsmap.activeFor(last) ? 1 : 0;
  return {
    epoch: c.fsmap.epoch,
    ...(last ? { id: last.id, up, in: last.everActive ? 1 : up, max: last.maxMds } : {}),
    by_rank: byRank,
    'up:standby': c.fsmap.standbys().length,
  };
}

function serviceMap(c: SimCephCluster): Record<string, unknown> {
  // Pacific lists mon, mgr, osd and mds with empty stand-in entries; RGWs by gid with metadata.
  const blank = {
    start_epoch: 0,
    start_stamp: '0.000000',
    gid: 0,
    addr: '(unrecognized address family 0)/0',
    metadata: {},
    task_status: {},
  };
  const services: Record<string, { daemons: Record<string, unknown> }> = {};
  for (const d of c.hosts.all().filter((x) => x.running)) {
    const daemons = (services[d.kind] ??= { daemons: { summary: '' } }).daemons;
    const rgw = d.kind === 'rgw' ? c.rgws.get(d.name) : undefined;
    if (!rgw) {
      daemons[d.name] = blank;
      continue;
    }
    daemons[String(rgw.gid)] = {
      ...blank,
      start_epoch: 2,
      start_stamp: stamp(rgw.startedAt),
      gid: rgw.gid,
      metadata: {
        ceph_release: 'pacific',
        ceph_version: CEPH_VERSION,
        ceph_version_short: '16.2.15',
        'frontend_config#0': `beast port=${rgw.port}`,
        'frontend_type#0': 'beast',
        hostname: rgw.host ?? '',
        id: rgw.name,
        zone_name: 'default',
        zonegroup_name: 'default',
      },
    };
  }
  const started = [...c.rgws.values()].map((r) => r.startedAt);
  return { epoch: 1 + c.rgws.size, modified: stamp(Math.max(c.mons.created, ...started)), services };
}

export function rawDf(c: SimCephCluster): Record<string, unknown> {
  const u = c.usage();
  const totals = (t: { totalBytes: number; usedBytes: number; availBytes: number }) => ({
    total_bytes: t.totalBytes,
    total_avail_bytes: t.availBytes,
    total_used_bytes: t.usedBytes,
    total_used_raw_bytes: t.usedBytes,
    total_used_raw_ratio: t.totalBytes === 0 ? 0 : t.usedBytes / t.totalBytes,
  });
  return {
    stats: { ...totals(u), num_osds: u.osds.size, num_per_pool_osds: u.osds.size, num_per_pool_omap_osds: u.osds.size },
    stats_by_class: Object.fromEntries([...u.byClass].map(([cls, t]) => [cls, totals(t)])),
    pools: [...c.osdmap.pools.values()].map((p) => {
      const s = u.pools.get(p.id);
      return {
        name: p.name,
        id: p.id,
        stats: {
          stored: s?.stored ?? 0,
          objects: s?.objects ?? 0,
          kb_used: Math.ceil((s?.bytesUsed ?? 0) / 1024),
          bytes_used: s?.bytesUsed ?? 0,
          percent_used: s?.percentUsed ?? 0,
          max_avail: s?.maxAvail ?? 0,
        },
      };
    }),
  };
}

export function rawPgStat(c: SimCephCluster): Record<string, unknown> {
  const pgs = c.pgs();
  const u = c.usage();
  return {
    pg_ready: c.mgrs.available,
    pg_summary: {
      num_pg_by_state: countStates(pgs).map((s) => ({ name: s.state, num: s.count })),
      num_pgs: pgs.length,
      num_bytes: Math.round([...c.osdmap.pools.values()].reduce((n, p) => n + p.storedBytes, 0)),
      total_bytes: u.totalBytes,
      total_avail_bytes: u.availBytes,
      total_used_bytes: u.usedBytes,
      total_used_raw_bytes: u.usedBytes,
    },
  };
}

/** `versions`: every running daemon runs 16.2.15 here. */
export function rawVersions(c: SimCephCluster): Record<string, Record<string, number>> {
  const running = c.hosts.all().filter((d) => d.running);
  const count = (kind: string) => running.filter((d) => d.kind === kind).length;
  const of = (n: number): Record<string, number> => (n > 0 ? { [CEPH_VERSION]: n } : {});
  const out: Record<string, Record<string, number>> = {};
  for (const kind of ['mon', 'mgr', 'osd', 'mds']) out[kind] = of(count(kind));
  if (count('rgw') > 0) out.rgw = of(count('rgw'));
  out.overall = of(running.length);
  return out;
}
