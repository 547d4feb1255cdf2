// The OSD safety gates as pure verdicts: ok-to-stop (the node loop, before a restart or shutdown)
// and safe-to-destroy (the osd loop, before an OSD is stopped for good, purged or destroyed). Here, not in one loop's folder, because
// they guard OSDs wherever a loop acts on them. Ceph's answer (or its failure to answer) comes in as
// data gathered by a loop's observe; the plan turns it into "go" or a Blocked reason an operator
// can read. Ceph answers "ok" for ids it does not know, so callers pass only ids that really run
// where they mean to act (the node's agent report), never a guess.
import type { OkToStop, SafeToDestroy } from '../../src/clients/ceph-types.js';

/** What observe learned from `ceph osd ok-to-stop`; `error` when Ceph did not answer. */
export interface OkToStopAnswer {
  osds: number[];
  ok: boolean;
  reason: string;
}

export type GateVerdict = { ok: true } | { ok: false; reason: string; message: string };

const names = (ids: number[]): string => ids.map((id) => `osd.${id}`).join(', ');
const sorted = (ids: number[]): number[] => [...ids].sort((x, y) => x - y);
const sameIds = (a: number[], b: number[]): boolean => sorted(a).join() === sorted(b).join();

export function okToStopAnswer(ids: number[], r: OkToStop | { error: string }): OkToStopAnswer {
  if ('error' in r) return { osds: ids, ok: false, reason: `Ceph did not answer ok-to-stop: ${r.error}` };
  return { osds: ids, ok: r.ok, reason: r.ok ? '' : (r.reason ?? 'Ceph says it is not ok to stop them') };
}

/**
 * Stopping a node stops every OSD it runs. Only an ok answer for exactly those ids lets the
 * action through: no answer, an answer about other ids, or "not ok" blocks it.
 */
export function okToStopGate(action: string, running: number[], answer: OkToStopAnswer | null | undefined): GateVerdict {
  if (running.length === 0) return { ok: true };
  if (answer?.ok && sameIds(answer.osds, running)) return { ok: true };
  const why = !answer
    ? 'Ceph has not been asked yet'
    : !sameIds(answer.osds, running)
      ? 'the node runs other OSDs than Ceph was asked about'
      : answer.reason;
  return { ok: false, reason: 'OsdNotOkToStop', message: `${action} would stop ${names(running)}: ${why}; nothing was sent` };
}

/**
 * Removing, replacing or giving up a dead OSD (stop, `osd purge` or `osd destroy`) is allowed
 * only when Ceph says every PG it held is safe elsewhere. The osd loop asks `safeToDestroy(ids)`
 * in observe while the OSD drains and passes the answer here; anything but a clear "safe" for
 * all ids is a Blocked 'OsdNotSafeToDestroy' with Ceph's own words.
 */
export function safeToDestroyGate(ids: number[], answer: SafeToDestroy | { error: string } | null | undefined): GateVerdict {
  if (ids.length === 0) return { ok: true };
  const fail = (why: string): GateVerdict => ({
    ok: false,
    reason: 'OsdNotSafeToDestroy',
    message: `${names(ids)} cannot be destroyed: ${why}`,
  });
  if (!answer) return fail('Ceph has not been asked yet');
  if ('error' in answer) return fail(`Ceph did not answer safe-to-destroy: ${answer.error}`);
  if (answer.safe && ids.every((id) => answer.safeIds.includes(id))) return { ok: true };
  return fail(answer.reason ?? 'Ceph does not report them safe to destroy');
}
