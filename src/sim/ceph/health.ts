// Health checks under Ceph 16's own codes, summaries and detail lines (OSDMap::check_health,
// PGMap::get_health_checks, MDSMonitor, MgrMonitor). Checks come sorted by code, as Ceph's
// std::map prints them; the status is the worst severity, HEALTH_OK when there are none.
import { monAddr, type MonMap } from './mons.js';
import type { SimCephOptions, SimFs, SimOsd, SimPool } from './model.js';
import { isActive, type SimPg } from './placement.js';
import type { Usage } from './usage.js';

export type Severity = 'HEALTH_WARN' | 'HEALTH_ERR';

export interface SimCheck {
  code: string;
  severity: Severity;
  message: string;
  count: number;
  detail: string[];
}

export interface SimHealth {
  status: 'HEALTH_OK' | Severity;
  checks: SimCheck[];
}

export interface HealthView {
  mons: MonMap;
  mgrAvailable: boolean;
  osds: SimOsd[];
  pools: SimPool[];
  pgs: SimPg[];
  usage: Usage;
  filesystems: { fs: SimFs; active: boolean }[];
  options: SimCephOptions;
  /** OSD_FLAGS detail lines ("osd.0 has flags noout", "host h3 has flags noout"). */
  flagLines?: string[];
}

/** mon_health_max_detail: Ceph stops listing items after this many. */
const MAX_DETAIL = 50;
const s = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

export function healthOf(v: HealthView): SimHealth {
  const checks: SimCheck[] = [];
  const add = (code: string, severity: Severity, message: string, count: number, detail: string[]): void => {
    if (count > 0) checks.push({ code, severity, message, count, detail: detail.slice(0, MAX_DETAIL) });
  };
  const quorum = v.mons.quorum() ?? [];
  const downMons = v.mons.mons.filter((m) => !m.running);
  add(
    'MON_DOWN',
    'HEALTH_WARN',
    `${downMons.length}/${v.mons.mons.length} mons down, quorum ${quorum.map((m) => m.name).join(',')}`,
    downMons.length,
    downMons.map((m) => `mon.${m.name} (rank ${m.rank}) addr ${monAddr(m)} is down (out of quorum)`),
  );
  add('MGR_DOWN', 'HEALTH_WARN', 'no active mgr', v.mgrAvailable ? 0 : 1, []);
  osdChecks(v, add);
  pgChecks(v, add);
  fsChecks(v, add);
  const noApp = v.pools.filter((p) => p.objects > 0 && Object.keys(p.applications).length === 0);
  add('POOL_APP_NOT_ENABLED', 'HEALTH_WARN', `${noApp.length} pool(s) do not have an application enabled`, noApp.length, [
    ...noApp.map((p) => `application not enabled on pool '${p.name}'`),
    "use 'ceph osd pool application enable <pool-name> <app-name>', where <app-name> is 'cephfs', 'rbd', 'rgw', or freeform for custom applications.",
  ]);
  checks.sort((a, b) => (a.code < b.code ? -1 : 1));
  const status = checks.some((c) => c.severity === 'HEALTH_ERR') ? 'HEALTH_ERR' : checks.length > 0 ? 'HEALTH_WARN' : 'HEALTH_OK';
  return { status, checks };
}

type Add = (code: string, severity: Severity, message: string, count: number, detail: string[]) => void;

function osdChecks(v: HealthView, add: Add): void {
  // An OSD that never booted is not in CRUSH yet: Ceph does not call it down.
  const down = v.osds.filter((o) => o.booted && o.in && !o.up);
  add(
    'OSD_DOWN',
    'HEALTH_WARN',
    `${down.length} osds down`,
    down.length,
    down.map((o) => `osd.${o.id} (root=default,host=${o.host ?? ''}) is down`),
  );
  const hosts = new Map<string, SimOsd[]>();
  for (const o of v.osds) if (o.booted && o.host !== undefined) hosts.set(o.host, [...(hosts.get(o.host) ?? []), o]);
  const downHosts = [...hosts].filter(([, osds]) => osds.every((o) => !o.up) && osds.some((o) => o.in));
  const downHostOsds = downHosts.reduce((n, [, osds]) => n + osds.length, 0);
  add(
    'OSD_HOST_DOWN',
    'HEALTH_WARN',
    `${s(downHosts.length, 'host', 'hosts')} (${downHostOsds} osds) down`,
    downHosts.length,
    downHosts.map(([h, osds]) => `host ${h} (root=default) (${osds.length} osds) is down`),
  );
  const flagged = v.flagLines ?? [];
  add(
    'OSD_FLAGS',
    'HEALTH_WARN',
    `${flagged.length} OSDs or CRUSH {nodes, device-classes} have {NOUP,NODOWN,NOIN,NOOUT} flags set`,
    flagged.length,
    flagged,
  );
  const size = v.options.poolDefaultSize;
  add('TOO_FEW_OSDS', 'HEALTH_WARN', `OSD count ${v.osds.length} < osd_pool_default_size ${size}`, v.osds.length < size ? 1 : 0, []);
  const level = (id: number): 'full' | 'backfillfull' | 'nearfull' | null => {
    const c = v.usage.osds.get(id);
    const ratio = c && c.totalBytes > 0 ? c.usedBytes / c.totalBytes : 0;
    if (ratio >= v.options.fullRatio) return 'full';
    if (ratio >= v.options.backfillfullRatio) return 'backfillfull';
    return ratio >= v.options.nearfullRatio ? 'nearfull' : null;
  };
  const at = (l: string) => v.osds.filter((o) => level(o.id) === l);
  const full = at('full');
  const backfill = at('backfillfull');
  const near = at('nearfull');
  add(
    'OSD_FULL',
    'HEALTH_ERR',
    `${full.length} full osd(s)`,
    full.length,
    full.map((o) => `osd.${o.id} is full`),
  );
  add(
    'OSD_BACKFILLFULL',
    'HEALTH_WARN',
    `${backfill.length} backfillfull osd(s)`,
    backfill.length,
    backfill.map((o) => `osd.${o.id} is backfill full`),
  );
  add(
    'OSD_NEARFULL',
    'HEALTH_WARN',
    `${near.length} nearfull osd(s)`,
    near.length,
    near.map((o) => `osd.${o.id} is near full`),
  );
}

function pgChecks(v: HealthView, add: Add): void {
  const words = (pg: SimPg) => pg.state.split('+');
  const stale = v.pgs.filter((pg) => words(pg).includes('stale'));
  const inactive = v.pgs.filter((pg) => !isActive(pg.state) && !words(pg).includes('stale'));
  const line = (pg: SimPg): string =>
    pg.state === 'unknown'
      ? `pg ${pg.pgid} is stuck inactive for 0s, current state unknown, last acting []`
      : `pg ${pg.pgid} is ${pg.state}, acting [${(pg.up.length > 0 ? pg.up : pg.mapped).join(',')}]`;
  const availability = [
    ...(inactive.length > 0 ? [`${s(inactive.length, 'pg', 'pgs')} inactive`] : []),
    ...(stale.length > 0 ? [`${s(stale.length, 'pg', 'pgs')} stale`] : []),
  ];
  add(
    'PG_AVAILABILITY',
    'HEALTH_WARN',
    `Reduced data availability: ${availability.join(', ')}`,
    inactive.length + stale.length,
    [...inactive, ...stale].map(line),
  );
  const degraded = v.pgs.filter((pg) => words(pg).includes('degraded'));
  const undersized = v.pgs.filter((pg) => words(pg).includes('undersized'));
  const affected = v.pgs.filter((pg) => words(pg).includes('degraded') || words(pg).includes('undersized'));
  // Objects are spread evenly over a pool's PGs; each missing replica of a PG degrades its share.
  const copies = v.pools.reduce((n, p) => n + p.objects * p.size, 0);
  const missing = Math.round(degraded.reduce((n, pg) => n + (pg.pool.objects / pg.pool.pgNum) * (pg.pool.size - pg.up.length), 0));
  const parts = [
    ...(missing > 0 && copies > 0 ? [`${missing}/${copies} objects degraded (${((100 * missing) / copies).toFixed(3)}%)`] : []),
    ...(degraded.length > 0 ? [`${s(degraded.length, 'pg', 'pgs')} degraded`] : []),
    ...(undersized.length > 0 ? [`${s(undersized.length, 'pg', 'pgs')} undersized`] : []),
  ];
  add('PG_DEGRADED', 'HEALTH_WARN', `Degraded data redundancy: ${parts.join(', ')}`, affected.length, affected.map(line));
}

function fsChecks(v: HealthView, add: Add): void {
  const offline = v.filesystems.filter((f) => !f.active).map((f) => f.fs);
  const neverUp = offline.filter((fs) => !fs.everActive);
  const failed = offline.filter((fs) => fs.everActive);
  const fsIs = (n: number) => (n === 1 ? '1 filesystem is' : `${n} filesystems are`);
  add(
    'MDS_ALL_DOWN',
    'HEALTH_ERR',
    `${fsIs(offline.length)} offline`,
    offline.length,
    offline.map((fs) => `fs ${fs.name} is offline because no MDS is active for it.`),
  );
  // A rank that was never filled is "fewer MDS than max_mds"; one whose MDS died is failed.
  add(
    'MDS_UP_LESS_THAN_MAX',
    'HEALTH_WARN',
    `${fsIs(neverUp.length)} online with fewer MDS than max_mds`,
    neverUp.length,
    neverUp.map((fs) => `fs ${fs.name} has 0 MDS online, but wants ${fs.maxMds}`),
  );
  add(
    'FS_DEGRADED',
    'HEALTH_WARN',
    `${fsIs(failed.length)} degraded`,
    failed.length,
    failed.map((fs) => `fs ${fs.name} is degraded`),
  );
  add(
    'FS_WITH_FAILED_MDS',
    'HEALTH_WARN',
    `${failed.length === 1 ? '1 filesystem has' : `${failed.length} filesystems have`} a failed mds daemon`,
    failed.length,
    failed.map((fs) => `fs ${fs.name} has 1 failed mds`),
  );
}
