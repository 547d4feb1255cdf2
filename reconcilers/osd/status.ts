// What the disk loop writes into a Disk's status, and how. The node loop owns the hardware
// fields (it spreads the status it read, so it keeps ours); this loop owns status.osd, osdId,
// osdUuid, observedWipeGeneration and the conditions. Writes are read-change-CAS, again on a
// conflict, and skipped when nothing changes, so the loop does not wake itself.
import { isDeepStrictEqual } from 'node:util';
import { ConflictError } from '../../src/errors.js';
import { Kind, type DiskSpec, type DiskStatusFields } from '../../src/model/kinds.js';
import type { DiskDoc } from '../../src/model/operations.js';
import { setConditions, withOrphaned, type ConditionInput } from '../../src/runtime/conditions.js';
import type { Store } from '../../src/store/types.js';
import type { OsdPlan } from './plan.js';
import type { WipePlan } from './wipe.js';

const ATTEMPTS = 8;

/** The fields this loop owns, as the two plans decided them. */
export type OwnedStatus = Pick<DiskStatusFields, 'osd' | 'osdId' | 'observedWipeGeneration' | 'conditions'>;

export function ownedStatus(disk: DiskDoc, osd: OsdPlan, wipe: WipePlan, nowIso: string): OwnedStatus {
  const cur = disk.status;
  const blocked = osd.blocked ? { reason: osd.state?.reason ?? 'Blocked', message: osd.state?.message ?? '' } : wipe.blocked;
  const failing = osd.state?.phase === 'failed' ? osd.state.message : wipe.failing;
  const inputs: ConditionInput[] = [
    { type: 'Blocked', status: blocked ? 'True' : 'False', reason: blocked?.reason ?? 'NotBlocked', message: blocked?.message ?? '' },
    { type: 'Degraded', status: failing ? 'True' : 'False', reason: failing ? 'Failing' : 'Healthy', message: failing ?? '' },
  ];
  if (wipe.condition) inputs.push(wipe.condition);
  const owned: OwnedStatus = withOrphaned({ conditions: setConditions(cur.conditions, inputs, disk.metadata.generation, nowIso) }, disk.metadata.source, disk.metadata.generation, nowIso);
  if (osd.state) owned.osd = osd.state;
  if (osd.osdId !== null || cur.osdId !== undefined) owned.osdId = osd.osdId;
  const observed = wipe.ack ?? cur.observedWipeGeneration;
  if (observed !== undefined) owned.observedWipeGeneration = observed;
  return owned;
}

/** The stored status with our fields replaced; an absent `osd` removes a stale one. */
export function mergeOwned(cur: DiskStatusFields, owned: OwnedStatus): DiskStatusFields {
  const next: DiskStatusFields = { ...cur, ...owned };
  if (!owned.osd) delete next.osd;
  return next;
}

export async function writeDiskStatus(store: Store, id: string, change: (s: DiskStatusFields) => DiskStatusFields): Promise<void> {
  for (let i = 0; ; i++) {
    const d = await store.get<DiskSpec, DiskStatusFields>(Kind.Disk, id);
    if (!d) return;
    const next = change(d.status);
    if (isDeepStrictEqual(next, d.status)) return;
    try {
      await store.updateStatus(Kind.Disk, id, next, { resourceVersion: d.metadata.resourceVersion });
      return;
    } catch (err) {
      if (!(err instanceof ConflictError) || i >= ATTEMPTS) throw err;
    }
  }
}
