// Replacement keeping the id. A destroyed OSD (its disk died, or an operator replaced it) keeps
// its id and CRUSH position; its disk shows `destroyed` and waits. A disk of the same node that
// is to hold an OSD and has none yet takes it over: the one its spec names (`replaces`), else the
// node's lowest destroyed id nobody claimed. The claim is a CAS of the old disk's
// status.replacedBy (this loop owns it), so two new disks cannot take one id; then `osd new
// <uuid> <id>` and `ceph.osd.create` run on the new disk, and CRUSH moves data once. When it
// runs, the new disk's history says `replaces` and the old one's `replaced-by`, and the old one
// is `replaced` (its osdId dropped).
import { OsdRemoval } from '../../src/model/kinds.js';
import type { DiskDoc } from '../../src/model/operations.js';
import { entry } from './history.js';
import { isoAt, recordedId, statePlan } from './plan-kit.js';
import type { OsdObserved, OsdPlan } from './types.js';

export type Replacement =
  /** This disk already claimed that one's id. */
  | { kind: 'claimed'; old: DiskDoc; osdId: number }
  /** That one's id is free to claim. */
  | { kind: 'claim'; old: DiskDoc; osdId: number }
  /** The disk named by spec.replaces, or one of the node whose OSD is being destroyed, still
   * has its OSD. */
  | { kind: 'wait'; old: DiskDoc };

const destroyedId = (d: DiskDoc): number | null => (d.status.osd?.phase === 'destroyed' ? (d.status.osdId ?? null) : null);

/** The destroyed OSD this disk takes over, if any (null: a new OSD). Reads o.peers, which observe
 * fills only for a disk that still needs an id. */
export function replacementOf(o: Pick<OsdObserved, 'disk' | 'peers'>): Replacement | null {
  const me = o.disk.id;
  const peers = (o.peers ?? []).filter((d) => d.id !== me && d.spec.nodeId === o.disk.spec.nodeId);
  const claimed = peers.find((d) => d.status.replacedBy === me && destroyedId(d) !== null);
  if (claimed) return { kind: 'claimed', old: claimed, osdId: destroyedId(claimed)! };
  const free = (d: DiskDoc): boolean => destroyedId(d) !== null && !d.status.replacedBy;
  const named = o.disk.spec.replaces;
  if (named) {
    const old = peers.find((d) => d.id === named);
    if (!old) return null;
    if (free(old)) return { kind: 'claim', old, osdId: destroyedId(old)! };
    // Still holding a live OSD: its replacement is under way (or not yet declared). Anything
    // else (replaced by another disk, removed, never an OSD): a new OSD here.
    const live = (old.status.osdId ?? null) !== null && !old.status.replacedBy && destroyedId(old) === null;
    return live ? { kind: 'wait', old } : null;
  }
  const first = peers.filter(free).sort((a, b) => destroyedId(a)! - destroyedId(b)!)[0];
  if (first) return { kind: 'claim', old: first, osdId: destroyedId(first)! };
  // A disk of this node whose OSD is on its way to `destroyed` (its disk is gone, or it is being
  // replaced): a new disk that appears meanwhile is its replacement, so it waits for the id
  // rather than taking a fresh one (CRUSH would move the data twice).
  const dying = peers.find((d) => destroyedId(d) === null && !d.status.replacedBy && isDying(d));
  return dying ? { kind: 'wait', old: dying } : null;
}

/** An OSD that will end `destroyed`: its disk is gone while wanted, or its replacement is asked. */
const isDying = (d: DiskDoc): boolean =>
  (d.status.osdId ?? null) !== null &&
  ((d.spec.osd && d.status.present === false) || (!d.spec.osd && d.spec.osdRemoval === OsdRemoval.replace));

/** A destroyed OSD on this disk, nobody's claim yet: it waits for the disk that replaces it. */
export function destroyedPlan(o: OsdObserved, id: number): OsdPlan {
  const message = `osd.${id} is destroyed; its id and CRUSH position wait for the disk that replaces it (a new disk on this node, or replaces: ${o.disk.spec.serial})`;
  return statePlan('destroyed', 'Destroyed', message, { osdId: id });
}

/** The old disk of a replacement: `destroyed` until the new disk's OSD runs, then `replaced`. */
export function replacedPlan(o: OsdObserved): OsdPlan {
  const cur = o.disk.status.osd;
  if (cur?.phase === 'replaced') return statePlan('replaced', cur.reason, cur.message, { osdId: null });
  const id = recordedId(o);
  const by = o.replacer;
  if (id === null) return statePlan('replaced', 'Replaced', 'its OSD was taken over by another disk', { osdId: null });
  // The claiming disk is gone or gave up before its OSD existed: the id waits again.
  if (!by || (!by.spec.osd && (by.status.osdId ?? null) === null)) return { ...destroyedPlan(o, id), replacedBy: null };
  if (by.status.osdId === id) {
    const message = `osd.${id} now runs on ${by.spec.serial}`;
    return statePlan('replaced', 'Replaced', message, {
      osdId: null,
      history: [entry(isoAt(o), 'replaced-by', id, `osd.${id} recreated on ${by.spec.serial}, same id`, by.spec.serial)],
    });
  }
  return statePlan('destroyed', 'Replacing', `osd.${id} is being recreated on ${by.spec.serial} with the same id`, { osdId: id });
}
