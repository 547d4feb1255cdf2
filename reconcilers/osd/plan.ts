// The OSD loop's pure half, keyed by Disk. Where the disk's OSD is in its life decides the plan:
// - replaced by another disk, or destroyed and waiting for one (replace.ts);
// - a removal, a replacement or a dead disk's drain under way, or one withdrawn (remove.ts);
// - otherwise the disk keeps an OSD when its spec asks for one (keep.ts: create, adopt, claim a
//   destroyed id, restart), and an OSD nobody asks for is reported orphaned, left running.
// Gates everywhere: nothing on a node that is not active or a disk that is absent (unless the
// step does not need them), nothing without monitor quorum, the disk must be eligible until the
// OSD exists on it, the drain lease, and Ceph's safe-to-destroy before a purge or destroy.
import { keepPlan, unmanagedPlan } from './keep.js';
import { osdIdOf } from './plan-kit.js';
import { planLifecycle } from './remove.js';
import { destroyedPlan, replacedPlan } from './replace.js';
import type { OsdObserved, OsdPlan } from './types.js';

export { OSD_CAPS, OsdTask } from './types.js';
export type { CreateArgs, DeviceClass, LifecycleObserved, NewArgs, OsdObserved, OsdPlan, OsdStep } from './types.js';
export { deviceClassFor, osdIdOf } from './plan-kit.js';

export function planOsd(o: OsdObserved): OsdPlan {
  const { disk } = o;
  const id = osdIdOf(o);
  if (disk.status.replacedBy) return replacedPlan(o);
  if (disk.status.osd?.phase === 'destroyed' && id !== null) return destroyedPlan(o, id);
  const life = id === null ? null : planLifecycle(o, id);
  if (life) return life;
  return disk.spec.osd ? keepPlan(o, id) : unmanagedPlan(o);
}
