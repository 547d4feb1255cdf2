// The manager: `ceph auth get-or-create mgr.<host>` with the caps measured on Ceph 16
// (docs/real-components.md), then the node's agent starts ceph-mgr with that key.
import { DAEMONS, Daemon } from '../../src/catalogue/index.js';
import type { DaemonKind } from '../daemon/loop.js';

export const mgrKind: DaemonKind = {
  type: Daemon.mgr,
  entity: (n) => DAEMONS.mgr.entity(n.spec.hostname),
  caps: DAEMONS.mgr.caps,
  startArgs: (n, c) => ({ name: n.spec.hostname, fsid: c.spec.fsid }),
};
