// Why a Ceph daemon loop does nothing to a node that is not active: a node in maintenance
// (reconcilers/node/maintenance.ts) had its daemons stopped on purpose, and no loop may start
// them again until the maintenance ends; any other phase is the node not being up.

/** What the Ceph daemon loops say instead of starting a daemon of a node in maintenance. */
export const NODE_IN_MAINTENANCE = 'NodeInMaintenance';

/** Null when the node is active; else the gate's reason and message. */
export function nodeNotActive(phase: string | undefined, known = true): { reason: string; message: string } | null {
  if (phase === 'active') return null;
  if (phase === 'maintenance')
    return { reason: NODE_IN_MAINTENANCE, message: 'the node is in maintenance; its daemons start again when it leaves maintenance' };
  return {
    reason: 'NodeNotActive',
    message: `the node is ${known ? (phase ?? 'discovered') : 'unknown'}; nothing is done to it until it is active`,
  };
}
