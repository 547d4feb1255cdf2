// Pure helpers over status conditions. The one rule that matters: lastTransitionTime moves only
// when a condition's status flips, so a reconcile that finds nothing new produces a status
// deep-equal to the stored one, the store writes nothing, and no watcher wakes.
import { ConditionType, type CommonStatus, type Condition } from '../model/conditions.js';
import type { Source } from '../model/document.js';

export type ConditionStatus = Condition['status'];

/** A condition as a reconciler states it; time and generation are filled in by setCondition. */
export interface ConditionInput {
  type: ConditionType;
  status: ConditionStatus;
  reason: string;
  message: string;
}

/** Returns a new array with `input` set; other conditions keep their order and identity. */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  input: ConditionInput,
  observedGeneration: number,
  nowIso: string,
): Condition[] {
  const list = conditions ?? [];
  const old = list.find((c) => c.type === input.type);
  const next: Condition = {
    type: input.type,
    status: input.status,
    reason: input.reason,
    message: input.message,
    lastTransitionTime: old && old.status === input.status ? old.lastTransitionTime : nowIso,
    observedGeneration,
  };
  if (!old) return [...list, next];
  return list.map((c) => (c === old ? (sameCondition(c, next) ? c : next) : c));
}

/** Applies several inputs in order. */
export function setConditions(
  conditions: readonly Condition[] | undefined,
  inputs: readonly ConditionInput[],
  observedGeneration: number,
  nowIso: string,
): Condition[] {
  return inputs.reduce<Condition[]>((acc, input) => setCondition(acc, input, observedGeneration, nowIso), [...(conditions ?? [])]);
}

export function removeCondition(conditions: readonly Condition[] | undefined, type: ConditionType): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

export function getCondition(conditions: readonly Condition[] | undefined, type: ConditionType): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

export function isTrue(conditions: readonly Condition[] | undefined, type: ConditionType): boolean {
  return getCondition(conditions, type)?.status === 'True';
}

export function isFalse(conditions: readonly Condition[] | undefined, type: ConditionType): boolean {
  return getCondition(conditions, type)?.status === 'False';
}

/**
 * Sets conditions and observedGeneration on a status object, returning a new one. Handy for
 * the usual last step of apply: `store.updateStatus(kind, id, withConditions(...))`.
 */
export function withConditions<T extends CommonStatus>(
  status: T,
  inputs: readonly ConditionInput[],
  observedGeneration: number,
  nowIso: string,
): T & { conditions: Condition[]; observedGeneration: number } {
  return {
    ...status,
    conditions: setConditions(status.conditions, inputs, observedGeneration, nowIso),
    observedGeneration,
  };
}

const bool = (ok: boolean): ConditionStatus => (ok ? 'True' : 'False');

export const readyCondition = (ok: boolean, reason: string, message = ''): ConditionInput => ({
  type: ConditionType.Ready,
  status: bool(ok),
  reason,
  message,
});

export const progressingCondition = (on: boolean, reason: string, message = ''): ConditionInput => ({
  type: ConditionType.Progressing,
  status: bool(on),
  reason,
  message,
});

export const degradedCondition = (on: boolean, reason: string, message = ''): ConditionInput => ({
  type: ConditionType.Degraded,
  status: bool(on),
  reason,
  message,
});

/** A failed gate or missing prerequisite: reason is machine-readable, message says what to do. */
export const blockedCondition = (on: boolean, reason: string, message = ''): ConditionInput => ({
  type: ConditionType.Blocked,
  status: bool(on),
  reason,
  message,
});

/** Ready, Progressing and Blocked of an object whose loop concludes a phase with a reason: ready,
 * creating, blocked or anything else (failed, degraded...), as the filesystem and RGW user loops do. */
export function phaseConditions(out: { phase: string; reason: string; message: string }): ConditionInput[] {
  const blocked = out.phase === 'blocked';
  return [
    readyCondition(out.phase === 'ready', out.reason, out.message),
    progressingCondition(out.phase === 'creating', out.reason, out.phase === 'creating' ? out.message : ''),
    blockedCondition(blocked, blocked ? out.reason : 'NotBlocked', blocked ? out.message : ''),
  ];
}

function sameCondition(a: Condition, b: Condition): boolean {
  return (
    a.status === b.status &&
    a.reason === b.reason &&
    a.message === b.message &&
    a.lastTransitionTime === b.lastTransitionTime &&
    a.observedGeneration === b.observedGeneration
  );
}

/**
 * `Orphaned` while the specs folder no longer declares an object that holds data (a monitor, an
 * OSD, a filesystem, an RGW user), which it therefore kept instead of pruning (src/gitops):
 * written by the loop that owns the object's status, gone once a file or an operator takes it back.
 */
export function withOrphaned<T extends CommonStatus>(status: T, source: Source | null | undefined, generation: number, nowIso: string): T {
  const conditions = source?.orphaned
    ? setCondition(
        status.conditions,
        {
          type: 'Orphaned',
          status: 'True',
          reason: 'DroppedFromSpecs',
          message: `${source.file ?? 'its file'} no longer declares it; it holds data, so nothing was destroyed (a file saying state: absent removes it)`,
        },
        generation,
        nowIso,
      )
    : removeCondition(status.conditions, 'Orphaned');
  return conditions.length || status.conditions ? { ...status, conditions } : status;
}
