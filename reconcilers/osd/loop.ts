// The disk loop (named `osd`): keyed by Disk id, it keeps an OSD on every disk whose spec asks
// for one and carries out wipe requests. One loop for both, because both act on the same disk
// and each one's gate is the other's state (no OSD on a disk being wiped, no wipe of an OSD).
import { randomUUID } from 'node:crypto';
import { Daemon } from '../../src/catalogue/index.js';
import { CLUSTER_ID, CephKind, type ClusterSpec, type ClusterStatus } from '../../src/model/ceph-kinds.js';
import type { AnyDoc } from '../../src/model/document.js';
import { Kind, type DiskSpec, type DiskStatusFields, type NodeSpec, type NodeStatusFields } from '../../src/model/kinds.js';
import type { StartRequest } from '../../src/tasks/types.js';
import { requeueAfter, type Reconciler, type Result } from '../../src/runtime/types.js';
import { applyPlan, writeOwned, writeStatus, type LoopPlan } from '../../src/runtime/loop-kit/index.js';
import { hasQuorum, type CephLoopDeps } from '../shared/ceph-deps.js';
import { runInfo } from '../shared/runs.js';
import { OsdTask, planOsd, type OsdObserved, type OsdPlan, type OsdStep } from './plan.js';
import { osdNewScript, wipeConfirmScript } from './scripts.js';
import { DISK_OSD_STATUS, ownedStatus, type OwnedStatus } from './status.js';
import { WipeTask, planWipe, type WipeObserved, type WipePlan, type WipeStep } from './wipe.js';

export type DiskObserved = OsdObserved & WipeObserved & { nowIso: string };

/** Both steps a disk may take at once: an OSD step and a wipe step (each plan's gate keeps
 * them apart: no OSD on a disk being wiped, no wipe of an OSD). */
export interface DiskStep {
  osd: OsdStep | null;
  wipe: WipeStep | null;
}

export interface DiskPlan extends LoopPlan<OwnedStatus, DiskStep> {
  osd: OsdPlan;
  wipe: WipePlan;
}

export function planDisk(o: DiskObserved): DiskPlan {
  const osd = planOsd(o);
  const wipe = planWipe(o);
  const waits = [osd.requeueAfterMs, wipe.requeueAfterMs].filter((ms): ms is number => ms !== null);
  // A gate is looked at again on the loop's recheck delay, whatever the other plan waits for.
  const gate = osd.gate ?? wipe.gate;
  return {
    osd,
    wipe,
    status: ownedStatus(o.disk, osd, wipe, o.nowIso),
    step: osd.step || wipe.step ? { osd: osd.step, wipe: wipe.step } : null,
    requeueAfterMs: !gate && waits.length > 0 ? Math.min(...waits) : null,
    gate,
  };
}

/** A node's change (phase, the OSDs its agent reports) is news for each of its disks. */
const disksOfNode = (doc: AnyDoc): string[] => ((doc.status as NodeStatusFields | undefined)?.diskIds ?? []).slice();

export function osdLoop(deps: CephLoopDeps): Reconciler<DiskObserved, DiskPlan> {
  return {
    name: Daemon.osd,
    kind: Kind.Disk,
    dependsOn: ['node', 'cluster', Daemon.mon],
    watches: [{ kind: Kind.Node, map: disksOfNode }],
    observe: (id) => observe(deps, id),
    plan: planDisk,
    apply: (o, p) => apply(deps, o, p),
  };
}

async function observe(deps: CephLoopDeps, id: string): Promise<DiskObserved | undefined> {
  const disk = await deps.store.get<DiskSpec, DiskStatusFields>(Kind.Disk, id);
  if (!disk) return undefined;
  const [node, cluster] = await Promise.all([
    deps.store.get<NodeSpec, NodeStatusFields>(Kind.Node, disk.spec.nodeId),
    deps.store.get<ClusterSpec, ClusterStatus>(CephKind.Cluster, CLUSTER_ID),
  ]);
  const latest = (task: string) => deps.tasks.latestFor(Kind.Disk, id, task).then(runInfo);
  const [newRun, createRun, restartRun, confirmRun, wipeRun] = await Promise.all([
    latest(OsdTask.new),
    latest(OsdTask.create),
    latest(OsdTask.restart),
    latest(WipeTask.confirm),
    latest(WipeTask.wipe),
  ]);
  return {
    disk,
    node,
    quorum: hasQuorum(cluster),
    newRun,
    createRun,
    restartRun,
    confirmRun,
    wipeRun,
    now: deps.clock.now(),
    nowIso: deps.clock.iso(),
    retryBaseMs: deps.retryBaseMs,
    startGraceMs: deps.startGraceMs,
  };
}

function apply(deps: CephLoopDeps, o: DiskObserved, p: DiskPlan): Promise<Result> {
  return applyPlan<DiskObserved, OwnedStatus, DiskStep>(
    {
      write: (obs, status) => writeOwned<DiskStatusFields>(deps.store, DISK_OSD_STATUS, obs.disk.id, status).then(() => undefined),
      act: (obs, step) => act(deps, obs, step),
      start: (req) => deps.tasks.start(req),
      recheckMs: deps.blockedRecheckMs,
    },
    o,
    p,
  );
}

async function act(deps: CephLoopDeps, o: DiskObserved, step: DiskStep): Promise<StartRequest[] | Result> {
  if (step.osd?.kind === 'assign-uuid') {
    // Chosen once and stored before any `osd new`: every retry then asks with the same uuid.
    await writeStatus<DiskStatusFields>(deps.store, DISK_OSD_STATUS, o.disk.id, (s) => (s.osdUuid ? s : { ...s, osdUuid: randomUUID() }));
    return requeueAfter(0);
  }
  const runs: StartRequest[] = [];
  if (step.osd) runs.push(osdRun(deps, o, step.osd));
  if (step.wipe) runs.push(wipeRun(deps, o, step.wipe));
  return runs;
}

function base(deps: CephLoopDeps, o: DiskObserved, taskName: string, attempt: number): StartRequest {
  return {
    taskName,
    target: { kind: Kind.Disk, id: o.disk.id, generation: o.disk.metadata.generation },
    attempt,
    timeoutMs: deps.runTimeoutMs,
  };
}

function nodeRef(o: DiskObserved): { id: string; hostname: string } {
  return { id: o.disk.spec.nodeId, hostname: o.node?.spec.hostname ?? '' };
}

function osdRun(deps: CephLoopDeps, o: DiskObserved, step: Exclude<OsdStep, { kind: 'assign-uuid' }>): StartRequest {
  const req = base(deps, o, OsdTask[step.kind], step.attempt);
  if (step.kind === 'new') return { ...req, args: step.args, script: osdNewScript(deps, step.args.uuid, o.disk.spec.nodeId, step.attempt) };
  return { ...req, args: { ...step.args }, node: nodeRef(o) };
}

function wipeRun(deps: CephLoopDeps, o: DiskObserved, step: WipeStep): StartRequest {
  const req = base(deps, o, WipeTask[step.kind], step.attempt);
  if (step.kind === 'confirm') return { ...req, args: step.args, script: wipeConfirmScript(step.args.prompt) };
  return { ...req, args: step.args, node: nodeRef(o) };
}
