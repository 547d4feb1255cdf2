// The kinds of task runs the loops will schedule for a plan's changes: what an operator wants to
// know before a merge (daemons created, disks to be wiped). The names are the catalogue's
// (src/catalogue), which the loops use too.
import { KEYED_DAEMON_TYPES, Step, daemon } from '../catalogue/index.js';
import type { ImageSpec } from '../model/image-kinds.js';
import { ImageKind } from '../model/image-kinds.js';
import { Kind, type DiskSpec, type DiskStatusFields, type NodeSpec } from '../model/kinds.js';
import { NetworkKind } from '../model/network-kinds.js';
import { StorageKind } from '../model/storage-kinds.js';
import type { Change } from './types.js';
import type { World } from './world.js';

export const TaskKind = {
  dhcpStart: Step.dhcpStart,
  monBootstrap: Step.monBootstrap,
  monJoin: Step.monJoin,
  osdNew: Step.osdNew,
  osdCreate: Step.osdCreate,
  fsCreate: Step.fsCreate,
  rgwUserCreate: Step.rgwUserCreate,
  imageDownload: Step.imageDownload,
  imageRemove: Step.imageRemove,
} as const;

export interface PlannedTask {
  task: string;
  kind: string;
  id: string;
  name: string;
  /** For a task that destroys what a disk holds: the disk. */
  wipes?: string;
}

type Spec = Record<string, unknown> | null | undefined;
const specOf = (c: Change, side: 'before' | 'after'): Spec => c[side]?.spec as Spec;

export function plannedTasks(changes: Change[], world: World): PlannedTask[] {
  const out: PlannedTask[] = [];
  let monitors = world.nodes.some((n) => n.spec.daemons.mon !== undefined);
  for (const c of changes) {
    const add = (task: string, wipes?: string) => out.push({ task, kind: c.kind, id: c.id, name: c.name, ...(wipes ? { wipes } : {}) });
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
        break;
      }
      case Kind.Disk:
        if (!(was as DiskSpec | null)?.osd && (now as unknown as DiskSpec).osd) {
          const disk = world.disks.find((d) => d.id === c.id);
          const st: DiskStatusFields = disk?.status ?? {};
          add(TaskKind.osdNew);
          add(TaskKind.osdCreate, `${st.devicePath ?? '?'} (${disk?.spec.serial ?? c.name})`);
        }
        break;
      case StorageKind.Filesystem:
        if (c.action === 'create') add(TaskKind.fsCreate);
        break;
      case StorageKind.RgwUser:
        if (c.action === 'create') add(TaskKind.rgwUserCreate);
        break;
    }
  }
  return out;
}
