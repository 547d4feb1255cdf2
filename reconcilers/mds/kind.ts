// The metadata server, needed before a filesystem can be active.
import type { DaemonKind } from '../daemon/loop.js';

export const mdsKind: DaemonKind = {
  type: 'mds',
  entity: (n) => `mds.${n.spec.hostname}`,
  caps: { mon: 'profile mds', mgr: 'profile mds', mds: 'allow *', osd: 'allow *' },
  startArgs: (n, c) => ({ name: n.spec.hostname, fsid: c.spec.fsid }),
};
