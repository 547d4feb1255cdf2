// What the disk loop writes into a Disk's status. The node loop owns the hardware fields (and
// the BlueStore label); this loop owns status.osd, osdId, osdUuid, observedWipeGeneration, the
// drain, the history, replacedBy and the conditions
// (docs/status-ownership.md), written by the loop kit's writer: read-change-CAS, again on a
// conflict, skipped when nothing changes, so the loop does not wake itself.
import { Daemon } from '../../src/catalogue/index.js';
import { Kind, type DiskStatusFields } from '../../src/model/kinds.js';
import type { DiskDoc } from '../../src/model/operations.js';
import { diskReady } from '../../src/model/readiness.js';
import {
  readyCondition,
  removeCondition,
  setCondition,
  setConditions,
  withOrphaned,
  type ConditionInput,
} from '../../src/runtime/conditions.js';
import type { StatusOwner } from '../../src/runtime/loop-kit/index.js';
import { appendHistory } from './history.js';
import { PRESENT } from './keep.js';
import type { OsdPlan } from './plan.js';
import type { WipePlan } from './wipe.js';

/** The Disk status fields this loop owns, spelled once for the writer and the type below. */
const OWNED_FIELDS = [
  'osd', // catalogue-exempt: the contract's Disk status field `osd`, not the daemon type
  'osdId',
  'osdUuid',
  'observedWipeGeneration',
  'drain',
  'history',
  'replacedBy',
  'conditions',
  'observedGeneration',
] as const satisfies readonly (keyof DiskStatusFields)[];

export const DISK_OSD_STATUS: StatusOwner = { loop: Daemon.osd, kind: Kind.Disk, fields: OWNED_FIELDS };

/** The fields this loop owns, as the two plans decided them. */
export type OwnedStatus = Pick<DiskStatusFields, (typeof OWNED_FIELDS)[number]>;

export function ownedStatus(disk: DiskDoc, osd: OsdPlan, wipe: WipePlan, nowIso: string): OwnedStatus {
  const cur = disk.status;
  const blocked = osd.gate ?? wipe.gate;
  const failing = osd.failing ?? (osd.status?.phase === 'failed' ? osd.status.message : wipe.failing);
  const inputs: ConditionInput[] = [
    { type: 'Blocked', status: blocked ? 'True' : 'False', reason: blocked?.reason ?? 'NotBlocked', message: blocked?.message ?? '' },
    { type: 'Degraded', status: failing ? 'True' : 'False', reason: failing ? 'Failing' : 'Healthy', message: failing ?? '' },
  ];
  if (wipe.condition) inputs.push(wipe.condition);
  // Present=False only while an OSD disk is gone: its lastTransitionTime starts the dead-disk grace.
  const gone = disk.status.present === false && (disk.spec.osd || (cur.osdId ?? null) !== null);
  if (gone) inputs.push({ type: PRESENT, status: 'False', reason: 'DiskGone', message: `the node no longer reports ${disk.spec.serial}` });
  const conditions = setConditions(
    gone ? cur.conditions : removeCondition(cur.conditions, PRESENT),
    inputs,
    disk.metadata.generation,
    nowIso,
  );
  const owned: OwnedStatus = withOrphaned({ conditions }, disk.metadata.source, disk.metadata.generation, nowIso);
  if (osd.status) owned.osd = osd.status;
  // Chosen once by the loop's assign-uuid step (its own write), then carried until the OSD is purged.
  if (cur.osdUuid !== undefined && osd.osdUuid !== null) owned.osdUuid = cur.osdUuid;
  if (osd.osdId !== null || cur.osdId !== undefined) owned.osdId = osd.osdId;
  const observed = wipe.ack ?? cur.observedWipeGeneration;
  if (observed !== undefined) owned.observedWipeGeneration = observed;
  if (osd.drain) owned.drain = osd.drain;
  const history = appendHistory(cur.history, osd.history ?? []);
  if (history) owned.history = history;
  // Set by the claim of the disk that replaces this one (loop.ts), dropped only when it gave up.
  if (cur.replacedBy !== undefined && osd.replacedBy !== null) owned.replacedBy = cur.replacedBy;
  owned.observedGeneration = disk.metadata.generation;
  // Ready by the one rule of every kind (src/model/readiness.ts), over what this write says.
  // The stored status will hold exactly the owned fields set here (the writer drops the others).
  const owns = new Set<string>(OWNED_FIELDS);
  const after = Object.fromEntries(Object.entries(cur).filter(([k]) => !owns.has(k))) as DiskStatusFields;
  const ready = diskReady({ ...disk, status: { ...after, ...owned } }, null);
  owned.conditions = setCondition(
    owned.conditions,
    readyCondition(ready.ready, ready.reason, ready.message),
    disk.metadata.generation,
    nowIso,
  );
  return owned;
}
