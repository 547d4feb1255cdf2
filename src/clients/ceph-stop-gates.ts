// The questions a disruption gate asks Ceph before it stops daemons, and the noout flags that
// keep a short stop from turning into a rebalance. Recorded from Ceph 16.2.15
// (test/fixtures/ceph/record-stop-gates.sh):
//  * `osd ok-to-stop IDS...` (mgr) prints its report as JSON on stdout whatever the verdict, and
//    exits EBUSY when some PG would go (or already is) below min_size, EAGAIN when PG states are
//    unknown. The runner's CommandError keeps only stderr, so stdout is collected line by line:
//    the report holds PG ids and OSD ids, never a secret.
//  * `mon ok-to-stop NAMES...` and `mds ok-to-stop NAMES...` (mons) answer in words on stderr
//    only: exit 0 with "quorum should be preserved (b,c) after stopping [a]" / "should be safe to
//    stop [a]", or EBUSY with the reason. Names Ceph does not know are ignored, as recorded.
//  * `osd set-group|unset-group FLAGS WHO...`: WHO is `osd.N` or a CRUSH node (or device class).
//    An unknown OSD is exit 0 with "osd.N does not exist. " on stderr; an unknown node is EINVAL.
//    Setting what is set is exit 0 and silent.
//  * Who carries noout: `osd dump` lists per-OSD flags in each OSD's `state` and per-node ones in
//    `crush_node_flags` (by name); `osd tree` does not show them, but gives the OSDs under a node.
import { CommandError } from '../errors.js';
import type { RunOutput } from '../exec/runner.js';
import { ERRNO, cephMessage } from './ceph-gates.js';
import { arr, bool, int, mapOf, obj, shape, str, type Shape } from './ceph-output.js';

// ---- raw shapes ---------------------------------------------------------------------------------
/** DaemonServer's offline_pg_report: the lists appear only when not empty. */
export interface RawOsdStopReport {
  ok_to_stop: boolean;
  osds: number[];
  num_ok_pgs: number;
  num_not_ok_pgs: number;
  unknown_pgs?: string[];
  bad_no_pool_pgs?: string[];
  bad_already_inactive?: string[];
  bad_become_inactive?: string[];
  ok_become_degraded?: string[];
  ok_become_more_degraded?: string[];
}
const PG_LISTS = [
  'unknown_pgs',
  'bad_no_pool_pgs',
  'bad_already_inactive',
  'bad_become_inactive',
  'ok_become_degraded',
  'ok_become_more_degraded',
] as const;
export const osdStopReportShape: Shape<RawOsdStopReport> = shape(
  'osd-ok-to-stop-report',
  obj(
    {
      ok_to_stop: bool,
      osds: arr(int),
      num_ok_pgs: int,
      num_not_ok_pgs: int,
      ...Object.fromEntries(PG_LISTS.map((k) => [k, arr(str)])),
    },
    [...PG_LISTS],
  ),
);

/** The part of `osd dump` that says which flags are set where. */
export interface RawOsdFlags {
  flags: string;
  osds: { osd: number; state: string[] }[];
  crush_node_flags?: Record<string, string[]>;
  device_class_flags?: Record<string, string[]>;
}
export const osdFlagsShape: Shape<RawOsdFlags> = shape(
  'osd-dump-flags',
  obj(
    {
      flags: str,
      osds: arr(obj({ osd: int, state: arr(str) })),
      crush_node_flags: mapOf(arr(str)),
      device_class_flags: mapOf(arr(str)),
    },
    ['crush_node_flags', 'device_class_flags'],
  ),
);

/** `osd tree` as far as descending from a node to its OSDs needs. */
export interface RawTreeForFlags {
  nodes: { id: number; name: string; type: string; children?: number[]; device_class?: string }[];
}

// ---- typed answers ------------------------------------------------------------------------------
/** `osd ok-to-stop` for a set of OSDs, with the PGs behind the verdict. */
export interface OsdStopReport {
  ok: boolean;
  /** Ceph's words when not ok: "unsafe to stop osd(s) at this time (45 PGs are or would become
   * offline)", or why it cannot tell (EAGAIN). */
  reason?: string;
  osds: number[];
  /** PGs that keep at least min_size replicas, and those that would not. */
  okPgs: number;
  notOkPgs: number;
  /** Would fall below min_size: the reason for a "no". */
  becomeInactive: string[];
  /** Already inactive and on one of these OSDs. */
  alreadyInactive: string[];
  /** In a pool being created or deleted. */
  noPool: string[];
  /** State unknown (no stats yet): no conclusion can be drawn. */
  unknown: string[];
  /** Stay available with fewer replicas; `becomeMoreDegraded` were degraded already. */
  becomeDegraded: string[];
  becomeMoreDegraded: string[];
}

export interface MonStopReport {
  ok: boolean;
  /** Ceph's sentence, e.g. "not enough monitors would be available (c) after stopping mons [a,b]". */
  message: string;
  /** The monitors named (as asked; Ceph ignores names it does not know). */
  mons: string[];
  /** The monitors of the quorum that would be left, as Ceph lists them. */
  remaining: string[];
}

export interface MdsStopReport {
  ok: boolean;
  /** "should be safe to stop [a]" or "insufficent standby MDS daemons to stop active gids 4162
   * and/or standby gids " (Ceph's spelling). */
  message: string;
  mds: string[];
  /** On a "no": the gids of the active daemons that would have no standby to take over. */
  activeGids: number[];
  standbyGids: number[];
}

export type OsdGroupFlag = 'noout' | 'noin' | 'noup' | 'nodown';
export const OSD_GROUP_FLAGS: readonly OsdGroupFlag[] = ['noout', 'noin', 'noup', 'nodown'];

export interface OsdGroupFlagsResult {
  /** `osd.N` names Ceph said do not exist (exit 0: the others were flagged). */
  missing: string[];
}

export interface NooutState {
  /** The cluster-wide flag (`ceph osd set noout`). */
  cluster: boolean;
  /** OSDs flagged one by one (`set-group noout osd.N`). */
  osds: number[];
  /** CRUSH nodes flagged (`set-group noout HOST`) with the OSDs under each. */
  crushNodes: Record<string, number[]>;
  /** Device classes flagged, with their OSDs. */
  deviceClasses: Record<string, number[]>;
  /** Every OSD the mon will not mark out while it is down, whichever flag says so. */
  effective: number[];
}

// ---- mapping ------------------------------------------------------------------------------------
export function osdStopReportFrom(raw: RawOsdStopReport, refusal?: string): OsdStopReport {
  const out: OsdStopReport = {
    ok: raw.ok_to_stop && refusal === undefined,
    osds: raw.osds,
    okPgs: raw.num_ok_pgs,
    notOkPgs: raw.num_not_ok_pgs,
    becomeInactive: raw.bad_become_inactive ?? [],
    alreadyInactive: raw.bad_already_inactive ?? [],
    noPool: raw.bad_no_pool_pgs ?? [],
    unknown: raw.unknown_pgs ?? [],
    becomeDegraded: raw.ok_become_degraded ?? [],
    becomeMoreDegraded: raw.ok_become_more_degraded ?? [],
  };
  if (out.ok) return out;
  out.reason =
    refusal ??
    (out.unknown.length > 0
      ? `${out.unknown.length} pgs have unknown state; cannot draw any conclusions`
      : `unsafe to stop osd(s) at this time (${raw.num_not_ok_pgs} PGs are or would become offline)`);
  return out;
}

/** A refusal without a report on stdout (an older mgr, a cut-off answer): Ceph's words only. */
export const osdStopRefused = (osds: number[], reason: string): OsdStopReport => ({
  ok: false,
  reason,
  osds,
  okPgs: 0,
  notOkPgs: 0,
  becomeInactive: [],
  alreadyInactive: [],
  noPool: [],
  unknown: [],
  becomeDegraded: [],
  becomeMoreDegraded: [],
});

/** "(b,c)" → ['b', 'c']; "()" → []. */
const listIn = (text: string | undefined): string[] => (text ?? '').split(',').filter((w) => w !== '');

export function monStopFrom(mons: string[], ok: boolean, stderr: string): MonStopReport {
  const message = cephMessage(stderr);
  const m = /\(([^)]*)\) after stopping/.exec(message);
  return { ok, message, mons, remaining: listIn(m?.[1]) };
}

export function mdsStopFrom(mds: string[], ok: boolean, stderr: string): MdsStopReport {
  const message = cephMessage(stderr);
  const m = /active gids ([0-9,]*) and\/or standby gids ?([0-9,]*)/.exec(message);
  return { ok, message, mds, activeGids: listIn(m?.[1]).map(Number), standbyGids: listIn(m?.[2]).map(Number) };
}

export function groupFlagsFrom(stderr: string): OsdGroupFlagsResult {
  return { missing: [...stderr.matchAll(/(osd\.\d+) does not exist/g)].map((m) => m[1] as string) };
}

/** Which OSDs carry noout, from `osd dump`'s flags and `osd tree`'s hierarchy. */
export function nooutFrom(flags: RawOsdFlags, tree: RawTreeForFlags): NooutState {
  const byId = new Map(tree.nodes.map((n) => [n.id, n]));
  const under = (id: number, seen = new Set<number>()): number[] => {
    if (id >= 0) return [id];
    if (seen.has(id)) return [];
    seen.add(id);
    return (byId.get(id)?.children ?? []).flatMap((c) => under(c, seen));
  };
  const sortIds = (ids: Iterable<number>): number[] => [...new Set(ids)].sort((a, b) => a - b);
  const cluster = flags.flags.split(',').includes('noout');
  const osds = sortIds(flags.osds.filter((o) => o.state.includes('noout')).map((o) => o.osd));
  const crushNodes: Record<string, number[]> = {};
  for (const [name, set] of Object.entries(flags.crush_node_flags ?? {})) {
    if (!set.includes('noout')) continue;
    const node = tree.nodes.find((n) => n.name === name);
    crushNodes[name] = node ? sortIds(under(node.id)) : [];
  }
  const deviceClasses: Record<string, number[]> = {};
  for (const [cls, set] of Object.entries(flags.device_class_flags ?? {})) {
    if (!set.includes('noout')) continue;
    deviceClasses[cls] = sortIds(tree.nodes.filter((n) => n.id >= 0 && n.device_class === cls).map((n) => n.id));
  }
  const effective = cluster
    ? sortIds(flags.osds.map((o) => o.osd))
    : sortIds([...osds, ...Object.values(crushNodes).flat(), ...Object.values(deviceClasses).flat()]);
  return { cluster, osds, crushNodes, deviceClasses, effective };
}

// ---- argument checks (before any call) ----------------------------------------------------------
// Ceph's own rule for CRUSH names; monitor and MDS names are held to the same (they become
// words of a command line).
const NAME = /^[A-Za-z0-9_.-]{1,64}$/;

export function checkNames(what: string, names: string[]): void {
  if (names.length === 0) throw new TypeError(`${what} needs at least one name`);
  for (const n of names) if (!NAME.test(n)) throw new TypeError(`${what}: ${JSON.stringify(n)} is not a Ceph name`);
}

export function checkGroupFlags(what: string, flags: OsdGroupFlag[]): void {
  if (flags.length === 0) throw new TypeError(`${what} needs at least one flag`);
  for (const f of flags)
    if (!OSD_GROUP_FLAGS.includes(f)) throw new TypeError(`${what}: ${JSON.stringify(f)} is not one of ${OSD_GROUP_FLAGS.join(', ')}`);
}

// ---- the calls, over CephClient's plumbing ------------------------------------------------------
/** What CephClient lends these verbs: its run (with an optional line sink) and its parser. */
export interface Verbs {
  run(
    verb: string[],
    call: { signal?: AbortSignal; timeoutMs?: number } | undefined,
    onStdout?: (line: string) => void,
  ): Promise<RunOutput>;
  parse<Raw>(verb: string[], stdout: string, s: Shape<Raw>): Raw;
}
type Call = { signal?: AbortSignal; timeoutMs?: number } | undefined;

const refusedWith = (err: unknown, ...codes: number[]): err is CommandError =>
  err instanceof CommandError && err.exitCode !== null && codes.includes(err.exitCode);

export async function osdOkToStop(v: Verbs, ids: number[], call: Call): Promise<OsdStopReport> {
  const verb = ['osd', 'ok-to-stop', ...ids.map(String)];
  const lines: string[] = [];
  try {
    const { stdout } = await v.run(verb, call, (l) => lines.push(l));
    return osdStopReportFrom(v.parse(verb, stdout, osdStopReportShape));
  } catch (err) {
    if (!refusedWith(err, ERRNO.EBUSY, ERRNO.EAGAIN)) throw err;
    const reason = cephMessage(err.stderr) || `refused with exit code ${String(err.exitCode)}`;
    const stdout = lines.join('\n');
    if (stdout.trim() === '') return osdStopRefused(ids, reason);
    return osdStopReportFrom(v.parse(verb, stdout, osdStopReportShape), reason);
  }
}

export async function monOkToStop(v: Verbs, names: string[], call: Call): Promise<MonStopReport> {
  try {
    return monStopFrom(names, true, (await v.run(['mon', 'ok-to-stop', ...names], call)).stderr);
  } catch (err) {
    if (!refusedWith(err, ERRNO.EBUSY)) throw err;
    return monStopFrom(names, false, err.stderr);
  }
}

export async function mdsOkToStop(v: Verbs, names: string[], call: Call): Promise<MdsStopReport> {
  try {
    return mdsStopFrom(names, true, (await v.run(['mds', 'ok-to-stop', ...names], call)).stderr);
  } catch (err) {
    if (!refusedWith(err, ERRNO.EBUSY)) throw err;
    return mdsStopFrom(names, false, err.stderr);
  }
}

export async function osdGroupFlags(
  v: Verbs,
  op: 'set-group' | 'unset-group',
  flags: OsdGroupFlag[],
  who: string[],
  call: Call,
): Promise<OsdGroupFlagsResult> {
  return groupFlagsFrom((await v.run(['osd', op, flags.join(','), ...who], call)).stderr);
}
