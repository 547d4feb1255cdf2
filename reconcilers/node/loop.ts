// The node loop's effectful half: gathers what the plan needs, then writes disks, starts at
// most one run and writes the node's status.
import { NODE_DAEMON_TYPES } from '../../src/catalogue/index.js';
import { withOrphaned } from '../../src/runtime/conditions.js';
import { ConflictError, NotFoundError } from '../../src/errors.js';
import type { Clock } from '../../src/model/clock.js';
import type { Doc } from '../../src/model/document.js';
import { diskIdsOf } from './disks.js';
import {
  Kind,
  type AgentCredentialSpec,
  type DiskSpec,
  type DiskStatusFields,
  type NodeSpec,
  type NodeStatusFields,
} from '../../src/model/kinds.js';
import type { Fleet } from '../../src/fleet/fleet.js';
import type { Store } from '../../src/store/types.js';
import type { Script, StartRequest, TaskRun } from '../../src/tasks/types.js';
import type { EventBus } from '../../src/tasks/bus.js';
import { done, requeueAfter, type Reconciler, type Result } from '../../src/runtime/types.js';
import { applyPlan, writeOwned, type StatusOwner } from '../../src/runtime/loop-kit/index.js';
import { NodeTask, planNode, type DiskWrite, type NodeObserved, type NodePlan, type RunView } from './plan.js';
import type { CephApi } from '../../src/clients/ceph-api.js';
import { DisruptionKind } from '../../src/model/disruption-kinds.js';
import { giveBack, takeLease } from '../shared/disruption-leases.js';
import { observeDisruption, waitingWatch, type DisruptionMemory } from './disruption-observe.js';
import type { BootLoopLimits } from './boot-loop.js';
import type { BmcApi } from '../../src/clients/bmc.js';
import { PowerTask, powerOnRequest, type PowerRunView } from './power.js';
import { bmcTarget, powerOffScript, powerOnScript } from './power-scripts.js';
import { FenceTask, isFenceTask } from './fencing.js';
import { fenceRun } from './fence-run.js';
import { RolloutTask, type RolloutRunView } from './rollout.js';
import { configHashes, configKey } from '../../src/model/daemon-config.js';
import { CLUSTER_ID, CephKind, type ClusterSpec } from '../../src/model/ceph-kinds.js';
import type { AnyDoc } from '../../src/model/document.js';
import { MaintenanceTask, isMaintenanceTask, type LeaseRunView } from './maintenance.js';
import { nooutScript } from './maintenance-scripts.js';
import { namesOf, runTarget, yamlNames } from '../../src/model/object-names.js';

export interface NodeLoopDeps {
  store: Store;
  fleet: Pick<Fleet, 'observe'>;
  tasks: {
    start(req: StartRequest): Promise<TaskRun>;
    latestFor(kind: string, id: string, taskName?: string): Promise<TaskRun | undefined> | TaskRun | undefined;
  };
  bus: Pick<EventBus, 'publish'>;
  clock: Clock;
  /** Since when this controller hears the agents: its start, or (several controllers) its
   * election — a follower's agents reported to the old leader, so its silence means nothing. */
  startedAt: number | (() => number);
  heartbeatTimeoutMs: number;
  /** First retry delay of a failed restart/shutdown; doubles per attempt. */
  retryBaseMs: number;
  runTimeoutMs: number;
  /** osdSetGroup/osdUnsetGroup: the noout of maintenance, restarts and shutdowns (a run fails
   * saying so when absent). */
  ceph: Pick<CephApi, 'osdOkToStop' | 'monOkToStop' | 'mdsOkToStop'> & Partial<Pick<CephApi, 'osdSetGroup' | 'osdUnsetGroup'>>;
  /** Deadline of the ok-to-stop question (it waits for a manager). */
  cephQueryTimeoutMs: number;
  /** How often a node the disruption budget holds back asks Ceph again (a released lease wakes
   * it sooner); the heartbeat timeout when absent. */
  disruptionRecheckMs?: number;
  /** Adds the lines that say why a run was sent to its log. */
  notes?: { note(runId: string, level: 'info', message: string): void };
  /** When repeated network boots make a boot loop (defaults: more than 5 in 10 min). */
  bootLoop?: BootLoopLimits;
  /** An unapproved node not seen booting for this long is forgotten (UNAPPROVED_NODE_TTL_MS). */
  unapprovedTtlMs?: number;
  /** Source of the staleness-recheck jitter; tests inject a fixed one. */
  random?: () => number;
  /** The nodes' BMCs (ipmitool on the master, or the lab's); absent: no node has power control. */
  bmc?: BmcApi;
  /** How long a soft power-off may take before the BMC cuts the power. */
  softOffGraceMs?: number;
  /** How long a machine powered on through its BMC has to boot and report before another try. */
  powerOnBootMs?: number;
  /** How often the power-off check asks the BMC. */
  bmcPollMs?: number;
  /** How long an agent is silent before its node (with `fencing: bmc`) is fenced (FENCE_AFTER_MS). */
  fenceAfterMs?: number;
}

export function nodeLoop(deps: NodeLoopDeps): Reconciler<NodeObserved, NodePlan> {
  // Which nodes wait for the budget, and when each last asked Ceph: a released lease wakes them.
  const memory: DisruptionMemory = { waiting: new Set(), askedAt: new Map(), leaseKeys: null };
  const rollout: RolloutMemory = { nodes: new Set(), key: null };
  return {
    name: 'node',
    kind: Kind.Node,
    dependsOn: [],
    watches: [
      { kind: DisruptionKind.DisruptionBudget, map: (doc) => waitingWatch(memory, doc) },
      { kind: CephKind.Cluster, map: (doc) => configWatch(rollout, doc) },
    ],
    observe: async (id) => {
      const o = await observe(deps, memory, id);
      if (o) rollout.nodes.add(id);
      else rollout.nodes.delete(id);
      return o;
    },
    plan: planNode,
    apply: (o, plan) => apply(deps, memory, o, plan),
  };
}

/** The nodes the loop knows and the restart-relevant config last seen: a change of it (not of the
 * Cluster's status, which changes all the time) wakes every node for its rolling restart. */
interface RolloutMemory {
  nodes: Set<string>;
  key: string | null;
}

function configWatch(m: RolloutMemory, doc: AnyDoc): string[] {
  const key = configKey(configHashes(doc.spec as ClusterSpec));
  const changed = m.key !== null && m.key !== key;
  m.key = key;
  return changed ? [...m.nodes] : [];
}

async function observe(deps: NodeLoopDeps, memory: DisruptionMemory, id: string): Promise<NodeObserved | undefined> {
  const node = await deps.store.get<NodeSpec, NodeStatusFields>(Kind.Node, id);
  if (!node) return undefined;
  const obs = deps.fleet.observe(id);
  const disks = new Map<string, Doc<DiskSpec, DiskStatusFields> | undefined>();
  for (const diskId of diskIdsOf(id, node.status.diskIds ?? [], obs.report)) {
    disks.set(diskId, await deps.store.get<DiskSpec, DiskStatusFields>(Kind.Disk, diskId));
  }
  const [restart, shutdown, credential] = await Promise.all([
    deps.tasks.latestFor(Kind.Node, id, NodeTask.restart),
    deps.tasks.latestFor(Kind.Node, id, NodeTask.shutdown),
    deps.store.get<AgentCredentialSpec>(Kind.AgentCredential, id),
  ]);
  // The BMC's runs only where they can matter: a node with a BMC (its shutdowns end with a power
  // check) or a power-on request pending.
  const fences = node.spec.bmc !== undefined && node.spec.fencing === 'bmc';
  const [powerOn, powerOff, fenceStatus, fenceCycle, rolloutRun, cluster] = await Promise.all([
    powerOnRequest(node.spec, node.status) !== null ? deps.tasks.latestFor(Kind.Node, id, PowerTask.on) : undefined,
    node.spec.bmc ? deps.tasks.latestFor(Kind.Node, id, PowerTask.off) : undefined,
    fences ? deps.tasks.latestFor(Kind.Node, id, FenceTask.status) : undefined,
    fences ? deps.tasks.latestFor(Kind.Node, id, FenceTask.cycle) : undefined,
    deps.tasks.latestFor(Kind.Node, id, RolloutTask.restart),
    deps.store.get<ClusterSpec>(CephKind.Cluster, CLUSTER_ID),
  ]);
  // Maintenance's runs and noout's, only where they can matter (maintenance.ts).
  const leaseRuns =
    node.spec.maintenance === true ||
    node.status.phase === 'maintenance' ||
    node.status.disruption !== undefined ||
    node.spec.restartGeneration > (node.status.observedRestartGeneration ?? 0) ||
    node.spec.shutdownGeneration > (node.status.observedShutdownGeneration ?? 0);
  const [noout, stop, start] = leaseRuns ? await maintenanceRuns(deps, id) : [];
  const o: NodeObserved = {
    node,
    obs,
    disks,
    runs: {
      restart: runView(restart),
      shutdown: runView(shutdown),
      powerOn: powerRunView(powerOn),
      powerOff: powerRunView(powerOff),
      ...(fences ? { fenceStatus: powerRunView(fenceStatus), fenceCycle: powerRunView(fenceCycle) } : {}),
      rollout: rolloutRunView(rolloutRun),
      noout: leaseRunView(noout),
      stop: leaseRunView(stop),
      start: leaseRunView(start),
    },
    configHashes: cluster ? configHashes(cluster.spec) : null,
    now: deps.clock.now(),
    nowIso: deps.clock.iso(),
    startedAt: typeof deps.startedAt === 'function' ? deps.startedAt() : deps.startedAt,
    heartbeatTimeoutMs: deps.heartbeatTimeoutMs,
    retryBaseMs: deps.retryBaseMs,
    ...(deps.bootLoop ? { bootLoop: deps.bootLoop } : {}),
    credentialConflict: credential?.spec.conflict?.message ?? null,
    ...(deps.unapprovedTtlMs !== undefined ? { unapprovedTtlMs: deps.unapprovedTtlMs } : {}),
    staleJitter: (deps.random ?? Math.random)(),
    ...(deps.softOffGraceMs !== undefined ? { softOffGraceMs: deps.softOffGraceMs } : {}),
    ...(deps.powerOnBootMs !== undefined ? { powerOnBootMs: deps.powerOnBootMs } : {}),
    ...(deps.fenceAfterMs !== undefined ? { fenceAfterMs: deps.fenceAfterMs } : {}),
  };
  await observeDisruption(deps, memory, o);
  // A lease the status did not know of (Quarry died as it was taken): its runs are read too.
  if (!leaseRuns && o.disruption?.mine) {
    const [n, st, sr] = await maintenanceRuns(deps, id);
    Object.assign(o.runs, { noout: leaseRunView(n), stop: leaseRunView(st), start: leaseRunView(sr) });
  }
  return o;
}

/** What every run view of the node loop reads: which run, its state, its try, when it ended. */
const baseView = (run: TaskRun) => ({
  id: run.id,
  state: run.status.state,
  attempt: run.spec.attempt,
  completedAt: run.status.completedAt ? Date.parse(run.status.completedAt) : null,
});

function runView(run: TaskRun | undefined): RunView | null {
  if (!run) return null;
  const { args } = run.spec;
  return {
    ...baseView(run),
    request: typeof args.request === 'number' ? args.request : -1,
    bootId: typeof args.bootId === 'string' ? args.bootId : null,
  };
}

function rolloutRunView(run: TaskRun | undefined): RolloutRunView | null {
  if (!run) return null;
  const { config, daemons } = run.spec.args;
  return {
    ...baseView(run),
    config: typeof config === 'string' ? config : '',
    daemons: Array.isArray(daemons) ? (daemons as RolloutRunView['daemons']) : [],
    error: run.status.error,
  };
}

/** The latest noout, daemons-stop and daemons-start runs of the node. */
function maintenanceRuns(deps: NodeLoopDeps, id: string): Promise<Array<TaskRun | undefined>> {
  const names = [MaintenanceTask.noout, MaintenanceTask.stop, MaintenanceTask.start];
  return Promise.all(names.map((t) => Promise.resolve(deps.tasks.latestFor(Kind.Node, id, t))));
}

function leaseRunView(run: TaskRun | undefined): LeaseRunView | null {
  if (!run) return null;
  const { args } = run.spec;
  return {
    ...baseView(run),
    lease: typeof args.lease === 'string' ? args.lease : null,
    ...(typeof args.set === 'boolean' ? { set: args.set } : {}),
  };
}

function powerRunView(run: TaskRun | undefined): PowerRunView | null {
  if (!run) return null;
  const was = run.status.result?.was;
  return {
    ...baseView(run),
    request: typeof run.spec.args.request === 'number' ? run.spec.args.request : -1,
    error: run.status.error,
    was: was === 'on' || was === 'off' ? was : null,
  };
}

/** The node fields the node loop owns: everything in a Node's status but the Ceph loops'
 * `ceph.<daemon>` entries. */
export const NODE_STATUS: StatusOwner = {
  loop: 'node',
  kind: Kind.Node,
  fields: [
    'phase',
    'conditions',
    'observedGeneration',
    'ip',
    'observedRestartGeneration',
    'observedShutdownGeneration',
    'observedPowerOnGeneration',
    'bootCount',
    'bootAddress',
    'bootLoopResetAt',
    'bootId',
    'diskIds',
    'nics',
    'daemons',
    'disruption',
    'daemonConfig',
  ],
};

/** The hardware fields of a Disk, from the agent's inventory; the osd loop owns the rest. */
export const DISK_HARDWARE_STATUS: StatusOwner = {
  loop: 'node',
  kind: Kind.Disk,
  fields: [
    'devicePath',
    'capacityBytes',
    'rotational',
    'interface',
    'model',
    'vendor',
    'isSystem',
    'hasFilesystem',
    'present',
    'eligible',
    'reasons',
    'label',
  ],
};

async function apply(deps: NodeLoopDeps, memory: DisruptionMemory, o: NodeObserved, plan: NodePlan): Promise<Result> {
  const { node } = o;
  if (plan.status.disruption?.state === 'waiting') memory.waiting.add(node.id);
  else memory.waiting.delete(node.id);
  if (plan.forget) {
    await deps.store.delete(Kind.Node, node.id, { resourceVersion: node.metadata.resourceVersion }).catch((err: unknown) => {
      if (!(err instanceof ConflictError) && !(err instanceof NotFoundError)) throw err;
    });
    (deps.fleet as Partial<Pick<Fleet, 'forget'>>).forget?.(node.id);
    return done();
  }
  try {
    for (const w of plan.disks) await writeDisk(deps.store, node, w, o.disks.get(w.id)?.metadata.resourceVersion);
  } catch (err) {
    if (err instanceof ConflictError) return requeueAfter(0);
    throw err;
  }
  return applyPlan(
    {
      // The run goes out before its request is acknowledged in status: a crash in between sends
      // it again rather than losing the request.
      stepFirst: true,
      act: async (obs, step): Promise<StartRequest | Result> => {
        const target = runTarget(obs.node);
        if (step.taskName === PowerTask.on || step.taskName === PowerTask.off) return powerRun(deps, obs, step, target);
        const take = plan.lease.take;
        // The lease first, by CAS against the leases Ceph was asked about: not granted (another
        // took a place meanwhile) → look again with what is held now.
        if (take && !(await takeLease(deps.store, take.request, obs.nowIso, { basis: take.basis, stale: take.stale, bus: deps.bus })))
          return requeueAfter(0);
        if (isFenceTask(step.taskName)) return fenceRun(deps, obs, { ...step, taskName: step.taskName }, target);
        if (step.taskName === RolloutTask.restart)
          return {
            taskName: step.taskName,
            target,
            node: { id: obs.node.id, hostname: obs.node.spec.hostname },
            args: { config: step.config, daemons: step.daemons },
            attempt: step.attempt,
            timeoutMs: deps.runTimeoutMs,
          };
        if (isMaintenanceTask(step.taskName)) return maintenanceRun(deps, obs, step, target);
        return {
          taskName: step.taskName,
          target,
          node: { id: obs.node.id, hostname: obs.node.spec.hostname },
          args: { request: step.request, bootId: step.bootId },
          attempt: step.attempt,
          timeoutMs: deps.runTimeoutMs,
        };
      },
      start: async (req) => {
        const run = await deps.tasks.start(req);
        for (const line of plan.lease.notes) deps.notes?.note(run.id, 'info', line);
        if (req.taskName === FenceTask.cycle) {
          const silentSince = new Date(Number(req.args?.request)).toISOString();
          const { hostname, ...names } = namesOf(o.node);
          deps.bus.publish('node.fenced', {
            nodeId: o.node.id,
            hostname: hostname ?? o.node.spec.hostname,
            name: o.node.name,
            ...names,
            silentSince,
            attempt: req.attempt ?? 1,
            ...(o.node.metadata.requestId ? { requestId: o.node.metadata.requestId } : {}),
          });
        }
        return run;
      },
      write: (obs, status) => writeNode(deps, obs, plan, status),
      recheckMs: deps.heartbeatTimeoutMs,
    },
    o,
    plan,
  );
}

/** Maintenance's steps: noout on the master (through Ceph), the daemons' stop and start on the
 * node's agent; each with the lease it is taken under. */
function maintenanceRun(
  deps: NodeLoopDeps,
  o: NodeObserved,
  step: NodePlan['step'] & object,
  target: StartRequest['target'],
): StartRequest {
  const lease = step.lease ?? o.nowIso;
  const base = { target, attempt: step.attempt, timeoutMs: deps.runTimeoutMs };
  if (step.taskName === MaintenanceTask.noout) {
    const host = o.node.spec.hostname;
    const set = step.set === true;
    const osds = step.osds ?? [];
    return {
      ...base,
      taskName: step.taskName,
      node: null,
      args: { host, set, lease, osds },
      script: nooutScript(deps.ceph, host, set, osds),
    };
  }
  return { ...base, taskName: step.taskName, node: { id: o.node.id, hostname: o.node.spec.hostname }, args: { lease } };
}

/** A BMC step, run by the master: the node's BMC as its spec says now. The plan starts one only
 * for a node with a BMC; should it be gone meanwhile, the run fails saying so. */
function powerRun(deps: NodeLoopDeps, o: NodeObserved, step: NodePlan['step'] & object, target: StartRequest['target']): StartRequest {
  const bmcSpec = o.node.spec.bmc;
  const grace = step.graceMs ?? 0;
  const script: Script =
    !bmcSpec || !deps.bmc
      ? () => Promise.reject(new Error(!bmcSpec ? 'the node has no BMC declared' : 'this Quarry has no BMC client'))
      : step.taskName === PowerTask.on
        ? powerOnScript(deps.bmc, bmcTarget(bmcSpec))
        : powerOffScript(deps.bmc, bmcTarget(bmcSpec), grace, deps.bmcPollMs ?? 2_000);
  return {
    taskName: step.taskName,
    target,
    node: null,
    args: step.taskName === PowerTask.off ? { request: step.request, graceMs: grace } : { request: step.request },
    attempt: step.attempt,
    // The power-off check waits out the grace, then forces and checks again.
    timeoutMs: Math.max(deps.runTimeoutMs, grace + 120_000),
    script,
  };
}

/** The node's fields, then what operators are told (only once the write went through). */
async function writeNode(deps: NodeLoopDeps, o: NodeObserved, plan: NodePlan, status: NodeStatusFields): Promise<Result | undefined> {
  const { node } = o;
  // The lease goes back before the status stops saying it is held: a crash in between leaves a
  // status that still claims it (the lease is then found stale), never a lease nobody gives back.
  if (plan.lease.release) await giveBack(deps.store, { kind: Kind.Node, id: node.id }, deps.bus);
  try {
    const full = withOrphaned(status, node.metadata.source, node.metadata.generation, deps.clock.iso());
    await writeOwned<NodeStatusFields>(deps.store, NODE_STATUS, node.id, full, { resourceVersion: node.metadata.resourceVersion });
  } catch (err) {
    // The node changed while we looked: look again with what is there now.
    if (err instanceof ConflictError) return requeueAfter(0);
    throw err;
  }
  if (plan.announce) {
    deps.bus.publish('node.approval.required', {
      nodeId: node.id,
      hostname: node.spec.hostname,
      name: node.name,
      macs: [...node.spec.macs],
    });
  }
  if (changedForOperators(node.status, status)) {
    const why = whyOf(status);
    deps.bus.publish('node.state.changed', {
      nodeId: node.id,
      status: status.phase ?? 'discovered',
      hostname: node.spec.hostname,
      name: node.name,
      ...yamlNames(node),
      ...(why ? { reason: why.reason, message: why.message } : {}),
    });
  }
  return undefined;
}

/** What an operator reads first: what blocks the node, else why it is (not) ready. */
function whyOf(s: NodeStatusFields): { reason: string; message: string } | undefined {
  const c = s.conditions ?? [];
  return c.find((x) => x.type === 'Blocked' && x.status === 'True') ?? c.find((x) => x.type === 'Ready');
}

function changedForOperators(before: NodeStatusFields, after: NodeStatusFields): boolean {
  if (before.phase !== after.phase) return true;
  // A node held back (or let go) says so, even with its phase unchanged.
  const blocked = (s: NodeStatusFields) => {
    const b = s.conditions?.find((x) => x.type === 'Blocked' && x.status === 'True');
    return b ? `${b.reason}\n${b.message}` : '';
  };
  if (blocked(before) !== blocked(after)) return true;
  const a = before.daemons ?? {};
  const b = after.daemons ?? {};
  return NODE_DAEMON_TYPES.some((t) => a[t] !== b[t]) || (a.osds ?? []).join() !== (b.osds ?? []).join();
}

/** The node's own fields, CAS on the observation they were planned from: a node that changed
 * meanwhile is looked at again rather than written from an old view. */
async function writeDisk(store: Store, node: Doc<NodeSpec, NodeStatusFields>, w: DiskWrite, rv: number | undefined): Promise<void> {
  if (w.create) {
    try {
      await store.create({ kind: Kind.Disk, id: w.id, name: `${node.spec.hostname}/${w.create.serial}`, spec: w.create, status: w.status });
      return;
    } catch (err) {
      if (!(err instanceof ConflictError)) throw err;
    }
  }
  await writeOwned<DiskStatusFields>(store, DISK_HARDWARE_STATUS, w.id, w.status, rv === undefined ? {} : { resourceVersion: rv });
}
