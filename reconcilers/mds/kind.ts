// The metadata server, needed before a filesystem can be active.
import { DAEMONS, Daemon } from '../../src/catalogue/index.js';
import type { DaemonKind } from '../daemon/loop.js';

export const mdsKind: DaemonKind = {
  type: Daemon.mds,
  entity: (n) => DAEMONS.mds.entity(n.spec.hostname),
  caps: DAEMONS.mds.caps,
  startArgs: (n, c) => ({ name: n.spec.hostname, fsid: c.spec.fsid }),
};
