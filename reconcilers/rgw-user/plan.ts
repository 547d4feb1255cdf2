// The RGW user loop's pure half. A user is ready once its keys are issued: the secret key is
// stored apart (RgwUserSecret) and only the access key shows in the user's status. The plan
// never sees the secret, only whether there is one.
import { Step } from '../../src/catalogue/index.js';
import type { Doc } from '../../src/model/document.js';
import type { RgwUserSpec, RgwUserStatus } from '../../src/model/storage-kinds.js';
import { phaseConditions, setConditions } from '../../src/runtime/conditions.js';
import { createAttempt, type RunInfo } from '../shared/runs.js';

import { gateOf, type LoopPlan } from '../../src/runtime/loop-kit/index.js';

export const RGW_USER_CREATE_TASK = Step.rgwUserCreate;

export interface RgwUserObserved {
  user: Doc<RgwUserSpec, RgwUserStatus>;
  quorum: boolean;
  /** Some node reports a gateway running: its first start created the zone's pools. */
  gatewayRunning: boolean;
  /** The access key of the issued pair; null while none is stored. */
  issued: string | null;
  run: RunInfo | null;
  now: number;
  nowIso: string;
  retryBaseMs: number;
}

type Phase = NonNullable<RgwUserStatus['phase']>;

/** The RgwUser's status, the create step, a wait, a gate; and the Ready condition's words. */
export interface RgwUserPlan extends LoopPlan<RgwUserStatus, { kind: 'create'; attempt: number }> {
  reason: string;
  message: string;
}

type Outcome = { phase: Phase; reason: string; message: string; step?: RgwUserPlan['step']; requeueAfterMs?: number };

export function planRgwUser(o: RgwUserObserved): RgwUserPlan {
  const out = decide(o);
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
  return { status, step: out.step ?? null, gate, reason: out.reason, message: out.message, requeueAfterMs: out.requeueAfterMs ?? null };
}

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
