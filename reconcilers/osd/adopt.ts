// Adoption: an OSD already on a declared disk is kept, never wiped. An orphan (its id recorded,
// running unowned) declared again just becomes owned (keep.ts adds the history entry). A disk
// whose BlueStore label carries this cluster's fsid but whose OSD Quarry never recorded (a store
// restored from backup, a disk moved between nodes) gets the label's uuid as its osdUuid; the
// `osd new` step then looks that uuid up in `osd dump` (never registering a new OSD), and
// `ceph.osd.create` finds BlueStore there with the same uuid, skips mkfs and starts it.
import type { BlueStoreLabel } from '../../src/model/kinds.js';
import { DiskReason, diskReasons, type DiskDoc, type NodeDoc } from '../../src/model/operations.js';
import type { RunInfo } from '../shared/runs.js';
import type { OsdObserved } from './types.js';

/** The disk's BlueStore label when it is this cluster's and no OSD is recorded on the disk. */
export function labelOfThisCluster(o: Pick<OsdObserved, 'disk' | 'fsid'>): BlueStoreLabel | null {
  const l = o.disk.status.label;
  if (!l || !o.fsid || l.fsid !== o.fsid) return null;
  if (o.disk.status.osd?.phase === 'removed' || purgedHere(o.disk, l)) return null;
  return (o.disk.status.osdId ?? null) === null || o.disk.status.osdId === l.osdId ? l : null;
}

/**
 * Why the disk cannot take this OSD. `holds-osd` is this very request (spec.osd), not a reason;
 * neither is the filesystem of this cluster's own BlueStore when the OSD is adopted.
 */
export function creationReasons(d: DiskDoc, n: NodeDoc | undefined, ours = false): string[] {
  return diskReasons(d, n).filter((r) => r !== DiskReason.holdsOsd && !(ours && r === DiskReason.hasFilesystem));
}

/** Why an adoption cannot go on: Ceph answered that it does not know the label's uuid (the OSD
 * was purged or destroyed since). Null while there is no such answer. */
export function adoptionBlock(o: Pick<OsdObserved, 'disk'>, last: RunInfo | null): string | null {
  if (last?.state !== 'completed' || typeof last.result?.osdId === 'number') return null;
  const l = o.disk.status.label;
  const what = l ? `osd.${l.osdId} (uuid ${l.osdUuid})` : 'an OSD';
  return `the disk holds ${what} of this cluster, which Ceph no longer knows; declare it without an OSD and wipe it (disk.wipe) to use it again`;
}

/** The disk's history says the label's OSD was purged and wiped here, and nothing of that id
 * came since: a stale label, reported until the agent's next report after the wipe. Adopting it
 * restarted a purged id for ever; the phase alone does not say it, since a disk declared again
 * leaves `removed` (blocked by the same report's filesystem) before that report comes. */
function purgedHere(d: DiskDoc, l: BlueStoreLabel): boolean {
  const last = (d.status.history ?? []).findLast((h) => h.osdId === l.osdId);
  return last?.event === 'zapped' || last?.event === 'removed';
}
