// Taking an OSD out of service, one lifecycle for three causes:
// - removal (spec.osdRemoval remove): drain → safe-to-destroy → stop → purge and zap (side by
//   side) → removed;
// - replacement (osdRemoval replace): drain → safe-to-destroy → stop → destroy → destroyed;
// - a dead disk (gone from its active node past DISK_GONE_GRACE_MS): out at once, then
//   safe-to-destroy → destroy → destroyed (no stop, no zap: the disk is gone).
// A removal or replacement drains only with the drain lease (one at a time, cluster-wide; a dead
// disk's data is already gone, it does not wait). Withdrawn before its purge or destroy (osd:
// true again, or no removal asked any more, or the dead disk is back): `ceph.osd.in`, the OSD
// started again if the removal stopped it, the lease given back. Every step's run is found
// again after a crash (the newest run of each task), so none is sent twice.
import { isActive, completedAfter, type RunInfo } from '../shared/runs.js';
import { safeToDestroyGate } from '../shared/osd-gates.js';
import { DRAIN_LEASE_PHASES } from '../shared/disruption-gate.js';
import type { DrainProgress, OsdPhase } from '../../src/model/kinds.js';
import { entry } from './history.js';
import { goneSince, restartStep } from './keep.js';
import { gatePlan, isoAt, recordedId, statePlan, stepPlan } from './plan-kit.js';
import type { OsdObserved, OsdPlan, OsdStep } from './types.js';

export type RemovalIntent = 'remove' | 'replace' | 'dead';

/** Phases in which a drain holds the lease (given back once the purge or destroy is done). */
export const LEASE_PHASES: readonly OsdPhase[] = DRAIN_LEASE_PHASES;
/** Phases of a lifecycle under way: observe reads its runs (and Ceph, as each phase needs). */
export const LIFECYCLE_PHASES: readonly OsdPhase[] = [...LEASE_PHASES, 'zapping'];

/** What the runs say about this OSD's removal, all relative to its current `out`. */
export interface LifecycleFacts {
  out: RunInfo | null;
  /** `out` completed and no `in` since. */
  outDone: boolean;
  stop: RunInfo | null;
  stopped: boolean;
  purge: RunInfo | null;
  purged: boolean;
  destroy: RunInfo | null;
  destroyed: boolean;
  zap: RunInfo | null;
  zapped: boolean;
  /** Past the point of no return: a purge or destroy was started (or its phase written). */
  committed: 'purge' | 'destroy' | null;
}

const order = (r: RunInfo): number => r.revision ?? r.completedAt ?? Number.MAX_SAFE_INTEGER;

export function lifecycleFacts(o: OsdObserved, id: number): LifecycleFacts {
  const l = o.lifecycle;
  // This OSD's runs only, and only of its current life: an id Ceph gave again to a new OSD on
  // this disk must not find the runs of the old one's removal.
  const born = o.createRun?.state === 'completed' && o.createRun.args.osdId === id ? order(o.createRun) : -1;
  const mine = (r: RunInfo | null | undefined): RunInfo | null => (r && r.args.osdId === id && order(r) > born ? r : null);
  const out = mine(l?.outRun);
  const inn = mine(l?.inRun);
  const outDone = out !== null && completedAfter(out, inn);
  const afterOut = (r: RunInfo | null): RunInfo | null => (r && (out === null || order(r) > order(out)) ? r : null);
  const stop = afterOut(mine(l?.stopRun));
  const restart = o.restartRun && o.restartRun.args.id === id ? o.restartRun : null;
  const stopped = stop?.state === 'completed' && !completedAfter(restart, stop);
  const purge = afterOut(mine(l?.purgeRun));
  const destroy = afterOut(mine(l?.destroyRun));
  const zap = afterOut(mine(l?.zapRun));
  const phase = o.disk.status.osd?.phase;
  // A zap after this out is one the purge started beside it: as committed as the purge.
  const committed =
    phase === 'purging' || phase === 'zapping' || purge !== null || zap !== null
      ? 'purge'
      : phase === 'destroying' || destroy !== null
        ? 'destroy'
        : null;
  return {
    out,
    outDone,
    stop,
    stopped,
    purge,
    purged: purge?.state === 'completed',
    destroy,
    destroyed: destroy?.state === 'completed',
    zap,
    zapped: zap?.state === 'completed',
    committed,
  };
}

/** Why the OSD is to go, if it is: the spec's removal, or its disk dead (gone past the grace from
 * an active node; once out, until the disk comes back). */
export function removalIntent(o: OsdObserved, f: Pick<LifecycleFacts, 'outDone'>): RemovalIntent | null {
  const { disk } = o;
  if (!disk.spec.osd) return disk.spec.osdRemoval ?? null;
  if (disk.status.present !== false || o.diskGoneGraceMs === undefined) return null;
  if (f.outDone) return 'dead';
  const active = o.node?.status.phase === 'active';
  return active && o.now - goneSince(o) >= o.diskGoneGraceMs ? 'dead' : null;
}

/** The lifecycle's plan, or null when nothing of a removal is due (the disk keeps its OSD). */
export function planLifecycle(o: OsdObserved, id: number): OsdPlan | null {
  const f = lifecycleFacts(o, id);
  if (f.committed === 'purge') return purgePlan(o, id, f);
  if (f.committed === 'destroy') return destroyPlan(o, id, f);
  const intent = removalIntent(o, f);
  return intent ? drainPlan(o, id, intent, f) : undoPlan(o, id, f);
}

const noun = (i: RemovalIntent): string => (i === 'remove' ? 'removal' : i === 'replace' ? 'replacement' : 'dead disk');

function drainPlan(o: OsdObserved, id: number, intent: RemovalIntent, f: LifecycleFacts): OsdPlan {
  const dead = intent === 'dead';
  const keep = { osdId: recordedId(o), lease: !dead };
  const phase = o.disk.status.osd?.phase;
  if (!o.quorum) return gatePlan(phase === 'stopping' ? 'stopping' : 'draining', 'WaitingForQuorum', 'waiting for monitor quorum', keep);
  // The creation's node part may still run while Ceph already reports the OSD up. Its completion
  // dates this OSD's life (lifecycleFacts' `born`): an out recorded before it would be taken for
  // an old life's and sent again, so the out waits for the creation to end.
  if (f.out === null && isActive(o.createRun) && o.createRun?.args.osdId === id) {
    return gatePlan(
      'draining',
      'CreationRunning',
      `the creation of osd.${id} is still running: its ${noun(intent)} begins when it ends`,
      keep,
    );
  }
  if (!f.outDone) {
    const lease = o.lifecycle?.lease ?? null;
    if (!dead && lease?.kind !== 'held') {
      if (lease?.kind === 'taken') {
        const who = lease.by.map((l) => `${l.what} since ${l.since}`).join(', ');
        return gatePlan(
          'draining',
          'DisruptionBudget',
          `the ${noun(intent)} of osd.${id} waits for the disruption budget, held by ${who}`,
          keep,
        );
      }
    }
    // A free lease is taken by the out's own start (loop.ts): a separate pass for it cost a
    // whole reconcile of every removal.
    const take =
      !dead && lease?.kind !== 'held'
        ? { lease: { what: `drain of osd.${id} (${o.disk.name})`, stale: o.lifecycle?.staleHolders ?? [] } }
        : {};
    const why = dead ? `its disk ${o.disk.spec.serial} is gone` : `its ${noun(intent)} begins`;
    // What is on it before the out (an out OSD reports no bytes): where the drain starts from.
    const drain = drainProgress(o, id);
    return stepPlan(
      o,
      'draining',
      'out',
      f.out,
      `marking osd.${id} out: ${why}`,
      { args: { osdId: id }, ...take },
      { ...keep, ...(drain ? { drain } : {}) },
    );
  }
  const passed = f.stopped || f.stop !== null || phase === 'stopping';
  if (!passed) {
    const drain = drainProgress(o, id);
    const verdict = safeVerdict(o, id);
    if (verdict) {
      const again = o.recheckMs === undefined ? {} : { requeueAfterMs: drainRecheckMs(f.out?.completedAt ?? null, o.now, o.recheckMs) };
      return gatePlan('draining', 'OsdNotSafeToDestroy', verdict, { ...keep, ...(drain ? { drain } : {}), ...again });
    }
  }
  if (!dead && !f.stopped) {
    const active = o.node?.status.phase === 'active';
    if (active) return stepPlan(o, 'stopping', 'stop', f.stop, `stopping osd.${id} for good`, { args: { osdId: id } }, keep);
    if (o.lifecycle?.down !== true) {
      const message = `the node is ${o.node?.status.phase ?? 'unknown'}: osd.${id} is stopped once it is active again, or purged once Ceph sees it down`;
      return gatePlan('stopping', 'NodeNotActive', message, keep);
    }
  }
  return intent === 'remove' ? purgePlan(o, id, f) : destroyPlan(o, id, f, dead);
}

/** The first recheck of a drain comes after this fraction of the loop's recheck delay. */
export const DRAIN_FIRST_RECHECK = 1 / 256;

/**
 * How long a drain that is not safe to destroy yet waits before Ceph is asked again, when the
 * last question was asked at `at`: as long as the drain had lasted then (since its `out`
 * completed), between DRAIN_FIRST_RECHECK of the loop's recheck and the recheck. Nothing
 * announces a drain's end, and drains last from milliseconds (an almost empty OSD; the lab's
 * Ceph) to hours: a fixed recheck made every short one wait a whole recheck (the lab bench's
 * removal at 60 nodes took 603 ms against a creation's 43, 549 of them in `draining`), while
 * doubling costs a long drain only eight more questions at its start, each about this one OSD
 * (`osd df plain osd.N`, `safe-to-destroy`): 39 ms after the out on a real cluster (10 s recheck).
 */
export function drainRecheckMs(outDoneAt: number | null, at: number, recheckMs: number): number {
  if (outDoneAt === null) return recheckMs;
  return Math.min(recheckMs, Math.max(recheckMs * DRAIN_FIRST_RECHECK, at - outDoneAt));
}

/** While draining: Ceph's safe-to-destroy, as the shared gate words it; null once safe. A check
 * not asked this time (observe asks once per recheck) keeps the current words. */
function safeVerdict(o: OsdObserved, id: number): string | null {
  const answer = o.lifecycle?.safe ?? null;
  if (answer === null) {
    const cur = o.disk.status.conditions?.find((c) => c.type === 'Blocked' && c.status === 'True' && c.reason === 'OsdNotSafeToDestroy');
    if (cur) return cur.message;
  }
  const v = safeToDestroyGate([id], answer);
  return v.ok ? null : v.message;
}

/** PGs and bytes still on the OSD, from `osd df`, with what was there when the drain began. */
function drainProgress(o: OsdObserved, id: number): DrainProgress | undefined {
  const cur = o.disk.status.drain?.osdId === id ? o.disk.status.drain : undefined;
  const df = o.lifecycle?.df ?? null;
  if (df === null || 'error' in df) return cur;
  if (cur && cur.pgs === df.pgs && cur.bytes === df.dataBytes) return cur;
  return {
    osdId: id,
    startPgs: cur?.startPgs ?? df.pgs,
    startBytes: cur?.startBytes ?? df.dataBytes,
    pgs: df.pgs,
    bytes: df.dataBytes,
    observedAt: isoAt(o),
  };
}

/** Why the disk cannot be wiped now (its node not active, the disk gone), or null. */
function zapGate(o: OsdObserved, id: number, purged: boolean): { reason: string; message: string } | null {
  const what = purged ? `osd.${id} is purged; its disk` : `osd.${id} is stopped; its disk`;
  const phase = o.node?.status.phase ?? 'unknown';
  if (phase !== 'active') return { reason: 'NodeNotActive', message: `${what} is wiped once the node is active (it is ${phase})` };
  if (o.disk.status.present === false) return { reason: 'DiskAbsent', message: `${what} ${o.disk.spec.serial} is not present to be wiped` };
  return null;
}

/**
 * Purge (id, CRUSH entry, key gone) and the verified wipe side by side, then `removed`. Once the
 * OSD is stopped for good (safe to destroy, drained), the two touch different things: the purge
 * the cluster's maps (master), the zap the disk (node), and neither needs the other done first,
 * so they are started in the same pass (each its own run, each found again after a crash; the
 * phase `purging` is written before either starts, and is past the point of no return). A zap
 * that cannot run yet (the node not active, the disk gone) does not hold the purge back.
 */
function purgePlan(o: OsdObserved, id: number, f: LifecycleFacts): OsdPlan {
  const keep = { osdId: recordedId(o) };
  const devicePath = o.disk.status.devicePath ?? '';
  const zap = (phase: OsdPhase, message: string, over: Partial<OsdPlan> & { osdId: number | null }): OsdPlan =>
    stepPlan(o, phase, 'zap', f.zap, message, { args: { osdId: id, devicePath } }, over);
  if (!f.purged) {
    if (!o.quorum) return gatePlan('purging', 'WaitingForQuorum', 'waiting for monitor quorum', { ...keep, lease: true });
    const what = `purging osd.${id} (id, CRUSH entry and key)`;
    const purge = stepPlan(o, 'purging', 'purge', f.purge, what, { args: { osdId: id } }, { ...keep, lease: true });
    if (f.zapped || zapGate(o, id, false)) return purge;
    return alongside(purge, zap('purging', `${what}; wiping ${devicePath} (verified) beside it`, keep));
  }
  // The lease goes back right after the purge: the wipe disrupts nothing.
  if (!f.zapped) {
    const gate = zapGate(o, id, true);
    if (gate) return gatePlan('zapping', gate.reason, gate.message, keep);
    return zap('zapping', `wiping ${devicePath} (verified) after purging osd.${id}`, keep);
  }
  const at = isoAt(o);
  return statePlan(
    'removed',
    'Removed',
    `osd.${id} was purged and ${devicePath} wiped; the disk is eligible again once its node reports it blank`,
    {
      osdId: null,
      osdUuid: null,
      history: [entry(at, 'removed', id, `osd.${id} purged`), entry(at, 'zapped', id, `${devicePath} wiped (verified)`)],
    },
  );
}

/** The purge's plan with the zap's step started beside it: the purge's phase and lease, both
 * steps, the sooner of their waits, and a failure of either said. */
function alongside(purge: OsdPlan, zap: OsdPlan): OsdPlan {
  const steps = [purge.step, zap.step].filter((s): s is OsdStep => s !== null);
  const waits = [purge.requeueAfterMs, zap.requeueAfterMs].filter((ms): ms is number => ms !== null);
  const failing = purge.failing ?? zap.failing;
  const message = [purge.status?.message, zap.status?.message].filter(Boolean).join('; ');
  return {
    ...purge,
    status: purge.status ? { ...purge.status, message } : purge.status,
    step: steps[0] ?? null,
    also: steps[1] ?? null,
    requeueAfterMs: waits.length > 0 ? Math.min(...waits) : null,
    ...(failing ? { failing } : {}),
  };
}

/** Destroy (id and CRUSH position kept for the disk that replaces it), then `destroyed`. */
function destroyPlan(o: OsdObserved, id: number, f: LifecycleFacts, dead = o.disk.spec.osd): OsdPlan {
  const keep = { osdId: recordedId(o) };
  if (!f.destroyed) {
    if (!o.quorum) return gatePlan('destroying', 'WaitingForQuorum', 'waiting for monitor quorum', { ...keep, lease: !dead });
    return stepPlan(
      o,
      'destroying',
      'destroy',
      f.destroy,
      `destroying osd.${id}, keeping its id and CRUSH position`,
      { args: { osdId: id } },
      {
        ...keep,
        lease: !dead,
      },
    );
  }
  const why = dead ? `its disk ${o.disk.spec.serial} died` : 'it is replaced';
  return statePlan('destroyed', 'Destroyed', `osd.${id} is destroyed (${why}); its id waits for the disk that replaces it`, {
    osdId: id,
    history: [entry(isoAt(o), 'destroyed', id, `osd.${id} destroyed: ${why}; id and CRUSH position kept`)],
  });
}

/** A removal withdrawn before its purge or destroy: `in` again, and started again if it was
 * stopped; null when there is nothing to undo. */
function undoPlan(o: OsdObserved, id: number, f: LifecycleFacts): OsdPlan | null {
  const keep = { osdId: recordedId(o) };
  const phase = o.disk.status.osd?.phase === 'stopping' ? 'stopping' : 'draining';
  // An out or stop still running finishes first: undone before it lands, it would land after.
  const flying = isActive(f.out) ? f.out : isActive(f.stop) ? f.stop : null;
  if (flying)
    return statePlan(phase, 'Undoing', `the removal of osd.${id} was withdrawn; waiting for run ${flying.id} to finish first`, keep);
  if (f.outDone) {
    if (!o.quorum) return gatePlan(phase, 'WaitingForQuorum', 'waiting for monitor quorum', keep);
    const inRun = o.lifecycle?.inRun?.args.osdId === id ? o.lifecycle.inRun : null;
    const last = isActive(inRun) || inRun?.state === 'failed' ? inRun : null;
    return stepPlan(o, phase, 'in', last, `the removal of osd.${id} was withdrawn: marking it in again`, { args: { osdId: id } }, keep);
  }
  const running = (o.node?.status.daemons?.osds ?? []).includes(id);
  // Declared (osd: true): keeping it restarts it. Unowned: the withdrawn removal restarts what it stopped.
  if (o.disk.spec.osd || !f.stopped || running || o.node?.status.phase !== 'active') return null;
  const r = o.restartRun;
  const last = r && r.args.id === id && f.stop && order(r) > order(f.stop) ? r : null;
  return restartStep(o, id, last, `the removal of osd.${id} was withdrawn: starting it again`, 'stopping', keep);
}
