// The node loop's disk inventory: every disk the agent ever reported keeps a Disk document;
// what is reported now is present, with its hardware facts; what vanished is marked absent.
import type { Doc } from '../../src/model/document.js';
import type { DiskSpec, DiskStatusFields } from '../../src/model/kinds.js';
import type { AgentReport, DiskReport } from '../../src/fleet/types.js';
import { diskIdFor } from '../../src/model/ids.js';

export interface DiskWrite {
  id: string;
  create: DiskSpec | null;
  status: DiskStatusFields;
}

/** The ids of every disk the node has reported, now or before, sorted. */
export function diskIdsOf(nodeId: string, known: string[], report: AgentReport | null): string[] {
  const ids = new Set(known);
  for (const d of report?.disks ?? []) ids.add(diskIdFor(nodeId, d.serial));
  return [...ids].sort();
}

export function planDisks(
  nodeId: string,
  known: string[],
  report: AgentReport | null,
  docs: Map<string, Doc<DiskSpec, DiskStatusFields> | undefined>,
): DiskWrite[] {
  if (!report) return [];
  const seen = new Map(report.disks.map((d) => [diskIdFor(nodeId, d.serial), d] as const));
  const writes: DiskWrite[] = [];
  for (const id of diskIdsOf(nodeId, known, report)) {
    const doc = docs.get(id);
    const hw = seen.get(id);
    // A disk that vanished keeps the label last seen on it; one reported says what it has now.
    const status: DiskStatusFields = hw
      ? withLabel({ ...doc?.status, ...hardware(hw), present: true }, hw)
      : { ...doc?.status, present: false };
    const create = doc ? null : hw ? { nodeId, serial: hw.serial, osd: false, wipeGeneration: 0 } : null;
    if (!doc && !create) continue;
    writes.push({ id, create, status });
  }
  return writes;
}

/** The agent's BlueStore label (whose OSD the disk holds: adoption reads it), or none. */
function withLabel(status: DiskStatusFields, d: DiskReport): DiskStatusFields {
  const { label: _old, ...rest } = status;
  const b = d.bluestore;
  return b ? { ...rest, label: { fsid: b.fsid, osdUuid: b.osdUuid, osdId: b.osdId } } : rest;
}

function hardware(d: DiskReport): DiskStatusFields {
  return {
    devicePath: d.devicePath,
    capacityBytes: d.sizeBytes,
    rotational: d.rotational,
    interface: d.interface,
    model: d.model,
    vendor: d.vendor,
    isSystem: d.isSystem,
    hasFilesystem: d.hasFilesystem,
  };
}
