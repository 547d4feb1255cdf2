// Which Cluster spec fields a running daemon only takes when it (re)starts, and the hash of them
// per daemon kind: the one place this is computed. A node records the hashes its daemons run with
// (status.daemonConfig); a node whose record differs restarts the daemons concerned, inside the
// disruption budget (reconcilers/node/rollout.ts). Another field, or another daemon kind for a
// field, is one entry of RESTART_CONFIG.
import { createHash } from 'node:crypto';
import { Daemon, type DaemonType } from '../catalogue/index.js';
import type { ClusterSpec } from './ceph-kinds.js';

export interface RestartConfigEntry {
  field: keyof ClusterSpec;
  /** The daemon kinds that read it only at start. */
  daemons: readonly DaemonType[];
}

export const RESTART_CONFIG: readonly RestartConfigEntry[] = [
  // An OSD binds its cluster (back-side: replication, recovery, heartbeats) address when it
  // starts; monitors and managers do not use the cluster network at all.
  { field: 'clusterNetwork', daemons: [Daemon.osd] },
];

/** Daemon kind → hash of the restart-relevant fields it runs with; kinds no field concerns are absent. */
export type ConfigHashes = Partial<Record<DaemonType, string>>;

const digest = (v: unknown): string => createHash('sha256').update(JSON.stringify(v)).digest('hex').slice(0, 16);

export function configHashes(spec: ClusterSpec, table: readonly RestartConfigEntry[] = RESTART_CONFIG): ConfigHashes {
  const fields = new Map<DaemonType, Array<[string, unknown]>>();
  for (const e of table) for (const d of e.daemons) fields.set(d, [...(fields.get(d) ?? []), [e.field, spec[e.field] ?? null]]);
  const out: ConfigHashes = {};
  for (const [d, fs] of fields) out[d] = digest(fs.sort(([a], [b]) => a.localeCompare(b)));
  return out;
}

/** One key for a set of hashes (a run's `config` argument): equal sets, equal keys. */
export const configKey = (h: ConfigHashes): string => digest(Object.entries(h).sort(([a], [b]) => a.localeCompare(b)));
