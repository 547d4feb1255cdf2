// The OSD loop's pure half, keyed by Disk. A disk whose spec asks for an OSD gets one: the
// master registers it with the monitors (`osd new` with a uuid chosen once and stored first, so
// a retry gets the same id back), then the node's agent prepares BlueStore on the whole disk
// and starts it. One that was created and stops running is started again. Gates: nothing on a
// node that is not active or a disk that is absent, nothing without monitor quorum, and the
// disk must be eligible until the OSD exists on it.
import { DAEMONS, Daemon, Step } from '../../src/catalogue/index.js';
import type { DaemonState } from '../../src/model/kinds.js';
import { DiskReason, diskReasons, type DiskDoc, type NodeDoc } from '../../src/model/operations.js';
import { state } from '../shared/daemon-state.js';
import { isActive, nextAttempt, type RunInfo } from '../shared/runs.js';
import { completedAt, gateOf, graceWait, type LoopPlan } from '../../src/runtime/loop-kit/index.js';

export const OsdTask = { new: Step.osdNew, create: Step.osdCreate, restart: Step.daemonRestart } as const;

/** The caps `ceph-volume` gives an OSD's key (the bootstrap-osd profile). */
export const OSD_CAPS: Readonly<Record<string, string>> = DAEMONS.osd.caps;

export interface OsdObserved {
  disk: DiskDoc;
  node: NodeDoc | undefined;
  quorum: boolean;
  /** The newest run of each OSD task for this disk. */
  newRun: RunInfo | null;
  createRun: RunInfo | null;
  restartRun: RunInfo | null;
  now: number;
  retryBaseMs: number;
  startGraceMs: number;
}

export interface CreateArgs {
  osdId: number;
  uuid: string;
  devicePath: string;
  sizeBytes: number;
  deviceClass: DeviceClass;
}

export type OsdStep =
  | { kind: 'assign-uuid' }
  | { kind: 'new'; attempt: number; args: { uuid: string } }
  | { kind: 'create'; attempt: number; args: CreateArgs }
  | { kind: 'restart'; attempt: number; args: { daemon: typeof Daemon.osd; id: number } };

/** The disk's status.osd this loop decides, the step, a wait, a gate; and the osdId to record. */
export interface OsdPlan extends LoopPlan<DaemonState | undefined, OsdStep> {
  /** What status.osdId should say: set once the agent reports the OSD running, then kept. */
  osdId: number | null;
}

export type DeviceClass = 'hdd' | 'ssd' | 'nvme';

/** CRUSH device class as ceph-volume would guess it: by interface first, then rotation. */
export function deviceClassOf(d: DiskDoc): DeviceClass {
  if (d.status.interface === 'nvme') return 'nvme';
  return d.status.rotational ? 'hdd' : 'ssd';
}

/** The OSD id of this disk: recorded in status, or what `osd new` answered for its uuid. */
export function osdIdOf(o: Pick<OsdObserved, 'disk' | 'newRun'>): number | null {
  const recorded = o.disk.status.osdId ?? null;
  if (recorded !== null) return recorded;
  const r = o.newRun;
  if (r?.state !== 'completed' || r.args.uuid !== o.disk.status.osdUuid) return null;
  const id = r.result?.osdId;
  return typeof id === 'number' && Number.isInteger(id) && id >= 0 ? id : null;
}

/** Why the disk cannot take this OSD. `holds-osd` is this very request (spec.osd), not a reason. */
export const creationReasons = (d: DiskDoc, n: NodeDoc | undefined): string[] => diskReasons(d, n).filter((r) => r !== DiskReason.holdsOsd);

const createdBy = (run: RunInfo | null, id: number): boolean => run?.state === 'completed' && run.args.osdId === id;

export function planOsd(o: OsdObserved): OsdPlan {
  const { disk, node } = o;
  const recorded = disk.status.osdId ?? null;
  const keep = { osdId: recorded };
  if (!disk.spec.osd) {
    const orphan =
      recorded === null
        ? undefined
        : state('orphaned', 'NotDesired', `osd.${recorded} is on this disk but no longer desired; removal is not automatic`);
    return { ...keep, status: orphan, step: null, requeueAfterMs: null, gate: null };
  }
  const phase = node?.status.phase ?? 'discovered';
  if (phase !== 'active')
    return gate(recorded, 'NodeNotActive', `the node is ${node ? phase : 'unknown'}; nothing is done to it until it is active`);
  if (disk.status.present === false) return gate(recorded, 'DiskAbsent', `the disk ${disk.spec.serial} is not present on the node`);
  const id = osdIdOf(o);
  if (id !== null && (node?.status.daemons?.osds ?? []).includes(id)) {
    return { osdId: id, status: state('running', 'Running', `osd.${id} runs`), step: null, requeueAfterMs: null, gate: null };
  }
  if (!o.quorum) return gate(recorded, 'WaitingForQuorum', 'waiting for monitor quorum');
  if (id !== null && (recorded !== null || createdBy(o.createRun, id))) return restartPlan(o, id);
  const reasons = creationReasons(disk, node);
  if (reasons.length > 0) return gate(recorded, 'DiskNotEligible', `the disk cannot take an OSD: ${reasons.join(', ')}`);
  const uuid = disk.status.osdUuid;
  if (!uuid)
    return {
      ...keep,
      status: state('starting', 'Registering', 'choosing the OSD uuid'),
      step: { kind: 'assign-uuid' },
      requeueAfterMs: null,
      gate: null,
    };
  if (id === null) {
    const last = o.newRun?.args.uuid === uuid ? o.newRun : null;
    return runPlan(o, 'new', last, 'registering the OSD with the monitors (osd new)', { uuid });
  }
  const last = o.createRun?.args.osdId === id ? o.createRun : null;
  const devicePath = disk.status.devicePath ?? '';
  const args: CreateArgs = { osdId: id, uuid, devicePath, sizeBytes: disk.status.capacityBytes ?? 0, deviceClass: deviceClassOf(disk) };
  return runPlan(o, 'create', last, `creating osd.${id} on ${devicePath}`, args);
}

/** Created, not running: give the agent its grace to report it, then start it again. */
function restartPlan(o: OsdObserved, id: number): OsdPlan {
  // Its creation still runs (a pid file seen during mkfs may have recorded the id): the create
  // step starts the OSD itself; a restart now would kill it while it boots.
  if (isActive(o.createRun) && o.createRun?.args.osdId === id) {
    return {
      osdId: o.disk.status.osdId ?? null,
      status: state('starting', 'Starting', `creating osd.${id} (run ${o.createRun.id})`),
      step: null,
      requeueAfterMs: null,
      gate: null,
    };
  }
  const createdAt = createdBy(o.createRun, id) ? (o.createRun?.completedAt ?? 0) : 0;
  const r = o.restartRun;
  const last = r && r.args.daemon === Daemon.osd && r.args.id === id && (r.completedAt ?? o.now) >= createdAt ? r : null;
  const since = Math.max(createdAt, completedAt(last) ?? 0);
  const wait = isActive(last) ? null : graceWait(since, o.now, o.startGraceMs);
  if (wait !== null) {
    const s = state('starting', 'WaitingForAgent', `started; waiting for the agent to report osd.${id} running`);
    return { osdId: o.disk.status.osdId ?? null, status: s, step: null, requeueAfterMs: wait, gate: null };
  }
  return runPlan(o, 'restart', last?.state === 'completed' ? null : last, `osd.${id} is not running; starting it again`, {
    daemon: Daemon.osd,
    id,
  });
}

function runPlan<K extends 'new' | 'create' | 'restart'>(
  o: OsdObserved,
  kind: K,
  last: RunInfo | null,
  message: string,
  args: Extract<OsdStep, { kind: K }>['args'],
): OsdPlan {
  const base = { osdId: o.disk.status.osdId ?? null, gate: null };
  const next = nextAttempt(last, o.now, o.retryBaseMs, message);
  if (next.kind === 'busy')
    return { ...base, status: state('starting', 'Starting', `${message} (run ${last!.id})`), step: null, requeueAfterMs: null };
  const s = state(next.failed ? 'failed' : 'starting', next.reason, next.message);
  if (next.kind === 'wait') return { ...base, status: s, step: null, requeueAfterMs: next.waitMs };
  return { ...base, status: s, step: { kind, attempt: next.attempt, args } as OsdStep, requeueAfterMs: null };
}

function gate(osdId: number | null, reason: string, message: string): OsdPlan {
  return { osdId, status: state('blocked', reason, message), step: null, requeueAfterMs: null, gate: gateOf(reason, message) };
}
