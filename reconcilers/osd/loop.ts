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
import { applyPlan, patchOwned, writeStatus, type LoopPlan } from '../../src/runtime/loop-kit/index.js';
import { hasQuorum } from '../shared/ceph-deps.js';
import { acquireLease, drainPlace, releaseLease } from '../shared/drain-lease.js';
import { failureDomainOf } from '../shared/failure-domain.js';
import { runInfo } from '../shared/runs.js';
import { OsdTask, planOsd, type OsdObserved, type OsdPlan, type OsdStep } from './plan.js';
import { observeLifecycle, observePeers, observeReplacer, type OsdLoopDeps } from './observe.js';
import { osdDestroyScript, osdInScript, osdNewScript, osdOutScript, osdPurgeScript, wipeConfirmScript } from './scripts.js';
import { DISK_OSD_STATUS, ownedStatus, type OwnedStatus } from './status.js';
import { WipeTask, planWipe, type WipeObserved, type WipePlan, type WipeStep } from './wipe.js';
import { runTarget } from '../../src/model/object-names.js';

export type DiskObserved = OsdObserved & WipeObserved & { nowIso: string };

/** The steps a disk may take at once: an OSD step (two, the purge and the zap beside it) and a
 * wipe step (each plan's gate keeps them apart: no OSD on a disk being wiped, no wipe of an OSD). */
export interface DiskStep {
  osd: OsdStep | null;
  osdAlso?: OsdStep | null;
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
  // A gate is looked at again on the loop's recheck delay, or sooner if the gated plan says so
  // (a drain's first rechecks), whatever the other plan waits for.
  const gate = osd.gate ?? wipe.gate;
  const gated = osd.gate ? osd.requeueAfterMs : wipe.requeueAfterMs;
  return {
    osd,
    wipe,
    status: ownedStatus(o.disk, osd, wipe, o.nowIso),
    step: osd.step || wipe.step ? { osd: osd.step, ...(osd.also ? { osdAlso: osd.also } : {}), wipe: wipe.step } : null,
    requeueAfterMs: gate ? gated : waits.length > 0 ? Math.min(...waits) : null,
    gate,
  };
}

/** A node's change (phase, the OSDs its agent reports) is news for each of its disks. */
const disksOfNode = (doc: AnyDoc): string[] => ((doc.status as NodeStatusFields | undefined)?.diskIds ?? []).slice();

export function osdLoop(deps: OsdLoopDeps): Reconciler<DiskObserved, DiskPlan> {
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

async function observe(deps: OsdLoopDeps, id: string): Promise<DiskObserved | undefined> {
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
  const o: DiskObserved = {
    disk,
    node,
    quorum: hasQuorum(cluster),
    fsid: cluster?.spec.fsid ?? null,
    domain: node ? failureDomainOf(node, cluster?.spec) : null,
    newRun,
    createRun,
    restartRun,
    confirmRun,
    wipeRun,
    now: deps.clock.now(),
    nowIso: deps.clock.iso(),
    retryBaseMs: deps.retryBaseMs,
    startGraceMs: deps.startGraceMs,
    diskGoneGraceMs: deps.diskGoneGraceMs,
    recheckMs: deps.blockedRecheckMs,
  };
  // Each phase reads only what it needs: a running OSD stops here.
  o.lifecycle = await observeLifecycle(deps, o);
  o.peers = await observePeers(deps, o);
  o.replacer = await observeReplacer(deps, o);
  return o;
}

function apply(deps: OsdLoopDeps, o: DiskObserved, p: DiskPlan): Promise<Result> {
  return applyPlan<DiskObserved, OwnedStatus, DiskStep>(
    {
      write: (obs, status) => write(deps, obs, p, status),
      act: (obs, step) => act(deps, obs, step),
      start: (req) => deps.tasks.start(req),
      // The purge and the zap beside it need nothing of each other: one commit for both.
      startTogether: (step) => Boolean(step.osdAlso),
      recheckMs: deps.blockedRecheckMs,
    },
    o,
    p,
  );
}

const holder = (o: DiskObserved) => ({ kind: Kind.Disk, id: o.disk.id });

/** The lease goes back before the status says the drain is over, so a crash in between leaves
 * a status that still asks for it, never a lease nobody gives back. Then the owned fields, with
 * one care: replacedBy is also written by the claim of the disk that replaces this one, and a
 * plan made before that claim landed must not undo it. */
async function write(deps: OsdLoopDeps, o: DiskObserved, p: DiskPlan, status: OwnedStatus): Promise<undefined> {
  if (o.lifecycle?.lease?.kind === 'held' && !p.osd.lease) await releaseLease(deps.store, holder(o), deps.bus);
  const seen = o.disk.status.replacedBy;
  await writeStatus<DiskStatusFields>(deps.store, DISK_OSD_STATUS, o.disk.id, (cur) => {
    const next = patchOwned<DiskStatusFields>(DISK_OSD_STATUS, cur, status);
    if (cur.replacedBy === seen) return next;
    const { replacedBy: _planned, ...rest } = next;
    return cur.replacedBy === undefined ? rest : { ...rest, replacedBy: cur.replacedBy };
  });
  return undefined;
}

async function act(deps: OsdLoopDeps, o: DiskObserved, step: DiskStep): Promise<StartRequest[] | Result> {
  const own = step.osd ? await ownEffect(deps, o, step.osd) : null;
  if (own) return own;
  const runs: StartRequest[] = [];
  if (step.osd) runs.push(osdRun(deps, o, step.osd as RunStep));
  if (step.osdAlso) runs.push(osdRun(deps, o, step.osdAlso as RunStep));
  if (step.wipe) runs.push(wipeRun(deps, o, step.wipe));
  return runs;
}

type RunStep = Exclude<OsdStep, { kind: 'assign-uuid' | 'claim' }>;

/** The steps that are the loop's own writes, not runs (each looks again at once), and the drain
 * lease an out takes before it starts. */
async function ownEffect(deps: OsdLoopDeps, o: DiskObserved, step: OsdStep): Promise<Result | null> {
  if (step.kind === 'assign-uuid') {
    // Chosen once and stored before any `osd new`: every retry then asks with the same uuid.
    // The uuid of this cluster's BlueStore label (adoption) replaces one chosen before it was seen.
    const uuid = step.uuid;
    await writeStatus<DiskStatusFields>(deps.store, DISK_OSD_STATUS, o.disk.id, (s) =>
      uuid ? (s.osdUuid === uuid ? s : { ...s, osdUuid: uuid }) : s.osdUuid ? s : { ...s, osdUuid: randomUUID() },
    );
    return requeueAfter(0);
  }
  if (step.kind === 'claim') {
    // CAS on the old disk: only a destroyed OSD nobody claimed, with the id the plan saw.
    const me = o.disk.id;
    await writeStatus<DiskStatusFields>(deps.store, DISK_OSD_STATUS, step.oldDiskId, (s) =>
      s.replacedBy || s.osd?.phase !== 'destroyed' || s.osdId !== step.osdId ? s : { ...s, replacedBy: me },
    );
    return requeueAfter(0);
  }
  if (step.kind === 'out' && step.lease) {
    // Not granted (another drain took it meanwhile): look again, the plan then names the holder.
    const granted = await acquireLease(deps.store, holder(o), step.lease.what, o.nowIso, step.lease.stale, drainPlace(o), deps.bus);
    if (!granted) return requeueAfter(0);
  }
  return null;
}

function base(deps: OsdLoopDeps, o: DiskObserved, taskName: string, attempt: number): StartRequest {
  return {
    taskName,
    target: runTarget(o.disk),
    attempt,
    timeoutMs: deps.runTimeoutMs,
  };
}

function nodeRef(o: DiskObserved): { id: string; hostname: string } {
  return { id: o.disk.spec.nodeId, hostname: o.node?.spec.hostname ?? '' };
}

function osdRun(deps: OsdLoopDeps, o: DiskObserved, step: RunStep): StartRequest {
  const req = base(deps, o, OsdTask[step.kind], step.attempt);
  switch (step.kind) {
    case 'new': {
      const { uuid, ...opts } = step.args;
      const script = osdNewScript(deps, uuid, o.disk.spec.nodeId, step.attempt, { ...opts, ...(step.adopt ? { adopt: true } : {}) });
      return { ...req, args: { ...step.args }, script };
    }
    case 'out':
      return { ...req, args: { ...step.args }, script: osdOutScript(deps, step.args.osdId) };
    case 'in':
      return { ...req, args: { ...step.args }, script: osdInScript(deps, step.args.osdId) };
    case 'purge':
      return { ...req, args: { ...step.args }, script: osdPurgeScript(deps, step.args.osdId) };
    case 'destroy':
      return { ...req, args: { ...step.args }, script: osdDestroyScript(deps, step.args.osdId, step.attempt) };
    case 'create':
    case 'restart':
    case 'stop':
    case 'zap':
      return { ...req, args: { ...step.args }, node: nodeRef(o) };
  }
}

function wipeRun(deps: OsdLoopDeps, o: DiskObserved, step: WipeStep): StartRequest {
  const req = base(deps, o, WipeTask[step.kind], step.attempt);
  if (step.kind === 'confirm') return { ...req, args: step.args, script: wipeConfirmScript(step.args.prompt) };
  return { ...req, args: step.args, node: nodeRef(o) };
}
