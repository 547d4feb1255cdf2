// The pure half of taking a monitor away from a node that no longer wants one: first out of
// the monmap (master-level `ceph mon remove`), then off the node (stop the daemon, delete its
// store). The monmap step is gated: never the last monitor, never two at once, and only if the
// monitors left would still have a quorum counting only those that are up.
import type { DaemonState } from '../../src/model/kinds.js';
import type { NodeDoc } from '../../src/model/operations.js';
import { isActive, nextAttempt, type RunInfo } from '../shared/runs.js';
import { state } from '../shared/daemon-state.js';
import { gateOf, graceWait, type LoopPlan } from '../../src/runtime/loop-kit/index.js';

/** The reason a node's monitor state carries while it is being taken out of the monmap: other
 * nodes' removals wait while any node shows it. */
export const REMOVING_FROM_MONMAP = 'RemovingFromMonmap';

/** What Ceph says of the monitors right now: the monmap's names and those in quorum. */
export type MonmapView = { names: string[]; quorum: string[] } | { error: string };

export interface RemovalObserved {
  /** Asked of Ceph only for a monitor being removed; null: not asked. */
  monmap: MonmapView | null;
  /** Hostnames of other nodes whose monitor is being taken out of the monmap. */
  othersRemoving: string[];
  /** The newest `ceph mon remove` run and the newest node-level removal of this node. */
  monmapRun: RunInfo | null;
  nodeRun: RunInfo | null;
  /** A first monmap named this node (another node's bootstrap run says so): it is in the
   * monmap even if it never made a store. */
  inFirstMonmap?: boolean;
}

/** What of the monitor loop's observation the removal plans from (MonObserved extends it). */
export interface RemovalInput {
  node: NodeDoc;
  /** The newest bootstrap or join run of this node, and the newest restart of its monitor. */
  createRun: RunInfo | null;
  restartRun: RunInfo | null;
  /** What removing a monitor no longer desired needs to know. */
  removal: RemovalObserved;
  now: number;
  retryBaseMs: number;
  startGraceMs: number;
}

/** A MonPlan whose step, if any, is one of the two removal steps. */
export type RemovalPlan = LoopPlan<
  DaemonState | undefined,
  { kind: 'monmap-remove' | 'remove'; attempt: number; args: Record<string, unknown> }
>;

const plan = (s: RemovalPlan['status'], step: RemovalPlan['step'] = null, requeueAfterMs: number | null = null): RemovalPlan => ({
  status: s,
  step,
  requeueAfterMs,
  gate: null,
});
const gate = (reason: string, message: string): RemovalPlan => ({
  ...plan(state('blocked', reason, message)),
  gate: gateOf(reason, message),
});

/** Whether removing `name` leaves a strict majority of the smaller monmap up (in quorum). */
export function quorumAfterRemoval(names: string[], quorum: string[], name: string): { ok: boolean; up: number; left: number } {
  const left = names.filter((n) => n !== name);
  const up = left.filter((n) => quorum.includes(n)).length;
  return { ok: left.length > 0 && up * 2 > left.length, up, left: left.length };
}

export function planRemoval(o: RemovalInput): RemovalPlan {
  const running = o.node.status.daemons?.mon === true;
  // Nothing was ever made here (no create run), nothing runs and no monmap names it: there is
  // nothing to remove.
  if (!running && o.createRun === null && o.removal.nodeRun === null && !o.removal.inFirstMonmap) return plan(undefined);
  const name = o.node.spec.hostname;
  const map = o.removal.monmap;
  if (!map || 'error' in map)
    return gate(
      'MonmapUnknown',
      `mon.${name} is no longer desired, but Ceph cannot say who is in the monmap: ${map?.error ?? 'not asked'}`,
    );
  if (map.names.includes(name)) return fromMonmap(o, name, map);
  return fromNode(o, name, running);
}

function fromMonmap(o: RemovalInput, name: string, map: { names: string[]; quorum: string[] }): RemovalPlan {
  const { monmapRun } = o.removal;
  if (!isActive(monmapRun)) {
    const other = o.removal.othersRemoving[0];
    if (other !== undefined) return gate('RemovalInProgress', `mon.${other} is being removed; one monitor at a time`);
    if (map.names.length <= 1) return gate('LastMonitor', `mon.${name} is the last monitor; the cluster cannot lose it`);
    const q = quorumAfterRemoval(map.names, map.quorum, name);
    if (!q.ok) {
      return gate(
        'QuorumWouldBreak',
        `removing mon.${name} would leave ${q.up} of ${q.left} monitors up, no majority; start the others first`,
      );
    }
  }
  const what = `taking mon.${name} out of the monmap (${map.names.length - 1} monitors will remain)`;
  const next = nextAttempt(monmapRun?.state === 'completed' ? null : monmapRun, o.now, o.retryBaseMs, what);
  if (next.kind === 'busy') return plan(state('orphaned', REMOVING_FROM_MONMAP, `${what} (run ${monmapRun!.id})`));
  const s = state(next.failed ? 'failed' : 'orphaned', REMOVING_FROM_MONMAP, next.message);
  if (next.kind === 'wait') return plan(s, null, next.waitMs);
  return plan(s, { kind: 'monmap-remove', attempt: next.attempt, args: { monName: name } });
}

function fromNode(o: RemovalInput, name: string, running: boolean): RemovalPlan {
  const run = o.removal.nodeRun;
  const made = Math.max(o.createRun?.completedAt ?? 0, o.restartRun?.completedAt ?? 0);
  const cleaned = run?.state === 'completed' && (run.completedAt ?? 0) >= made;
  if (cleaned && !running) return plan(undefined);
  const wait = cleaned ? graceWait(run.completedAt ?? 0, o.now, o.startGraceMs) : null;
  if (wait !== null)
    return plan(state('orphaned', 'WaitingForAgent', `mon.${name} removed; waiting for the agent to report it gone`), null, wait);
  if (o.node.status.phase !== 'active') {
    return gate(
      'NodeNotActive',
      `mon.${name} is out of the monmap; its daemon and store are removed once the node is active (it is ${o.node.status.phase ?? 'discovered'})`,
    );
  }
  const what = `stopping mon.${name} and removing its store`;
  const next = nextAttempt(cleaned || run?.state === 'completed' ? null : run, o.now, o.retryBaseMs, what);
  if (next.kind === 'busy') return plan(state('orphaned', 'Removing', `${what} (run ${run!.id})`));
  const s = state(next.failed ? 'failed' : 'orphaned', 'Removing', next.message);
  if (next.kind === 'wait') return plan(s, null, next.waitMs);
  return plan(s, { kind: 'remove', attempt: next.attempt, args: { monName: name } });
}

/** Whether `a` was written after `b`: by store revision, else by completion time (an active run
 * has none and is the newer). */
function after(a: RunInfo, b: RunInfo): boolean {
  if (a.revision !== undefined && b.revision !== undefined) return a.revision > b.revision;
  return (a.completedAt ?? Number.POSITIVE_INFINITY) > (b.completedAt ?? Number.POSITIVE_INFINITY);
}

/** What a removal cycle begun since the monitor was last made (bootstrap or join) left of it,
 * for a monitor declared again: null when none began (the made monitor is the one to keep).
 * `busy`: a removal run still goes; `clean`: out of the monmap (or a node-level removal failed
 * half-way) but its store may be left on the node, which is removed first; `gone`: its store is
 * deleted. Either of the last two is created afresh from the current monmap (a join), never
 * started again from a store that is no longer the cluster's. */
export type Recreation = { kind: 'busy'; run: RunInfo } | { kind: 'clean'; last: RunInfo | null } | { kind: 'gone' };

export function recreation(o: RemovalInput): Recreation | null {
  const made = o.createRun;
  const since = (r: RunInfo | null): RunInfo | null => (r && r.state !== 'canceled' && (!made || after(r, made)) ? r : null);
  const monmap = since(o.removal.monmapRun);
  const node = since(o.removal.nodeRun);
  if (!monmap && !node) return null;
  const busy = [monmap, node].find((r) => isActive(r));
  if (busy) return { kind: 'busy', run: busy };
  if (node?.state === 'completed' && (!monmap || after(node, monmap))) return { kind: 'gone' };
  // Out of the monmap and not yet off the node, or a node-level removal that failed: the
  // removal is finished first (it is idempotent), so the join makes a new store.
  if (monmap?.state === 'completed' || node) return { kind: 'clean', last: node?.state === 'failed' ? node : null };
  // Only a failed `ceph mon remove`: the monitor is still the cluster's and stays as made.
  return null;
}
