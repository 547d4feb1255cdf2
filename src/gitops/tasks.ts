// The task runs the loops will start for a plan's changes: what an operator wants to know before
// a merge (daemons created, OSDs drained and purged, disks to be wiped, monitors removed). Plan =
// apply: every run an apply starts is listed (a retry after a failure aside), read from what the
// loops decide by (bootstrapped or not, keys held, daemons reported); test/lab/plan-apply.test.ts
// checks it over generated sequences of changes. The names are the catalogue's (src/catalogue),
// which the loops use too, and so is whether a step is destructive (it `destroys` or `disrupts`).
import { KEYED_DAEMON_TYPES, Step, daemon, isStepName, step } from '../catalogue/index.js';
import type { ImageSpec } from '../model/image-kinds.js';
import { ImageKind } from '../model/image-kinds.js';
import { CLUSTER_ID, CephKind } from '../model/ceph-kinds.js';
import { crushChain, crushLevelsOf, failureDomainOf, locationArgs, ruleNameOf } from '../model/crush.js';
import type { DisruptionBudgetStatus } from '../model/disruption-kinds.js';
import { Kind, OsdRemoval, type DiskSpec, type DiskStatusFields, type NodeSpec } from '../model/kinds.js';
import { NetworkKind } from '../model/network-kinds.js';
import { holdsLiveOsd, isAdoptable, type DiskDoc, type NodeDoc } from '../model/operations.js';
import { StorageKind } from '../model/storage-kinds.js';
import { fsDeletionQuestion, rgwUserDeletionQuestion, type Holding } from '../model/deletion.js';
import { DisruptionLeaseKind } from '../model/disruption-kinds.js';
import { plannedDisruptions } from './disruptions.js';
import type { Change } from './types.js';
import type { World } from './world.js';

export const TaskKind = {
  dhcpStart: Step.dhcpStart,
  monBootstrap: Step.monBootstrap,
  monJoin: Step.monJoin,
  // The cluster's opener puts client.admin into the new auth database (reconcilers/mon/admin-key.ts).
  monImportAdminKey: Step.monImportAdminKey,
  // A monitor's removal: out of the monmap (master), then its daemon and store off the node.
  monmapRemove: Step.monmapRemove,
  monRemove: Step.monRemove,
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
  // A Cluster field daemons read only at start changed (src/model/daemon-config.ts).
  configRestart: Step.configRestart,
  // A file's `power` changed against the stored one (reconcilers/node/power.ts).
  shutdown: Step.nodeShutdown,
  bmcPowerOff: Step.bmcPowerOff,
  bmcPowerOn: Step.bmcPowerOn,
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
  /** For a filesystem's deletion: its pools, with the objects and bytes in them when Ceph said
   * (`ceph df`) at plan time. */
  pools?: Holding[];
  /** For a monitor's removal: the monitor, and the monmap and quorum it leaves. */
  quorumAfter?: QuorumAfter;
  /** For a data-bearing deletion: the question an operator is asked first, naming what goes
   * as far as the stored status knows it (the run asks with what Ceph says then). */
  question?: string;
}

/** A monitor's removal leaves `monitors` in the monmap, `up` of them in quorum (as the cluster
 * loop last saw it); `majority` of them must stay up. The loop refuses a removal that would
 * leave fewer than that (QuorumWouldBreak): it waits instead. */
export interface QuorumAfter {
  monitor: string;
  monitors: number;
  up: number;
  majority: number;
}

/** What Ceph says is on each OSD, by id (from `osd df`). */
export type OsdUsage = ReadonlyMap<number, { bytes: number; pgs: number }>;
/** What Ceph says is in each pool, by name (from `ceph df`). */
export type PoolUsage = ReadonlyMap<string, { objects: number; bytes: number }>;

/** The tasks with the objects and bytes in the pools a filesystem's deletion destroys, as far
 * as `usage` knows them; its question then names them too (as the run will ask). */
export function withPoolUsage(tasks: PlannedTask[], usage: PoolUsage): PlannedTask[] {
  return tasks.map((t) => {
    if (!t.pools || !t.question) return t;
    const pools = t.pools.map((p) => {
      const u = usage.get(p.name);
      return u ? { name: p.name, objects: u.objects, bytes: u.bytes } : p;
    });
    // A Filesystem object is named as its filesystem (src/gitops/resolve.ts).
    return { ...t, pools, question: fsDeletionQuestion(t.name, pools) };
  });
}

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

/** A node's `power` changed against the stored one: off is the agent's soft power-off inside
 * the budget, noout around it when it runs OSDs, and its BMC's check that the power went off;
 * on is its BMC powering it on (no BMC: Blocked NoPowerControl, no run). */
function powerTasks(
  was: NodeSpec['power'] | undefined,
  now: NodeSpec['power'],
  node: NodeDoc | undefined,
  add: (task: string) => void,
): void {
  if (!node || was === now) return;
  const osds = (node.status.daemons?.osds ?? []).length > 0;
  if (now === 'off' && node.status.phase === 'active') {
    const steps = [TaskKind.shutdown, ...(node.spec.bmc ? [TaskKind.bmcPowerOff] : [])];
    (osds ? [TaskKind.osdNoout, ...steps, TaskKind.osdNoout] : steps).forEach((x) => add(x));
  }
  if (now === 'on' && node.status.phase === 'offline' && node.spec.bmc) add(TaskKind.bmcPowerOn);
}

/** The node's maintenance lease stopped OSDs (noout was set under it); no lease: as if it did. */
function leaseStoppedOsds(world: World, nodeId: string): boolean {
  const leases = (world.budget?.status as DisruptionBudgetStatus | undefined)?.leases ?? [];
  const mine = leases.find((l) => l.holderId === nodeId);
  return mine?.stops === undefined || mine.stops.osds.length > 0;
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

type Add = (task: string, extra?: Pick<PlannedTask, 'wipes' | 'affects' | 'moves' | 'question' | 'quorumAfter' | 'pools'>) => void;

const nodeSpecOf = (c: Change, side: 'before' | 'after'): NodeSpec | null => (specOf(c, side) as unknown as NodeSpec | null) ?? null;
const addsMon = (c: Change): boolean =>
  c.kind === Kind.Node && !nodeSpecOf(c, 'before')?.daemons.mon && !!nodeSpecOf(c, 'after')?.daemons.mon;

/** The monitors that make the cluster's first monmap, when no monitor exists yet: those this
 * plan declares on active nodes with an address bootstrap together, and the first by hostname
 * opens the cluster and imports client.admin (reconcilers/mon/plan.ts says why together). A
 * monitor on a node not active yet joins their quorum later. */
function firstMonitors(changes: Change[], world: World): { members: Set<string>; opener: string | null } {
  const status = world.cluster?.status as { bootstrapped?: boolean } | undefined;
  const exists =
    status?.bootstrapped === true || world.nodes.some((n) => n.spec.daemons.mon !== undefined || n.status.daemons?.mon === true);
  if (exists) return { members: new Set(), opener: null };
  const members = changes
    .filter(addsMon)
    .map((c) => ({ id: c.id, hostname: nodeSpecOf(c, 'after')!.hostname, node: world.nodes.find((n) => n.id === c.id) }))
    .filter((m) => m.node?.status.phase === 'active' && m.node.status.ip)
    .sort((x, y) => x.hostname.localeCompare(y.hostname));
  return { members: new Set(members.map((m) => m.id)), opener: members[0]?.id ?? null };
}

/** The monitors once every change is made: node id → hostname. */
function monitorsAfter(changes: Change[], world: World): Map<string, string> {
  const out = new Map(world.nodes.filter((n) => n.spec.daemons.mon !== undefined).map((n) => [n.id, n.spec.hostname]));
  for (const c of changes.filter((x) => x.kind === Kind.Node)) {
    const after = nodeSpecOf(c, 'after');
    if (after?.daemons.mon) out.set(c.id, after.hostname);
    else out.delete(c.id);
  }
  return out;
}

/** A monitor no longer desired: out of the monmap if it is in it (it was made), then its daemon
 * and store off the node (reconcilers/mon/removal.ts). */
function monRemoval(c: Change, world: World, mons: Map<string, string>, add: Add): void {
  const node = world.nodes.find((n) => n.id === c.id);
  const name = nodeSpecOf(c, 'before')!.hostname;
  const quorum = (world.cluster?.status as { quorum?: string[] } | undefined)?.quorum ?? [];
  const made = quorum.includes(name) || node?.status.daemons?.mon === true || node?.status.ceph?.mon?.phase === 'running';
  const left = [...mons.values()];
  const quorumAfter = {
    monitor: name,
    monitors: left.length,
    up: quorum.filter((q) => left.includes(q)).length,
    majority: Math.floor(left.length / 2) + 1,
  };
  if (made) add(TaskKind.monmapRemove, { quorumAfter });
  add(TaskKind.monRemove, { quorumAfter });
}

export function plannedTasks(changes: Change[], world: World): PlannedTask[] {
  const out: PlannedTask[] = [];
  const first = firstMonitors(changes, world);
  const mons = monitorsAfter(changes, world);
  // The opener's import of client.admin follows every first monitor's bootstrap.
  let opener: Add | null = null;
  for (const c of changes) {
    const add: Add = (task, extra = {}) =>
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
        if (!a.mon && b.mon) {
          // Declared again while being taken out of the monmap: its old store is removed once
          // that is done, and a new one joins (reconcilers/mon/removal.ts, recreation; the reason
          // is removal.ts's REMOVING_FROM_MONMAP).
          const removing = world.nodes.find((n) => n.id === c.id)?.status.ceph?.mon?.reason === 'RemovingFromMonmap';
          if (removing) add(TaskKind.monRemove);
          add(first.members.has(c.id) ? TaskKind.monBootstrap : TaskKind.monJoin);
          if (first.opener === c.id) opener = add;
        }
        if (a.mon && !b.mon) monRemoval(c, world, mons, add);
        for (const t of KEYED_DAEMON_TYPES) {
          const { key, start, stop } = daemon(t).steps;
          if (!a[t] && b[t]) {
            // A daemon declared again reuses the key Quarry kept (reconcilers/daemon/plan.ts).
            if (key && !world.keys?.has(daemon(t).entity((now as unknown as NodeSpec).hostname))) add(key);
            if (start) add(start);
          }
          if (a[t] && !b[t] && stop) add(stop);
        }
        // The cluster loop places hosts: the run is the Cluster's.
        const moves = crushMove(c, world);
        if (moves) {
          const name = world.cluster?.name ?? CLUSTER_ID;
          const task = TaskKind.crushPlaceHost;
          out.push({ task, kind: CephKind.Cluster, id: CLUSTER_ID, name, destructive: isDestructive(task), moves });
        }
        // Maintenance: noout then the stop (inside the disruption budget); leaving, the start.
        const [inBefore, inAfter] = [(was as NodeSpec | null)?.maintenance === true, (now as unknown as NodeSpec).maintenance === true];
        // noout only for OSDs: entering, those the node reports; leaving, those its lease stopped.
        const node = world.nodes.find((n) => n.id === c.id);
        if (!inBefore && inAfter)
          [...((node?.status.daemons?.osds ?? []).length > 0 ? [TaskKind.osdNoout] : []), TaskKind.daemonsStop].forEach((x) => add(x));
        if (inBefore && !inAfter)
          [TaskKind.daemonsStart, ...(leaseStoppedOsds(world, c.id) ? [TaskKind.osdNoout] : [])].forEach((x) => add(x));
        powerTasks(
          (was as NodeSpec | null)?.power,
          (now as unknown as NodeSpec).power,
          world.nodes.find((n) => n.id === c.id),
          add,
        );
        break;
      }
      case CephKind.Cluster: {
        const [a, b] = [failureDomainOf(was ?? undefined), failureDomainOf(now)];
        if (a !== b) add(TaskKind.crushRule, { moves: `Quarry's pools go to rule ${ruleNameOf(b)}: replicas across ${b}s, not ${a}s` });
        // A field daemons read only at start: each node running them restarts them, in the
        // disruption budget's waves (the dry run's `disruptions` list the same nodes).
        for (const w of plannedDisruptions(changes, world).filter((x) => x.kind === DisruptionLeaseKind.daemonRestart))
          w.nodeIds.forEach((id, i) => {
            const name = world.nodes.find((n) => n.id === id)?.name ?? w.nodes[i]!;
            out.push({ task: TaskKind.configRestart, kind: Kind.Node, id, name, destructive: isDestructive(TaskKind.configRestart) });
          });
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
          const pools = poolsKnown(c, now);
          const question = fsDeletionQuestion(String(now.name), pools);
          [TaskKind.fsDeleteConfirm, TaskKind.fsDelete].forEach((x) => add(x, { question, pools }));
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
  opener?.(TaskKind.monImportAdminKey);
  return out;
}
