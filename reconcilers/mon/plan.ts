// The monitor loop's pure half. The monitors declared together create the cluster with one
// first monmap naming them all (bootstrap); a monitor declared later joins the quorum they
// formed; a monitor that was created and stopped running is started again; one no longer
// desired is removed (removal.ts). Gates: nothing on a node that is not active, no join
// without quorum, exactly one node opens the bootstrap and the other first monitors follow it.
//
// Why bootstrap together: each join changes the monmap, and Ceph 16 then waits out a whole
// mon_election_timeout (5 s) before the bigger quorum forms, with the cluster unusable meanwhile
// (three monitors by joins: 11-12 s). One first monmap leaves one such change, the one Ceph
// makes itself on its first commit. Starting the first monitors at the same instant makes the
// first election race too, so the opener starts alone and the others once it runs. The
// measurements are in README.md.
import { Daemon, Step } from '../../src/catalogue/index.js';
import type { ClusterSpec, ClusterStatus } from '../../src/model/ceph-kinds.js';
import type { Doc } from '../../src/model/document.js';
import type { DaemonState } from '../../src/model/kinds.js';
import type { DiskDoc, NodeDoc } from '../../src/model/operations.js';
import { state } from '../shared/daemon-state.js';
import { nodeNotActive } from '../shared/node-active.js';
import { isActive, nextAttempt, type RunInfo } from '../shared/runs.js';
import { planRemoval, recreation, type RemovalInput } from './removal.js';
import { completedAt, gateOf, graceWait, type LoopPlan } from '../../src/runtime/loop-kit/index.js';

export const MonTask = {
  bootstrap: Step.monBootstrap,
  join: Step.monJoin,
  restart: Step.daemonRestart,
  /** Master-level: `ceph mon remove <name>`. */
  'monmap-remove': Step.monmapRemove,
  /** Node-level: stop the daemon and delete its store; args { monName }. */
  remove: Step.monRemove,
  /** Master-level, once the first monitor's mkfs is done: client.admin into the auth database,
   * imported as mon. (admin-key.ts says why). */
  'import-admin-key': Step.monImportAdminKey,
} as const;

/** A monitor of the cluster's first monmap. */
export interface InitialMon {
  nodeId: string;
  name: string;
  addr: string;
}

/** The bootstrap under way or done: once one node has started creating the cluster, it is the
 * one, whatever the hostnames of later monitors; its run's arguments name the first monmap. */
export interface BootstrapView {
  owner: NodeDoc;
  run: RunInfo;
  members: InitialMon[];
}

/** The node, its runs, the clock and the removal inputs are RemovalInput's (removal.ts). */
export interface MonObserved extends RemovalInput {
  cluster: Doc<ClusterSpec, ClusterStatus>;
  /** Every node with a monitor desired, this one included. */
  monNodes: NodeDoc[];
  monDisk: DiskDoc | undefined;
  quorum: boolean;
  /** Quarry has made the mon. and client.admin keys. */
  bootstrapKeys: boolean;
  /** client.admin is in the cluster's auth database: the master imported it after the first
   * monitor's mkfs (no monitor node ever holds it). Only `false` plans the import. */
  adminKeyImported?: boolean;
  /** This node's last import of client.admin (only the node that opened the cluster makes one). */
  importRun?: RunInfo | null;
  /** This node's bootstrap run opened the cluster (the first one started that did not fail)
   * and completed, whether or not its monitor is still desired: it carries the import. */
  openedCluster?: boolean;
  /** Until when the monitors declared with the first are awaited (set once the keys exist):
   * those declared by then make the first monmap. */
  gatherEndsAt: number | null;
  bootstrap: BootstrapView | null;
  /** Which step made createRun: a join (a monitor declared again joins, whatever the first
   * monmap said of it) or a bootstrap. */
  createdBy?: 'bootstrap' | 'join';
}

export type MonStep =
  | { kind: 'bootstrap-keys' }
  | {
      kind: 'bootstrap' | 'join' | 'restart' | 'monmap-remove' | 'remove' | 'import-admin-key';
      attempt: number;
      args: Record<string, unknown>;
    };

/** The node's status.ceph.mon entry this loop owns, the step, a wait, a gate. */
export type MonPlan = LoopPlan<DaemonState | undefined, MonStep>;

const plan = (s: DaemonState | undefined, step: MonStep | null = null, requeueAfterMs: number | null = null): MonPlan => ({
  status: s,
  step,
  requeueAfterMs,
  gate: null,
});
const gate = (reason: string, message: string): MonPlan => ({ ...plan(state('blocked', reason, message)), gate: gateOf(reason, message) });

/** The one node that creates the cluster: the first by hostname among active monitor nodes. */
export function bootstrapper(monNodes: NodeDoc[]): NodeDoc | undefined {
  return monNodes.filter((n) => n.status.phase === 'active').sort((a, b) => a.spec.hostname.localeCompare(b.spec.hostname))[0];
}

export function planMon(o: MonObserved): MonPlan {
  const desired = o.node.spec.daemons.mon !== undefined;
  const running = o.node.status.daemons?.mon === true;
  // The node that created the cluster: its monitor runs (or starts) from a mkfs that had only
  // mon., so the master imports client.admin next, whatever the monitor's own state; even for a
  // monitor no longer desired, whose removal needs Ceph to answer the master first.
  const importing = o.openedCluster === true && o.adminKeyImported === false;
  if (!desired) return importing ? importPlan(o, 'orphaned') : planRemoval(o);
  // Declared again after a removal began: what that removal left decides, not the old creation.
  const again = recreation(o);
  if (running && !again) return importing ? importPlan(o, 'running') : plan(state('running', 'Running', 'the monitor runs'));
  const inactive = nodeNotActive(o.node.status.phase);
  if (inactive) return gate(inactive.reason, inactive.message);
  if (again?.kind === 'busy')
    return gate(
      'RemovalInProgress',
      `mon.${o.node.spec.hostname} is being removed (run ${again.run.id}); it is created afresh once that is done`,
    );
  if (again?.kind === 'clean') return cleanPlan(o, again.last);
  if (!o.monDisk || o.monDisk.status.present === false)
    return gate('MonitorDiskMissing', 'the disk chosen for the monitor store is not present');
  if (again) return joinPlan(o, null, 'declared again after its removal: joining the quorum with a new store');
  const created = o.createRun?.state === 'completed';
  if (created) {
    const restart = restartPlan(o);
    // A monitor that must be started again goes first: the import needs a quorum.
    return importing && restart.step === null ? importPlan(o, 'starting') : restart;
  }
  const boot = o.bootstrap;
  // A first monitor follows the bootstrap, unless it has joined since (declared again).
  const joined = o.createRun !== null && o.createdBy === 'join';
  if (boot && !joined && boot.owner.id !== o.node.id && boot.members.some((m) => m.nodeId === o.node.id)) {
    if (boot.run.state !== 'completed')
      return gate('WaitingForFirstMonitor', `${boot.owner.spec.hostname} starts the first monitor; this one follows it`);
    return runPlan(o, 'bootstrap', o.createRun, 'creating this monitor from the first monmap', boot.members);
  }
  const bootstrapped = o.cluster.status.bootstrapped === true || o.monNodes.some((n) => n.status.daemons?.mon === true);
  if (bootstrapped || joined) return joinPlan(o, o.createRun, 'joining the monitor quorum');
  const first = boot?.owner ?? bootstrapper(o.monNodes);
  if (first && first.id !== o.node.id) return gate('WaitingForFirstMonitor', `${first.spec.hostname} creates the cluster first`);
  if (!o.bootstrapKeys) return plan(state('starting', 'CreatingKeys', 'creating the monitor and admin keys'), { kind: 'bootstrap-keys' });
  // A retry keeps the monmap its first attempt may have made a store from.
  const kept = initialMembers(o.createRun?.args);
  if (!kept && o.gatherEndsAt !== null && o.now < o.gatherEndsAt) {
    return plan(
      state('starting', 'GatheringMonitors', 'waiting a moment for the other monitors declared with this one'),
      null,
      o.gatherEndsAt - o.now,
    );
  }
  return runPlan(o, 'bootstrap', o.createRun, 'creating the cluster with this monitor', kept ?? firstMonmap(o));
}

/** The first monmap: every active monitor node with an address, sorted by hostname. */
function firstMonmap(o: MonObserved): InitialMon[] {
  return o.monNodes
    .filter((n) => n.status.phase === 'active' && n.status.ip)
    .sort((a, b) => a.spec.hostname.localeCompare(b.spec.hostname))
    .map((n) => ({ nodeId: n.id, name: n.spec.hostname, addr: n.status.ip! }));
}

/** The first monmap a bootstrap run's arguments name; undefined for any other run. */
export function initialMembers(args: Record<string, unknown> | undefined): InitialMon[] | undefined {
  const list = args?.initialMembers;
  if (!Array.isArray(list)) return undefined;
  return (list as unknown[]).filter(isInitialMon);
}

function isInitialMon(m: unknown): m is InitialMon {
  if (typeof m !== 'object' || m === null) return false;
  const { nodeId, name, addr } = m as Record<string, unknown>;
  return typeof nodeId === 'string' && typeof name === 'string' && typeof addr === 'string';
}

/** The master's import of client.admin (admin-key.ts), retried with the usual backoff. */
function importPlan(o: MonObserved, phase: 'running' | 'starting' | 'orphaned'): MonPlan {
  const what = "putting client.admin into the new cluster's auth database (as mon.)";
  const next = nextAttempt(o.importRun ?? null, o.now, o.retryBaseMs, what);
  if (next.kind === 'busy') return plan(state(phase, 'ImportingAdminKey', what));
  const s = state(next.failed ? 'failed' : phase, next.reason === 'Starting' ? 'ImportingAdminKey' : next.reason, next.message);
  if (next.kind === 'wait') return plan(s, null, next.waitMs);
  return plan(s, { kind: 'import-admin-key', attempt: next.attempt, args: {} });
}

function joinPlan(o: MonObserved, last: RunInfo | null, message: string): MonPlan {
  if (!o.quorum) return gate('WaitingForQuorum', 'waiting for monitor quorum before joining it');
  return runPlan(o, 'join', last, message);
}

/** The old monitor off the node (stopped, its store deleted) before a new one joins. */
function cleanPlan(o: MonObserved, last: RunInfo | null): MonPlan {
  const name = o.node.spec.hostname;
  const what = `mon.${name} was taken out of the monmap; removing its old store before it joins again`;
  const next = nextAttempt(last, o.now, o.retryBaseMs, what);
  if (next.kind === 'busy') return plan(state('starting', 'RemovingOldStore', what));
  const s = state(next.failed ? 'failed' : 'starting', 'RemovingOldStore', next.message);
  if (next.kind === 'wait') return plan(s, null, next.waitMs);
  return plan(s, { kind: 'remove', attempt: next.attempt, args: { monName: name } });
}

function restartPlan(o: MonObserved): MonPlan {
  const created = o.createRun!;
  const last = o.restartRun && (o.restartRun.completedAt ?? o.now) >= (created.completedAt ?? 0) ? o.restartRun : null;
  const since = Math.max(created.completedAt ?? 0, completedAt(last) ?? 0);
  const wait = isActive(last) ? null : graceWait(since, o.now, o.startGraceMs);
  if (wait !== null)
    return plan(state('starting', 'WaitingForAgent', 'started; waiting for the agent to report the monitor running'), null, wait);
  return runPlan(o, 'restart', last?.state === 'completed' ? null : last, 'the monitor is not running; starting it again');
}

function runPlan(
  o: MonObserved,
  kind: 'bootstrap' | 'join' | 'restart',
  last: RunInfo | null,
  message: string,
  members?: InitialMon[],
): MonPlan {
  const next = nextAttempt(last, o.now, o.retryBaseMs, message);
  if (next.kind === 'busy') return plan(state('starting', 'Starting', message));
  const s = state(next.failed ? 'failed' : 'starting', next.reason, next.message);
  if (next.kind === 'wait') return plan(s, null, next.waitMs);
  return plan(s, { kind, attempt: next.attempt, args: monArgs(o, kind, members) });
}

function monArgs(o: MonObserved, kind: 'bootstrap' | 'join' | 'restart', members?: InitialMon[]): Record<string, unknown> {
  const name = o.node.spec.hostname;
  if (kind === 'restart') return { daemon: Daemon.mon, name };
  return {
    fsid: o.cluster.spec.fsid,
    monName: name,
    addr: o.node.status.ip ?? '',
    monPort: o.cluster.spec.monPort,
    devicePath: o.monDisk?.status.devicePath ?? '',
    ...(members ? { initialMembers: members } : {}),
  };
}
