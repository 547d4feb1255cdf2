// What the manager, metadata-server, gateway and NFS loops differ in, read from the catalogue
// (src/catalogue/daemons.ts): a daemon kind with a key step needs no file of its own here.
import { DAEMONS, type DaemonEntry, type KeyedDaemonType } from '../../src/catalogue/index.js';
import type { NodeDoc } from '../../src/model/operations.js';
import type { DaemonKind } from './loop.js';

/** The spec entry's own fields (what an NFS gateway exports), as the start step takes them. */
const paramsOf = (type: KeyedDaemonType, node: NodeDoc): Record<string, unknown> => ({ ...node.spec.daemons[type] });

export function daemonKindOf(type: KeyedDaemonType): DaemonKind {
  const d: DaemonEntry = DAEMONS[type];
  return {
    type,
    entity: (n) => d.entity(n.spec.hostname),
    caps: (n) => ({ ...(d.capsFor ? d.capsFor(paramsOf(type, n)) : d.caps) }),
    // The daemon's name is its node's hostname; fsid guards against another cluster's conf.
    startArgs: (n, c) => ({ name: n.spec.hostname, fsid: c.spec.fsid, ...d.startArgs, ...paramsOf(type, n) }),
    stopOrphan: d.stopOrphan,
  };
}
