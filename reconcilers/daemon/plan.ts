// The pure half shared by the manager, metadata-server and gateway loops: each keeps one
// daemon running on every node that wants it, once the monitors have quorum. Its key is made
// on the master (ceph auth get-or-create); the node's agent starts the daemon with it.
import type { DaemonState, DaemonType } from '../../src/model/kinds.js';
import type { NodeDoc } from '../../src/model/operations.js';
import { isActive, nextAttempt, type RunInfo } from '../shared/runs.js';
import { state } from '../shared/daemon-state.js';
import { nodeNotActive } from '../shared/node-active.js';
import { completedAt, gateOf, graceWait, type LoopPlan } from '../../src/runtime/loop-kit/index.js';

export interface DaemonObserved {
  type: DaemonType;
  node: NodeDoc;
  /** The monitors have quorum (the cluster loop saw `ceph status` answer). */
  quorum: boolean;
  keyExists: boolean;
  keyRun: RunInfo | null;
  startRun: RunInfo | null;
  now: number;
  retryBaseMs: number;
  /** How long a completed start may take to show up as running before it is tried again. */
  startGraceMs: number;
  /** Stop a daemon that runs but is no longer desired: only for daemons that hold no data
   * (gateways); the others are reported orphaned and left alone. */
  stopOrphan?: boolean;
  stopRun?: RunInfo | null;
}

export type DaemonStep = { kind: 'create-key' | 'start' | 'stop'; attempt: number };

/** The node's status.ceph.<type> entry this loop owns, the step, a wait, a gate. */
export type DaemonPlan = LoopPlan<DaemonState | undefined, DaemonStep>;

const NAME: Record<DaemonType, string> = { mon: 'monitor', mgr: 'manager', mds: 'metadata server', rgw: 'gateway', nfs: 'NFS gateway' };

const plan = (s: DaemonState | undefined, step: DaemonStep | null = null, requeueAfterMs: number | null = null): DaemonPlan => ({
  status: s,
  step,
  requeueAfterMs,
  gate: null,
});

export function planDaemon(o: DaemonObserved): DaemonPlan {
  const desired = o.node.spec.daemons[o.type] !== undefined;
  const running = o.node.status.daemons?.[o.type] === true;
  const what = NAME[o.type];
  if (!desired) {
    if (running && o.stopOrphan) return stopPlan(o, what);
    return plan(running ? state('orphaned', 'NotDesired', `a ${what} runs but is not desired; Quarry leaves it alone`) : undefined);
  }
  if (running) return plan(state('running', 'Running', `the ${what} runs`));
  const inactive = nodeNotActive(o.node.status.phase);
  if (inactive) return blockedPlan(inactive.reason, inactive.message);
  if (!o.quorum) return blockedPlan('WaitingForQuorum', 'waiting for monitor quorum');
  if (!o.keyExists) return stepPlan(o, 'create-key', o.keyRun, `creating the ${what}'s key`);
  return startPlan(o, what);
}

function startPlan(o: DaemonObserved, what: string): DaemonPlan {
  const run = o.startRun;
  if (isActive(run)) return plan(state('starting', 'Starting', `starting the ${what} (run ${run!.id})`));
  // The agent reports on its heartbeat; give it that long to say the daemon runs.
  const wait = graceWait(completedAt(run), o.now, o.startGraceMs);
  if (wait !== null)
    return plan(state('starting', 'WaitingForAgent', `started; waiting for the agent to report the ${what} running`), null, wait);
  return stepPlan(
    o,
    'start',
    run?.state === 'completed' ? null : run,
    run?.state === 'completed' ? `the ${what} is not running; starting it again` : `starting the ${what}`,
  );
}

/** The daemon stays 'orphaned' while it is being stopped: the state says what runs, not what is wanted. */
function stopPlan(o: DaemonObserved, what: string): DaemonPlan {
  const run = o.stopRun ?? null;
  const orphaned = (reason: string, message: string, requeueAfterMs: number | null = null, step: DaemonStep | null = null): DaemonPlan =>
    plan(state('orphaned', reason, message), step, requeueAfterMs);
  if (o.node.status.phase !== 'active')
    return orphaned('NodeNotActive', `the ${what} is no longer desired; it is stopped once the node is active`);
  if (isActive(run)) return orphaned('Stopping', `stopping the ${what}, no longer desired (run ${run!.id})`);
  const wait = graceWait(completedAt(run), o.now, o.startGraceMs);
  if (wait !== null) return orphaned('WaitingForAgent', `stopped; waiting for the agent to report the ${what} gone`, wait);
  const next = nextAttempt(run?.state === 'completed' ? null : run, o.now, o.retryBaseMs, `stopping the ${what}, no longer desired`);
  if (next.kind === 'busy') return orphaned('Stopping', next.message);
  if (next.kind === 'wait') return orphaned('RetryBackoff', next.message, next.waitMs);
  return orphaned('Stopping', next.message, null, { kind: 'stop', attempt: next.attempt });
}

function stepPlan(o: DaemonObserved, kind: 'create-key' | 'start', last: RunInfo | null, message: string): DaemonPlan {
  const next = nextAttempt(last, o.now, o.retryBaseMs, message);
  if (next.kind === 'busy') return plan(state('starting', 'Starting', message));
  const s = state(next.failed ? 'failed' : 'starting', next.reason, next.message);
  if (next.kind === 'wait') return plan(s, null, next.waitMs);
  return plan(s, { kind, attempt: next.attempt });
}

function blockedPlan(reason: string, message: string): DaemonPlan {
  return { status: state('blocked', reason, message), step: null, requeueAfterMs: null, gate: gateOf(reason, message) };
}
