// Cluster changes Quarry cannot carry out once the cluster lives, refused when a file is
// resolved, so the dry run (POST /specs/plan) and the apply both say so, with the reason, and
// nothing is written. A monitor's address (its node's address and monPort) is in the monmap
// every daemon and client starts from: a new public network or monitor port would need every
// monitor made again with a new address, one at a time, which Quarry does not do. The fsid is
// not a field a file may declare at all (the Cluster schema refuses it). Fields whose change a
// live cluster takes are not here: clusterNetwork (the OSDs restart, node by node, in the
// disruption budget), poolDefaults (new pools take them), failureDomain (a CRUSH rule change).
// A filesystem Ceph has is made over its pools: their names and PG counts stay as made (the fs
// loop would only say so, blocked); `state: absent` and declaring it again is the way to change them.
import type { FieldError } from '../errors.js';
import type { ClusterSpec } from '../model/ceph-kinds.js';
import type { Doc } from '../model/document.js';
import { contains, parseCidr } from '../model/ipv4.js';
import type { FilesystemSpec } from '../model/storage-kinds.js';
import type { World } from './world.js';

export interface FixedField {
  field: 'publicNetwork' | 'monPort';
  why: string;
}

export const FIXED_ONCE_LIVE: readonly FixedField[] = [
  {
    field: 'publicNetwork',
    why: "the monitors' addresses in the monmap are in it, and every daemon binds in it; Quarry cannot move a live cluster to another public network",
  },
  {
    field: 'monPort',
    why: "the monmap holds every monitor's address with this port, and every daemon and client reaches the monitors on it; Quarry cannot change it on a live cluster",
  },
];

/** The cluster lives once it is bootstrapped or a monitor runs. */
export function clusterLives(world: World): boolean {
  const status = world.cluster?.status as { bootstrapped?: boolean } | undefined;
  return status?.bootstrapped === true || world.nodes.some((n) => n.status.daemons?.mon === true);
}

/** A public network first declared on a live cluster is taken when it holds every monitor's
 * address as it is (the daemons bound to those already): nothing moves. */
function declaresOnly(world: World, next: string | null): boolean {
  const cidr = next === null ? null : parseCidr(next);
  if (!cidr || 'error' in cidr) return false;
  const monitors = world.nodes.filter((n) => n.spec.daemons.mon !== undefined || n.status.daemons?.mon === true);
  return monitors.every((n) => n.status.ip !== undefined && contains(cidr, n.status.ip));
}

/** Errors for the fields `given` changes that a live cluster cannot take (paths under /spec). */
export function liveClusterErrors(cur: ClusterSpec, given: Partial<ClusterSpec>, world: World): FieldError[] {
  if (!clusterLives(world)) return [];
  const out: FieldError[] = [];
  for (const f of FIXED_ONCE_LIVE) {
    if (!(f.field in given) || given[f.field] === cur[f.field]) continue;
    if (f.field === 'publicNetwork' && cur.publicNetwork === null && declaresOnly(world, given.publicNetwork ?? null)) continue;
    out.push({
      path: `/spec/${f.field}`,
      message: `LIVE_CLUSTER: ${f.field} cannot change from ${String(cur[f.field])} to ${String(given[f.field])} once the cluster runs: ${f.why}`,
    });
  }
  return out;
}

/** A filesystem's fields fixed once Ceph has it. */
export const FS_FIXED = ['metadataPool', 'metadataPG', 'dataPool', 'dataPG'] as const;

/** Errors for the pool fields `spec` changes on a filesystem Ceph has (`status.created`). */
export function liveFilesystemErrors(cur: Doc<FilesystemSpec> | undefined, spec: FilesystemSpec): FieldError[] {
  if (!cur || (cur.status as { created?: boolean }).created !== true || cur.spec.absent === true) return [];
  return FS_FIXED.filter((f) => spec[f] !== cur.spec[f]).map((f) => ({
    path: `/spec/${f}`,
    message: `LIVE_FILESYSTEM: ${f} of filesystem ${cur.spec.name} is ${String(cur.spec[f])} and cannot become ${String(spec[f])}: Ceph made the filesystem over its pools as they are (declare it state: absent, then again, to make it anew)`,
  }));
}
