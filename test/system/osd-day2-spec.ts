// The OSD day-2 system test's spec file and what it watches: one Node document per namespace
// node (by hostname: a monitor on its first disk, a manager on the first node, an OSD on every
// other disk, a rack label), written into Quarry's specs folder; and a disk's OSD phases and drain progress
// as the store saw each write, with the time of each.
import { writeFile, rename } from 'node:fs/promises';
import { join } from 'node:path';
import type { DiskStatusFields } from '../../src/model/kinds.js';
import type { NetnsCluster } from './netns-cluster.js';

export const SPEC_FILE = 'day2-cluster.yaml';
/** Failure domains: the first two nodes in rack r1, the third in r2 (the cluster loop moves their
 * CRUSH host buckets there). */
export const RACKS = ['r1', 'r1', 'r2'];

/** The file: per node (by Quarry's hostname of it), its extra OSD selectors (e.g. `{ serial,
 * state: absent }`) after `all`. */
export async function clusterSpec(c: NetnsCluster, extra: Record<string, Array<Record<string, string>>> = {}): Promise<string> {
  const details = (await c.admin.get<Array<{ id: string; hostname: string }>>('/nodes/details')).json;
  const hostname = (id: string) => details.find((d) => d.id === id)?.hostname ?? id;
  return c.nodes
    .map((n, i) => {
      const osds = [{ all: true }, ...(extra[n.id] ?? [])].map((s) => `    - ${JSON.stringify(s)}`).join('\n');
      return [
        'apiVersion: quarry/v1',
        'kind: Node',
        'metadata:',
        `  name: day2-${i + 1}`,
        `  labels: { rack: ${RACKS[i] ?? 'r2'} }`,
        'spec:',
        `  match: { hostname: ${hostname(n.id)} }`,
        '  daemons:',
        `    mon: { disk: { path: ${JSON.stringify(n.devices[0])} } }`,
        ...(i === 0 ? ['    mgr: {}'] : []),
        '  osds:',
        osds,
      ].join('\n');
    })
    .join('\n---\n');
}

/** Written whole at once (a rename), as a git checkout would. */
export async function writeSpec(c: NetnsCluster, text: string): Promise<void> {
  const tmp = join(c.dir, `${SPEC_FILE}.tmp`);
  await writeFile(tmp, `${text}\n`);
  await rename(tmp, join(c.specsDir, SPEC_FILE));
}

export interface DiskWatch {
  /** Each phase the disk's OSD took, in order, with when (ms epoch). */
  phases: Array<{ phase: string; at: number }>;
  /** Each drain progress written. */
  drains: Array<NonNullable<DiskStatusFields['drain']>>;
  stop: () => void;
}

/** Every write of the Disk document from now on (the store's watch misses none, so a phase that
 * lasted a moment is still seen). */
export function watchDisk(c: NetnsCluster, diskId: string): DiskWatch {
  const w: DiskWatch = { phases: [], drains: [], stop: () => undefined };
  w.stop = c.q.store.watch(c.q.store.revision(), (e) => {
    if (e.type === 'relist' || e.doc.kind !== 'Disk' || e.doc.id !== diskId) return;
    const status = e.doc.status as DiskStatusFields;
    const phase = status.osd?.phase;
    if (phase && w.phases.at(-1)?.phase !== phase) w.phases.push({ phase, at: Date.now() });
    const drain = status.drain;
    if (drain && JSON.stringify(w.drains.at(-1)) !== JSON.stringify(drain)) w.drains.push(drain);
  });
  return w;
}

/** The phases in order, each once. */
export const distinctPhases = (w: DiskWatch): string[] => [...new Set(w.phases.map((p) => p.phase))];
