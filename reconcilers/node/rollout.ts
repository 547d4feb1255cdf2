// The rolling restart for a config change (#15 part 2), pure. A daemon keeps the config it
// started with; the Cluster spec fields it reads only at start are hashed per daemon kind
// (reconcilers/shared/daemon-config.ts), and each node records the hashes its daemons run with
// (status.daemonConfig). A node whose record differs restarts the daemons concerned, and only
// those, under a `daemon-restart` lease of the disruption budget (Ceph asked for them, one failure
// domain at a time), waits for them to run again, records the new hashes and gives the lease back.
//
// Nothing is restarted for nothing: a node seen for the first time (a new node, or one from before
// this record existed) records what it runs as current, since its daemons started under the
// config of now; so does a node booted since its record (its daemons started in that boot, after
// the agent wrote the master's ceph.conf) and a node that runs no daemon of the kind concerned.
import { DISK_DAEMON_TYPE, Daemon, Step, type DaemonType } from '../../src/catalogue/index.js';
import { DisruptionLeaseKind, type LeaseStops } from '../../src/model/disruption-kinds.js';
import { Kind, type NodeStatusFields, type RunState } from '../../src/model/kinds.js';
import type { DisruptionRequest } from '../shared/disruption-gate.js';
import { configKey, type ConfigHashes } from '../../src/model/daemon-config.js';

export const RolloutTask = { restart: Step.configRestart } as const;
export type RolloutTask = (typeof RolloutTask)[keyof typeof RolloutTask];

export const CONFIG_RESTART_FAILED = 'ConfigRestartFailed';

/** How long restarted daemons have to run again before the lease goes back anyway (the daemon
 * loops start what is down, and such a start reads the new config too). */
export const DEFAULT_ROLLOUT_BACK_MS = 120_000;

export interface RolloutDaemon {
  daemon: DaemonType;
  name: string;
}

/** The latest ceph.config.restart run of the node, reduced to what the plan needs. */
export interface RolloutRunView {
  id: string;
  state: RunState;
  attempt: number;
  config: string;
  daemons: RolloutDaemon[];
  completedAt: number | null;
  error?: string | null;
}

export interface RolloutInput {
  hostname: string;
  /** configHashes of the Cluster spec; null: no cluster yet. */
  want: ConfigHashes | null;
  recorded: NodeStatusFields['daemonConfig'];
  /** The boot the agent reports from, when it reports (fresh); null otherwise. */
  bootId: string | null;
  /** What the agent reports running. */
  running: { osds?: readonly number[] } & Partial<Record<string, unknown>>;
  run: RolloutRunView | null | undefined;
  now: number;
  retryBaseMs: number;
  maxAttempts: number;
  backWaitMs: number;
}

export type RolloutDecision =
  | { record: NonNullable<NodeStatusFields['daemonConfig']> }
  | {
      /** The lease stays (a run to send, running, or its daemons awaited). */
      underWay: true;
      reason: string;
      message: string;
      run?: { taskName: RolloutTask; request: number; attempt: number; bootId: null; config: string; daemons: RolloutDaemon[] };
      requeueAfterMs?: number;
    }
  | { blocked: { reason: string; message: string } };

/** The daemons of `kind` the agent reports running on the node, by their Ceph names. */
export function runningOf(kind: DaemonType, hostname: string, running: RolloutInput['running']): string[] {
  if (kind === DISK_DAEMON_TYPE) return [...(running.osds ?? [])].sort((a, b) => a - b).map(String);
  return running[kind] === true ? [hostname] : [];
}

const label = (d: RolloutDaemon): string => `${d.daemon}.${d.name}`;
const sameHashes = (a: Record<string, string>, b: ConfigHashes): boolean =>
  Object.keys(a).length === Object.keys(b).length && Object.entries(b).every(([k, v]) => a[k] === v);

/** What the rollout decides for the node: nothing (null), a record, a run or a wait, or a refusal. */
export function planRollout(r: RolloutInput): RolloutDecision | null {
  if (!r.want || r.bootId === null) return null;
  const record = { record: { bootId: r.bootId, hashes: { ...r.want } as Record<string, string> } };
  const rec = r.recorded;
  // First sight, or booted since: its daemons started under the config of now.
  if (!rec || rec.bootId !== r.bootId) return record;
  const key = configKey(r.want);
  const stale = (Object.keys(r.want) as DaemonType[]).filter((k) => rec.hashes[k] !== r.want![k]);
  if (stale.length === 0) return sameHashes(rec.hashes, r.want) ? null : record;
  const run = r.run && r.run.config === key ? r.run : null;
  if (run) return afterRun(r, run, record);
  const daemons = stale.flatMap((k) => runningOf(k, r.hostname, r.running).map((name) => ({ daemon: k, name })));
  // Nothing of the kinds concerned runs here: what starts later reads the new config.
  if (daemons.length === 0) return record;
  return start(key, daemons, 1);
}

function afterRun(r: RolloutInput, run: RolloutRunView, record: { record: NonNullable<NodeStatusFields['daemonConfig']> }) {
  const names = run.daemons.map(label).join(', ');
  if (run.state === 'pending' || run.state === 'running')
    return { underWay: true as const, reason: 'RestartingDaemons', message: `restarting ${names} for a config change (run ${run.id})` };
  if (run.state === 'completed') {
    const back = run.daemons.every((d) => runningOf(d.daemon, r.hostname, r.running).includes(d.name));
    const due = (run.completedAt ?? r.now) + r.backWaitMs;
    if (back || r.now >= due) return record;
    return {
      underWay: true as const,
      reason: 'RestartingDaemons',
      message: `restarted ${names} for a config change; waiting for them to run again`,
      requeueAfterMs: due - r.now,
    };
  }
  if (run.attempt >= r.maxAttempts)
    return {
      blocked: {
        reason: CONFIG_RESTART_FAILED,
        message: `restarting ${names} for a config change failed ${run.attempt} times (${run.error ?? 'no reason given'}); they keep the config they started with`,
      },
    };
  const due = (run.completedAt ?? r.now) + r.retryBaseMs * 2 ** (run.attempt - 1);
  if (r.now < due)
    return {
      underWay: true as const,
      reason: 'RetryBackoff',
      message: `restarting ${names} for a config change failed (${run.error ?? 'no reason given'}); retrying`,
      requeueAfterMs: due - r.now,
    };
  // The daemons as they run now: one removed meanwhile is not restarted.
  const daemons = run.daemons.filter((d) => runningOf(d.daemon, r.hostname, r.running).includes(d.name));
  return daemons.length === 0 ? record : start(run.config, daemons, run.attempt + 1);
}

const start = (config: string, daemons: RolloutDaemon[], attempt: number) => ({
  underWay: true as const,
  reason: 'RestartingDaemons',
  message: `restarting ${daemons.map(label).join(', ')} for a config change`,
  run: { taskName: RolloutTask.restart, request: 0, attempt, bootId: null, config, daemons },
});

/** The lease of a rolling restart: the daemons it restarts are all it stops, Ceph asked for them. */
export function rolloutRequest(
  node: { id: string; spec: { hostname: string } },
  domain: string,
  daemons: readonly RolloutDaemon[],
): DisruptionRequest {
  const stops: LeaseStops = {
    osds: daemons.filter((d) => d.daemon === DISK_DAEMON_TYPE).map((d) => Number(d.name)),
    mons: daemons.filter((d) => d.daemon === Daemon.mon).map((d) => d.name),
    mds: daemons.filter((d) => d.daemon === Daemon.mds).map((d) => d.name),
  };
  return {
    holder: { kind: Kind.Node, id: node.id },
    kind: DisruptionLeaseKind.daemonRestart,
    what: `daemon restart of ${node.spec.hostname} for a config change (${daemons.map(label).join(', ')})`,
    nodes: [node.id],
    domains: [domain],
    stops,
  };
}
