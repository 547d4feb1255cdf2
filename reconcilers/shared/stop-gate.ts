// Ceph's side of the disruption gate as one pure verdict. Before daemons are stopped — a node
// restart, a shutdown, maintenance, an OSD's stop — the set of everything that would be down at
// once (the new request's daemons together with those of every lease already held) is put to
// Ceph: `osd ok-to-stop` for all its OSDs in one question, `mon ok-to-stop` for its monitors,
// `mds ok-to-stop` for its MDS daemons (CephApi.osdOkToStop / monOkToStop / mdsOkToStop). The
// answers (or Ceph's failure to answer) come in as data gathered by observe; this turns them into
// "go" or the first refusal with Ceph's own words. An answer about another set than the one that
// would stop is no answer: the set changed since it was asked.
import { Daemon } from '../../src/catalogue/index.js';
import type { MdsStopReport, MonStopReport, OsdStopReport } from '../../src/clients/ceph-stop-gates.js';

/** The daemons a set of nodes would stop together. */
export interface StopSet {
  osds: number[];
  mons: string[];
  mds: string[];
}

type Answer<R> = R | { error: string };

/** What observe learned; a kind left out was not asked. `error` when Ceph did not answer. */
export interface StopAnswers {
  osd?: Answer<OsdStopReport>;
  mon?: Answer<MonStopReport>;
  mds?: Answer<MdsStopReport>;
}

export type StopReason = 'OsdNotOkToStop' | 'MonNotOkToStop' | 'MdsNotOkToStop';
export type StopVerdict = { ok: true } | { ok: false; reason: StopReason; message: string };

/** How many PG ids a message lists before "and N more". */
const SHOWN_PGS = 8;

const same = <T>(a: T[], b: T[]): boolean => {
  const key = (xs: T[]) => [...new Set(xs.map(String))].sort().join('\u0000');
  return key(a) === key(b);
};

function pgList(what: string, pgs: string[]): string {
  if (pgs.length === 0) return '';
  const shown = pgs.slice(0, SHOWN_PGS).join(', ');
  const more = pgs.length > SHOWN_PGS ? ` and ${pgs.length - SHOWN_PGS} more` : '';
  return `; ${pgs.length} PG${pgs.length === 1 ? '' : 's'} ${what} (${shown}${more})`;
}

/** Why an answer cannot be used, or undefined when it can. */
function unusable<R extends object>(
  kind: string,
  asked: (r: R) => unknown[],
  want: unknown[],
  a: Answer<R> | undefined,
): string | undefined {
  if (a === undefined) return `Ceph has not been asked ${kind} ok-to-stop yet`;
  if ('error' in a) return `Ceph did not answer ${kind} ok-to-stop: ${a.error}`;
  if (!same(asked(a), want)) return `Ceph was asked ${kind} ok-to-stop about other daemons than the set would stop`;
  return undefined;
}

function osdVerdict(ids: number[], a: Answer<OsdStopReport> | undefined): StopVerdict {
  if (ids.length === 0) return { ok: true };
  const who = `stopping ${[...ids]
    .sort((x, y) => x - y)
    .map((id) => `osd.${id}`)
    .join(', ')}`;
  const why = unusable(Daemon.osd, (r: OsdStopReport) => r.osds, ids, a);
  if (why !== undefined) return { ok: false, reason: 'OsdNotOkToStop', message: `${who}: ${why}` };
  const r = a as OsdStopReport;
  if (r.ok) return { ok: true };
  const detail =
    pgList('would become inactive', r.becomeInactive) +
    pgList('are inactive already', r.alreadyInactive) +
    pgList('are in a pool being created or deleted', r.noPool) +
    pgList('have an unknown state', r.unknown);
  const reason = r.reason ?? 'Ceph says it is not ok to stop them';
  return { ok: false, reason: 'OsdNotOkToStop', message: `${who}: ${reason}${detail}` };
}

function wordsVerdict<R extends MonStopReport | MdsStopReport>(
  kind: typeof Daemon.mon | typeof Daemon.mds,
  names: string[],
  asked: (r: R) => string[],
  a: Answer<R> | undefined,
): StopVerdict {
  if (names.length === 0) return { ok: true };
  const reason: StopReason = kind === Daemon.mon ? 'MonNotOkToStop' : 'MdsNotOkToStop';
  const who = `stopping ${[...names]
    .sort()
    .map((n) => `${kind}.${n}`)
    .join(', ')}`;
  const why = unusable(kind, asked, names, a);
  if (why !== undefined) return { ok: false, reason, message: `${who}: ${why}` };
  const r = a as R;
  if (r.ok) return { ok: true };
  return { ok: false, reason, message: `${who}: ${r.message || `Ceph says it is not ok to stop them`}` };
}

/**
 * One verdict for a set: OSDs first (data availability), then monitors (quorum), then MDS
 * (a filesystem without an active rank). Kinds the set does not stop need no answer.
 */
export function stopVerdict(set: StopSet, answers: StopAnswers): StopVerdict {
  const osd = osdVerdict(set.osds, answers.osd);
  if (!osd.ok) return osd;
  const mon = wordsVerdict<MonStopReport>(Daemon.mon, set.mons, (r) => r.mons, answers.mon);
  if (!mon.ok) return mon;
  return wordsVerdict<MdsStopReport>(Daemon.mds, set.mds, (r) => r.mds, answers.mds);
}
