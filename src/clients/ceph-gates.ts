// The OSD safety gates. Ceph answers "no" in two ways, and both must become a value:
//  * `osd ok-to-stop` exits EBUSY (16) with the JSON verdict on stdout and the reason on
//    stderr. Runner rejects a non-zero exit with a CommandError that keeps stderr only, so the
//    reason comes from there.
//  * `osd safe-to-destroy --format json` exits 0 and lists the ids by verdict (without
//    --format it exits EBUSY/EAGAIN instead). Both forms are handled.
// EAGAIN (11) means "not known yet" (no PG stats): also not ok, with Ceph's reason.
import { CommandError } from '../errors.js';
import type { RawOkToStop, RawSafeToDestroy } from './ceph-schemas-osd.js';
import type { OkToStop, SafeToDestroy } from './ceph-types.js';

export const ERRNO = { ENOENT: 2, EAGAIN: 11, EEXIST: 17, EBUSY: 16, EINVAL: 22 } as const;

/** Ceph's reason when a gate refused by exit code; undefined for any other failure. */
export function gateRefusal(err: unknown): string | undefined {
  if (!(err instanceof CommandError)) return undefined;
  if (err.exitCode !== ERRNO.EBUSY && err.exitCode !== ERRNO.EAGAIN) return undefined;
  return cephMessage(err.stderr) || `refused with exit code ${err.exitCode}`;
}

/** The last non-empty stderr line without its "Error EBUSY: " prefix. */
export function cephMessage(stderr: string): string {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '');
  return (lines[lines.length - 1] ?? '').replace(/^Error E[A-Z]+: /, '');
}

export function okToStopFrom(raw: RawOkToStop): OkToStop {
  if (raw.ok_to_stop) return { ok: true, osds: raw.osds };
  return {
    ok: false,
    reason: `unsafe to stop osd(s) at this time (${raw.num_not_ok_pgs} PGs are or would become offline)`,
    osds: raw.osds,
  };
}

export function safeToDestroyFrom(ids: number[], raw: RawSafeToDestroy): SafeToDestroy {
  const safe = ids.every((id) => raw.safe_to_destroy.includes(id));
  const out: SafeToDestroy = {
    safe,
    safeIds: raw.safe_to_destroy,
    activeIds: raw.active,
    missingStatsIds: raw.missing_stats,
    storedPgIds: raw.stored_pgs,
  };
  if (safe) return out;
  // The same reasons Ceph prints without --format json.
  const reasons: string[] = [];
  if (raw.active.length > 0) reasons.push(`OSD(s) ${raw.active.join(',')} have PGs currently mapped to them`);
  if (raw.missing_stats.length > 0) {
    reasons.push(`OSD(s) ${raw.missing_stats.join(',')} have no reported stats, and not all PGs are active+clean`);
  }
  if (raw.stored_pgs.length > 0) {
    const osds = raw.stored_pgs.join(',');
    reasons.push(`OSD(s) ${osds} last reported they still store some PG data, and not all PGs are active+clean`);
  }
  out.reason = reasons.length > 0 ? reasons.join('; ') : `OSD(s) ${ids.join(',')} are not reported safe to destroy`;
  return out;
}

export function safeToDestroyRefused(reason: string): SafeToDestroy {
  return { safe: false, reason, safeIds: [], activeIds: [], missingStatsIds: [], storedPgIds: [] };
}

export function checkOsdIds(what: string, ids: number[]): void {
  if (ids.length === 0) throw new TypeError(`${what} needs at least one OSD id`);
  for (const id of ids) {
    if (!Number.isInteger(id) || id < 0) throw new TypeError(`${what}: ${String(id)} is not an OSD id`);
  }
}
