// The kinds of task runs the loops will schedule for a plan's changes: what an operator wants to
// know before a merge (daemons created, OSDs drained and purged, disks to be wiped). The names
// are the catalogue's (src/catalogue), which the loops use too, and so is whether a step is
// destructive (it `destroys` or `disrupts` something).
import { KEYED_DAEMON_TYPES, Step, daemon, isStepName, step } from '../catalogue/index.js';
import type { ImageSpec } from '../model/image-kinds.js';
import { ImageKind } from '../model/image-kinds.js';
import { CephKind } from '../model/ceph-kinds.js';
import { crushChain, crushLevelsOf, failureDomainOf, locationArgs, ruleNameOf } from '../model/crush.js';
import { Kind, OsdRemoval, type DiskSpec, type DiskStatusFields, type NodeSpec } from '../model/kinds.js';
import { NetworkKind } from '../model/network-kinds.js';
import { holdsLiveOsd, isAdoptable, type DiskDoc } from '../model/operations.js';
import { StorageKind } from '../model/storage-kinds.js';
import { fsDeletionQuestion, rgwUserDeletionQuestion, type Holding } from '../model/deletion.js';
import type { Change } from './types.js';
import type { World } from './world.js';

export const TaskKind = {
  dhcpStart: Step.dhcpStart,
  monBootstrap: Step.monBootstrap,
  monJoin: Step.monJoin,
  osdNew: Step.osdNew,
  osdCreate: Step.osdCreate,
  // An OSD's removal and replacement, and a removal undone.
  osdOut: Step.osdOut,
  osdIn: Step.osdIn,
  osdStop: Step.osdStop,
  osdPurge: Step.osdPurge,
  osdDestroy: Step.osdDestroy,
  osdZap: Step.osdZap,
  fsCreate: Step.fsCreate,
  rgwUserCreate: Step.rgwUserCreate,
  // A filesystem's or an RGW user's `state: absent`: the question, then (on "yes") the deletion.
  fsDeleteConfirm: Step.fsDeleteConfirm,
  fsDelete: Step.fsDelete,
  rgwUserDeleteConfirm: Step.rgwUserDeleteConfirm,
  rgwUserDelete: Step.rgwUserDelete,
  crushPlaceHost: Step.crushPlaceHost,
  crushRule: Step.crushRule,
  imageDownload: Step.imageDownload,
  imageRemove: Step.imageRemove,
  // A node's maintenance entered or left (reconcilers/node/maintenance.ts).
  osdNoout: Step.osdNoout,
  daemonsStop: Step.nodeDaemonsStop,
  daemonsStart: Step.nodeDaemonsStart,
} as const;

/** The OSD a task acts on; bytes and PGs on it when Ceph answered (`ceph osd df`). */
export interface Affects {
  osdId: number;
  bytes?: number;
  pgs?: number;
}

export interface PlannedTask {
  task: string;
  kind: string;
  id: string;
  name: string;
  /** It destroys or takes out of service something (the catalogue's `destroys`/`disrupts`). */
  destructive: boolean;
  /** For a task that destroys what a disk holds: the disk. */
  wipes?: string;
  /** For an OSD's task: the OSD (an existing or reused id). */
  affects?: Affects;
  /** For a CRUSH task: the data Ceph moves to match. */
  moves?: string;
  /** For a data-bearing deletion: the question an operator is asked first, naming what goes
   * as far as the stored status knows it (the run asks with what Ceph says then). */
  question?: string;
}

/** What Ceph says is on each OSD, by id (from `osd df`). */
export type OsdUsage = ReadonlyMap<number, { bytes: number; pgs: number }>;

/** The tasks with what is on the OSDs they affect, as far as `usage` knows them. A creation
 * that reuses a destroyed OSD's id moves nothing off it: it says the id alone. */
export function withUsage(tasks: PlannedTask[], usage: OsdUsage): PlannedTask[] {
  const creation = new Set<string>([TaskKind.osdNew, TaskKind.osdCreate]);
  return tasks.map((t) => {
    const u = t.affects && !creation.has(t.task) ? usage.get(t.affects.osdId) : undefined;
    return u && t.affects ? { ...t, affects: { ...t.affects, bytes: u.bytes, pgs: u.pgs } } : t;
  });
}

const isDestructive = (task: string): boolean => {
  const e = isStepName(task) ? step(task) : undefined;
  return e?.destroys !== undefined || e?.disrupts !== undefined;
};

/** The id a new disk's OSD takes over: that of the disk it `replaces`, else the lowest destroyed
 * OSD of its node no other disk took yet (the OSD loop's choice). */
function reusedId(disk: DiskDoc | undefined, spec: DiskSpec, world: World): number | null {
  if (spec.replaces !== undefined) return world.disks.find((d) => d.id === spec.replaces)?.status.osdId ?? null;
  const ids = world.disks
    .filter((d) => d.spec.nodeId === spec.nodeId && d.id !== disk?.id && d.status.osd?.phase === 'destroyed' && !d.status.replacedBy)
    .map((d) => d.status.osdId ?? null)
    .filter((id): id is number => id !== null);
  return ids.length ? Math.min(...ids) : null;
}

/** A disk's tasks: a creation (with the id it reuses), an adoption (none), an undo (in), or a
 * removal or replacement of the OSD on it. */
function diskTasks(
  was: DiskSpec | null,
  now: DiskSpec,
  disk: DiskDoc | undefined,
  world: World,
  add: (task: string, extra?: Pick<PlannedTask, 'wipes' | 'affects'>) => void,
  name: string,
): void {
  const st: DiskStatusFields = disk?.status ?? {};
  const osdId = st.osdId ?? null;
  const wipes = `${st.devicePath ?? '?'} (${disk?.spec.serial ?? name})`;
  if (!was?.osd && now.osd) {
    if (disk && isAdoptable(disk, world.cluster?.spec.fsid)) {
      // Adopted as it is: nothing is created. A drain is undone: the OSD takes data again.
      const phase = st.osd?.phase;
      if (osdId !== null && (phase === 'draining' || phase === 'stopping')) add(TaskKind.osdIn, { affects: { osdId } });
      return;
    }
    const reused = reusedId(disk, now, world);
    const affects = reused === null ? {} : { affects: { osdId: reused } };
    add(TaskKind.osdNew, affects);
    add(TaskKind.osdCreate, { wipes, ...affects });
    return;
  }
  const asked = !now.osd && now.osdRemoval !== undefined && (was?.osd === true || was?.osdRemoval !== now.osdRemoval);
  if (!asked || !disk || !holdsLiveOsd(disk) || osdId === null) return;
  const affects = { affects: { osdId } };
  add(TaskKind.osdOut, affects);
  add(TaskKind.osdStop, affects);
  if (now.osdRemoval === OsdRemoval.replace) add(TaskKind.osdDestroy, affects);
  else {
    add(TaskKind.osdPurge, affects);
    add(TaskKind.osdZap, { wipes, ...affects });
  }
}

type Spec = Record<string, unknown> | null | undefined;
const specOf = (c: Change, side: 'before' | 'after'): Spec => c[side]?.spec as Spec;

/** A node with OSDs whose labels now name other CRUSH buckets: where its data goes. */
function crushMove(c: Change, world: World): string | null {
  if (!c.before || !c.after) return null;
  const levels = crushLevelsOf(world.cluster?.spec);
  const from = locationArgs(crushChain(c.before.labels, levels)).join(' ');
  const to = locationArgs(crushChain(c.after.labels, levels)).join(' ');
  const osds = world.disks.some((d) => d.spec.nodeId === c.id && (d.status.osdId ?? null) !== null);
  if (from === to || !osds) return null;
  const host = (c.after.spec as NodeSpec).hostname;
  return `host ${host} moves from ${from} to ${to}: its OSDs' data moves to match`;
}

const asksDeletion = (was: Spec, now: Spec): boolean => now?.absent === true && was?.absent !== true;

/** The filesystem's pools as its stored status lists them (Ceph had them), else as declared. */
function poolsKnown(c: Change, spec: NonNullable<Spec>): Holding[] {
  const seen = (c.before?.status as { pools?: Array<{ name: string }> } | undefined)?.pools ?? [];
  const names = seen.length ? seen.map((p) => p.name) : [String(spec.metadataPool), String(spec.dataPool)];
  return names.map((name) => ({ name }));
}

export function plannedTasks(changes: Change[], world: World): PlannedTask[] {
  const out: PlannedTask[] = [];
  let monitors = world.nodes.some((n) => n.spec.daemons.mon !== undefined);
  for (const c of changes) {
    const add = (task: string, extra: Pick<PlannedTask, 'wipes' | 'affects' | 'moves' | 'question'> = {}) =>
      out.push({ task, kind: c.kind, id: c.id, name: c.name, destructive: isDestructive(task), ...extra });
    const was = specOf(c, 'before');
    const now = specOf(c, 'after');
    if (!now) continue;
    switch (c.kind) {
      case NetworkKind.Network:
        if (c.fields.length) add(TaskKind.dhcpStart);
        break;
      case ImageKind.Image: {
        const [a, b] = [(was as ImageSpec | null)?.downloaded ?? false, (now as unknown as ImageSpec).downloaded];
        if (!a && b) add(TaskKind.imageDownload);
        if (a && !b) add(TaskKind.imageRemove);
        break;
      }
      case Kind.Node: {
        const [a, b] = [(was as NodeSpec | null)?.daemons ?? {}, (now as unknown as NodeSpec).daemons];
        if (!a.mon && b.mon) add(monitors ? TaskKind.monJoin : TaskKind.monBootstrap);
        monitors ||= b.mon !== undefined;
        for (const t of KEYED_DAEMON_TYPES) {
          const { key, start, stop } = daemon(t).steps;
          if (!a[t] && b[t]) {
            if (key) add(key);
            if (start) add(start);
          }
          if (a[t] && !b[t] && stop) add(stop);
        }
        const moves = crushMove(c, world);
        if (moves) add(TaskKind.crushPlaceHost, { moves });
        // Maintenance: noout then the stop (inside the disruption budget); leaving, the start.
        const [inBefore, inAfter] = [(was as NodeSpec | null)?.maintenance === true, (now as unknown as NodeSpec).maintenance === true];
        if (!inBefore && inAfter) [TaskKind.osdNoout, TaskKind.daemonsStop].forEach((x) => add(x));
        if (inBefore && !inAfter) [TaskKind.daemonsStart, TaskKind.osdNoout].forEach((x) => add(x));
        break;
      }
      case CephKind.Cluster: {
        const [a, b] = [failureDomainOf(was ?? undefined), failureDomainOf(now)];
        if (a !== b) add(TaskKind.crushRule, { moves: `Quarry's pools go to rule ${ruleNameOf(b)}: replicas across ${b}s, not ${a}s` });
        break;
      }
      case Kind.Disk:
        diskTasks(
          was as DiskSpec | null,
          now as unknown as DiskSpec,
          world.disks.find((d) => d.id === c.id),
          world,
          add,
          c.name,
        );
        break;
      case StorageKind.Filesystem:
        if (c.action === 'create') add(TaskKind.fsCreate);
        if (asksDeletion(was, now)) {
          const question = fsDeletionQuestion(String(now.name), poolsKnown(c, now));
          [TaskKind.fsDeleteConfirm, TaskKind.fsDelete].forEach((x) => add(x, { question }));
        }
        break;
      case StorageKind.RgwUser:
        if (c.action === 'create') add(TaskKind.rgwUserCreate);
        if (asksDeletion(was, now)) {
          const question = rgwUserDeletionQuestion(String(now.userId), null);
          [TaskKind.rgwUserDeleteConfirm, TaskKind.rgwUserDelete].forEach((x) => add(x, { question }));
        }
        break;
    }
  }
  return out;
}
