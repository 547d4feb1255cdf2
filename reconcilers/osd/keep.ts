// A disk whose spec asks for an OSD keeps one: the master registers it with the monitors (`osd
// new` with a uuid chosen once and stored first, so a retry gets the same id back; a destroyed
// id of the node when this disk replaces a dead one), then the node's agent prepares BlueStore
// on the whole disk and starts it. One this cluster's label says is already there is adopted
// (adopt.ts), never wiped. One that was created and stops running is started again. A disk
// whose spec asks for none leaves an OSD on it running, reported `orphaned`.
import { Daemon } from '../../src/catalogue/index.js';
import { getCondition } from '../../src/runtime/conditions.js';
import { completedAt, graceWait } from '../../src/runtime/loop-kit/index.js';
import { isActive, type RunInfo } from '../shared/runs.js';
import { nodeNotActive } from '../shared/node-active.js';
import { adoptionBlock, creationReasons, labelOfThisCluster } from './adopt.js';
import { entry } from './history.js';
import { deviceClassFor, gatePlan, isoAt, osdState, recordedId, statePlan, stepPlan } from './plan-kit.js';
import type { CreateArgs, NewArgs, OsdObserved, OsdPlan, OsdStep } from './types.js';
import { replacementOf } from './replace.js';

/** While a disk is gone, the condition that says since when (the dead-disk grace counts from it). */
export const PRESENT = 'Present';

/** When the disk was first seen gone (its Present=False condition), else now. */
export function goneSince(o: Pick<OsdObserved, 'disk' | 'now'>): number {
  const c = getCondition(o.disk.status.conditions, PRESENT);
  const at = c?.status === 'False' ? Date.parse(c.lastTransitionTime) : NaN;
  return Number.isFinite(at) ? at : o.now;
}

/** The create run of this OSD: its id and the disk's uuid. Ceph gives a purged id out again, so
 * after a removal and a new declaration the old OSD's run must not pass for the new one's. */
const createOf = (o: Pick<OsdObserved, 'createRun' | 'disk'>, id: number): RunInfo | null =>
  o.createRun?.args.osdId === id && o.createRun.args.uuid === o.disk.status.osdUuid ? o.createRun : null;
const createdBy = (o: Pick<OsdObserved, 'createRun' | 'disk'>, id: number): boolean => createOf(o, id)?.state === 'completed';

/** An OSD on a disk nobody asks one of: reported, left running. A finished removal stays shown. */
export function unmanagedPlan(o: OsdObserved): OsdPlan {
  const recorded = recordedId(o);
  const keep = { osdId: recorded, step: null, requeueAfterMs: null, gate: null };
  if (recorded !== null) {
    const how = 'declare it again (osd: true) to keep it, or remove it (state: absent, ceph.remove-osd)';
    return {
      ...keep,
      status: osdState('orphaned', 'NotDesired', `osd.${recorded} is on this disk but no longer desired; left running: ${how}`),
    };
  }
  const cur = o.disk.status.osd;
  return { ...keep, status: cur && (cur.phase === 'removed' || cur.phase === 'replaced') ? cur : undefined };
}

export function keepPlan(o: OsdObserved, id: number | null): OsdPlan {
  const p = keepInner(o, id);
  const recorded = recordedId(o);
  // An orphan declared again is adopted as it is: no step, no restart, only this entry.
  if (o.disk.status.osd?.phase !== 'orphaned' || recorded === null) return p;
  const adopted = entry(isoAt(o), 'adopted', recorded, `osd.${recorded} adopted: declared again while it ran unowned`);
  return { ...p, history: [adopted, ...(p.history ?? [])] };
}

function keepInner(o: OsdObserved, id: number | null): OsdPlan {
  const { disk, node } = o;
  const recorded = recordedId(o);
  const keep = { osdId: recorded };
  const inactive = nodeNotActive(node?.status.phase, node !== undefined);
  if (inactive) return gatePlan('blocked', inactive.reason, inactive.message, keep);
  if (disk.status.present === false) return absentPlan(o, recorded);
  if (id !== null && (node?.status.daemons?.osds ?? []).includes(id)) {
    return statePlan('running', 'Running', `osd.${id} runs`, { osdId: id, history: recorded === null ? [firstEntry(o, id)] : [] });
  }
  if (!o.quorum) return gatePlan('blocked', 'WaitingForQuorum', 'waiting for monitor quorum', keep);
  if (id !== null && (recorded !== null || createdBy(o, id))) return restartPlan(o, id);
  const label = labelOfThisCluster(o);
  const reasons = creationReasons(disk, node, label !== null);
  const foreign = disk.status.label && !label ? `; its BlueStore label is another cluster's (fsid ${disk.status.label.fsid})` : '';
  if (reasons.length > 0)
    return gatePlan('blocked', 'DiskNotEligible', `the disk cannot take an OSD: ${reasons.join(', ')}${foreign}`, keep);
  const uuid = disk.status.osdUuid;
  if (label && id === null && uuid !== label.osdUuid) {
    const message = `this cluster's osd.${label.osdId} is on the disk: adopting it (uuid ${label.osdUuid})`;
    return statePlan('starting', 'Adopting', message, { ...keep, step: { kind: 'assign-uuid', uuid: label.osdUuid } });
  }
  if (!uuid) return statePlan('starting', 'Registering', 'choosing the OSD uuid', { ...keep, step: { kind: 'assign-uuid' } });
  if (id === null) return registerPlan(o, uuid, label !== null);
  const last = createOf(o, id);
  const devicePath = disk.status.devicePath ?? '';
  const args: CreateArgs = { osdId: id, uuid, devicePath, sizeBytes: disk.status.capacityBytes ?? 0, deviceClass: deviceClassFor(disk) };
  return startStep(o, 'create', last, `creating osd.${id} on ${devicePath}`, { args }, keep);
}

/** `osd new`: for this cluster's label, the id Ceph knows for its uuid; for a disk that replaces
 * a dead one, that one's destroyed id (claimed first); else a new id. */
function registerPlan(o: OsdObserved, uuid: string, adopt: boolean): OsdPlan {
  const keep = { osdId: recordedId(o) };
  const last = o.newRun?.args.uuid === uuid ? o.newRun : null;
  if (adopt) {
    const blocked = adoptionBlock(o, last);
    if (blocked) return gatePlan('blocked', 'ForeignOsd', blocked, keep);
    return startStep(o, 'new', last, `looking up the OSD of uuid ${uuid} (osd dump)`, { args: { uuid }, adopt: true }, keep);
  }
  const deviceClass = deviceClassFor(o.disk);
  const r = isActive(last) ? null : replacementOf(o);
  if (r?.kind === 'wait') {
    const old = `osd.${r.old.status.osdId ?? '?'} on ${r.old.spec.serial}`;
    return gatePlan('blocked', 'WaitingForReplacedOsd', `this disk replaces ${old}, which is not destroyed yet`, keep);
  }
  if (r?.kind === 'claim') {
    const message = `taking over the destroyed osd.${r.osdId} of ${r.old.spec.serial}`;
    return statePlan('starting', 'Claiming', message, { ...keep, step: { kind: 'claim', oldDiskId: r.old.id, osdId: r.osdId } });
  }
  const reuse = r?.kind === 'claimed' ? r.osdId : (last?.args.id as number | undefined);
  const args: NewArgs = reuse === undefined ? { uuid, deviceClass } : { uuid, id: reuse, deviceClass };
  const what =
    reuse === undefined
      ? 'registering the OSD with the monitors (osd new)'
      : `registering osd.${reuse} again for this disk (osd new, same id)`;
  return startStep(o, 'new', last, what, { args }, keep);
}

/** The entry of an OSD's first report: created here, adopted from its label, or replacing one. */
function firstEntry(o: OsdObserved, id: number) {
  const at = isoAt(o);
  const r = replacementOf(o);
  if (r?.kind === 'claimed' && r.osdId === id)
    return entry(at, 'replaces', id, `osd.${id} recreated here in place of ${r.old.spec.serial}`, r.old.spec.serial);
  const label = labelOfThisCluster(o);
  if (label && label.osdUuid === o.disk.status.osdUuid) return entry(at, 'adopted', id, `osd.${id} adopted from its BlueStore label`);
  return entry(at, 'created', id, `osd.${id} created`);
}

/** Gone from an active node: blocked; an OSD's disk gone past the grace is dead (remove.ts). */
function absentPlan(o: OsdObserved, recorded: number | null): OsdPlan {
  const what = `the disk ${o.disk.spec.serial} is not present on the node`;
  if (recorded === null || o.diskGoneGraceMs === undefined) return gatePlan('blocked', 'DiskAbsent', what, { osdId: recorded });
  const deadline = new Date(goneSince(o) + o.diskGoneGraceMs).toISOString();
  return gatePlan('blocked', 'DiskAbsent', `${what}; osd.${recorded} is taken out and destroyed if it is still gone at ${deadline}`, {
    osdId: recorded,
  });
}

/** Created, not running: give the agent its grace to report it, then start it again. */
function restartPlan(o: OsdObserved, id: number): OsdPlan {
  const keep = { osdId: recordedId(o) };
  // Its creation still runs (a pid file seen during mkfs may have recorded the id): the create
  // step starts the OSD itself; a restart now would kill it while it boots.
  const create = createOf(o, id);
  if (create && isActive(create)) return statePlan('starting', 'Starting', `creating osd.${id} (run ${create.id})`, keep);
  const createdAt = create?.state === 'completed' ? (create.completedAt ?? 0) : 0;
  const r = o.restartRun;
  const last = r && r.args.daemon === Daemon.osd && r.args.id === id && (r.completedAt ?? o.now) >= createdAt ? r : null;
  const since = Math.max(createdAt, completedAt(last) ?? 0);
  const wait = isActive(last) ? null : graceWait(since, o.now, o.startGraceMs);
  if (wait !== null) {
    const s = osdState('starting', 'WaitingForAgent', `started; waiting for the agent to report osd.${id} running`);
    return { ...keep, status: s, step: null, requeueAfterMs: wait, gate: null };
  }
  return restartStep(o, id, last?.state === 'completed' ? null : last, `osd.${id} is not running; starting it again`, 'starting', keep);
}

/** `ceph.daemon.restart` of the OSD: in the create steps' words while starting (startStep),
 * the lifecycle's while a withdrawn removal restarts what it stopped. */
export function restartStep(
  o: OsdObserved,
  id: number,
  last: RunInfo | null,
  message: string,
  phase: 'starting' | 'draining' | 'stopping',
  keep: { osdId: number | null },
): OsdPlan {
  const step = { args: { daemon: Daemon.osd, id } };
  return phase === 'starting'
    ? startStep(o, 'restart', last, message, step, keep)
    : stepPlan(o, phase, 'restart', last, message, step, keep);
}

/** A creation step as operators know it: `Starting` while it runs, `failed` once it keeps failing
 * (retries go on), `RetryBackoff` between attempts. */
function startStep<K extends 'new' | 'create' | 'restart'>(
  o: OsdObserved,
  kind: K,
  last: RunInfo | null,
  message: string,
  step: Omit<Extract<OsdStep, { kind: K }>, 'attempt' | 'kind'>,
  keep: { osdId: number | null },
): OsdPlan {
  const p = stepPlan(o, 'starting', kind, last, message, step, keep);
  const { failing, ...rest } = p;
  const s = p.status ?? osdState('starting', 'Starting', message);
  return { ...rest, status: osdState(failing ? 'failed' : 'starting', s.reason === 'InProgress' ? 'Starting' : s.reason, s.message) };
}
