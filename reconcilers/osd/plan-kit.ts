// What the OSD plan's parts (keep, remove, replace) share: the disk's id and class, the
// status words, and the one way a step's last run becomes the next attempt, a wait or "busy".
import type { OsdPhase, OsdState } from '../../src/model/kinds.js';
import { deviceClassOf, type DiskDoc } from '../../src/model/operations.js';
import { gateOf } from '../../src/runtime/loop-kit/index.js';
import { nextAttempt, type RunInfo } from '../shared/runs.js';
import type { DeviceClass, OsdObserved, OsdPlan, OsdStep } from './types.js';

/** The class the OSD is given: the spec's (a selector's `deviceClass`), else the disk's (the
 * rule the API shows in /disks, src/model/operations.ts). */
export const deviceClassFor = (d: DiskDoc): DeviceClass => deviceClassOf(d);

/** The OSD id of this disk: recorded in status, or what `osd new` answered for its uuid. */
export function osdIdOf(o: Pick<OsdObserved, 'disk' | 'newRun'>): number | null {
  const recorded = o.disk.status.osdId ?? null;
  if (recorded !== null) return recorded;
  const r = o.newRun;
  if (r?.state !== 'completed' || r.args.uuid !== o.disk.status.osdUuid) return null;
  const id = r.result?.osdId;
  return typeof id === 'number' && Number.isInteger(id) && id >= 0 ? id : null;
}

export const osdState = (phase: OsdPhase, reason: string, message: string): OsdState => ({ phase, reason, message });

export const recordedId = (o: Pick<OsdObserved, 'disk'>): number | null => o.disk.status.osdId ?? null;

export const isoAt = (o: Pick<OsdObserved, 'now'>): string => new Date(o.now).toISOString();

/** A held gate: the phase stays what it is (a drain waiting is still `draining`), Blocked says why. */
export function gatePlan(phase: OsdPhase, reason: string, message: string, over: Partial<OsdPlan> & { osdId: number | null }): OsdPlan {
  return { status: osdState(phase, reason, message), step: null, requeueAfterMs: null, gate: gateOf(reason, message), ...over };
}

export function statePlan(phase: OsdPhase, reason: string, message: string, over: Partial<OsdPlan> & { osdId: number | null }): OsdPlan {
  return { status: osdState(phase, reason, message), step: null, requeueAfterMs: null, gate: null, ...over };
}

/**
 * A step of the lifecycle from its last run: in progress (nothing more), a backoff, or the next
 * attempt. The phase stays the lifecycle's; after FAILED_AFTER failures the plan says `failing`
 * (Degraded) and goes on trying.
 */
export function stepPlan<K extends OsdStep['kind']>(
  o: OsdObserved,
  phase: OsdPhase,
  kind: K,
  last: RunInfo | null,
  message: string,
  step: Omit<Extract<OsdStep, { kind: K }>, 'attempt' | 'kind'>,
  over: Partial<OsdPlan> & { osdId: number | null },
): OsdPlan {
  const next = nextAttempt(last, o.now, o.retryBaseMs, message);
  if (next.kind === 'busy') return statePlan(phase, 'InProgress', `${message} (run ${last!.id})`, over);
  const failing = next.failed ? { failing: next.message } : {};
  const reason = next.reason === 'Starting' ? 'InProgress' : next.reason;
  if (next.kind === 'wait') return { ...statePlan(phase, reason, next.message, over), requeueAfterMs: next.waitMs, ...failing };
  return { ...statePlan(phase, reason, next.message, over), step: { ...step, kind, attempt: next.attempt } as OsdStep, ...failing };
}
