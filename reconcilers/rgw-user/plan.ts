// The RGW user loop's pure half. A user is ready once its keys are issued: the secret key is
// stored apart (RgwUserSecret) and only the access key shows in the user's status. The plan
// never sees the secret, only whether there is one.
import { Step } from '../../src/catalogue/index.js';
import type { Doc } from '../../src/model/document.js';
import type { RgwUserSpec, RgwUserStatus } from '../../src/model/storage-kinds.js';
import { phaseConditions, setConditions } from '../../src/runtime/conditions.js';
import { createAttempt, type RunInfo } from '../shared/runs.js';
import { NO_DELETION, deletionActive, planDeletion, type DeletionObserved, type DeletionStep } from '../shared/deletion.js';

import { gateOf, type LoopPlan } from '../../src/runtime/loop-kit/index.js';

export const RGW_USER_CREATE_TASK = Step.rgwUserCreate;
export const RgwUserDeleteTask = { confirm: Step.rgwUserDeleteConfirm, delete: Step.rgwUserDelete } as const;

export interface RgwUserObserved {
  user: Doc<RgwUserSpec, RgwUserStatus>;
  quorum: boolean;
  /** Some node reports a gateway running: its first start created the zone's pools. */
  gatewayRunning: boolean;
  /** The access key of the issued pair; null while none is stored. */
  issued: string | null;
  run: RunInfo | null;
  /** The newest question and deletion runs (a file's `state: absent`); none when absent. */
  deletion?: Pick<DeletionObserved, 'confirmRun' | 'deleteRun'>;
  now: number;
  nowIso: string;
  retryBaseMs: number;
}

type Phase = NonNullable<RgwUserStatus['phase']>;

/** The RgwUser's status, the create step, a wait, a gate; and the Ready condition's words. */
export interface RgwUserPlan extends LoopPlan<RgwUserStatus, { kind: 'create'; attempt: number } | DeletionStep> {
  reason: string;
  message: string;
  /** The declaration goes (with its secret): deleted after a "yes", or never made in RGW. */
  remove: boolean;
}

type Outcome = { phase: Phase; reason: string; message: string; step?: RgwUserPlan['step']; requeueAfterMs?: number; remove?: boolean };

export function planRgwUser(o: RgwUserObserved): RgwUserPlan {
  const out = o.user.spec.absent ? deletion(o) : decide(o);
  const gen = o.user.metadata.generation;
  const { accessKey: _old, ...rest } = o.user.status;
  const status: RgwUserStatus = {
    ...rest,
    phase: out.phase,
    ...(o.issued ? { accessKey: o.issued } : {}),
    conditions: setConditions(o.user.status.conditions, phaseConditions(out), gen, o.nowIso),
    observedGeneration: gen,
  };
  const gate = out.phase === 'blocked' ? gateOf(out.reason, out.message) : null;
  return {
    status,
    step: out.step ?? null,
    gate,
    reason: out.reason,
    message: out.message,
    requeueAfterMs: out.requeueAfterMs ?? null,
    remove: out.remove ?? false,
  };
}

/** `state: absent`: ask, then delete the user with its buckets; "no" keeps them. A user never
 * made in RGW (no keys issued, no create run completed) has nothing to ask about. */
function deletion(o: RgwUserObserved): Outcome {
  const what = `RGW user ${o.user.spec.userId} with its buckets`;
  const gen = o.user.metadata.generation;
  const runs = o.deletion ?? NO_DELETION;
  const made = o.issued !== null || o.run?.state === 'completed' || isActiveRun(o.run);
  if (!made && !deletionActive(runs, gen))
    return { phase: 'deleting', reason: 'Deleted', message: `${what} was never made in RGW`, remove: true };
  if (!o.quorum) return { phase: 'blocked', reason: 'WaitingForQuorum', message: 'deletion requested; waiting for monitor quorum' };
  const d = planDeletion({ ...runs, generation: gen, now: o.now, retryBaseMs: o.retryBaseMs }, what);
  if (d.state === 'deleted') return { phase: 'deleting', reason: d.reason, message: d.message, remove: true };
  const base = { reason: d.reason, message: d.message, ...(d.step ? { step: d.step } : {}) };
  const out = d.requeueAfterMs === undefined ? base : { ...base, requeueAfterMs: d.requeueAfterMs };
  return { phase: d.state === 'deleting' ? 'deleting' : 'blocked', ...out };
}

const isActiveRun = (r: RunInfo | null): boolean => r !== null && (r.state === 'pending' || r.state === 'running');

function decide(o: RgwUserObserved): Outcome {
  if (o.issued) return { phase: 'ready', reason: 'KeysIssued', message: `access key ${o.issued} issued` };
  if (!o.quorum) return { phase: 'blocked', reason: 'WaitingForQuorum', message: 'waiting for monitor quorum' };
  if (!o.gatewayRunning) {
    return {
      phase: 'blocked',
      reason: 'WaitingForGateway',
      message: 'RGW users need the RGW pools: deploy a gateway first (POST /gateways/rgw/deploy)',
    };
  }
  const what = `creating RGW user ${o.user.spec.userId}`;
  // A completed run without stored keys: the secret document is gone; the run takes the
  // user's keys from RGW again (user info), it does not make a second user.
  return createAttempt(o.run, o.now, o.retryBaseMs, what);
}
