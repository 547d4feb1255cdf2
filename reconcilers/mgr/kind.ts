// The manager: `ceph auth get-or-create mgr.<host>` with the caps measured on Ceph 16
// (docs/real-components.md), then the node's agent starts ceph-mgr with that key.
import type { DaemonKind } from '../daemon/loop.js';

export const mgrKind: DaemonKind = {
  type: 'mgr',
  entity: (n) => `mgr.${n.spec.hostname}`,
  caps: { mon: 'allow profile mgr', osd: 'allow *', mds: 'allow *' },
  startArgs: (n, c) => ({ name: n.spec.hostname, fsid: c.spec.fsid }),
};
