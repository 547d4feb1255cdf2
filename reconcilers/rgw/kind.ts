// The RADOS gateway: S3 on the node's address, port 7480 (radosgw's own default). A gateway
// holds no data (its state is in RADOS pools), so one no longer desired is simply stopped.
import { DAEMONS, Daemon } from '../../src/catalogue/index.js';
import { RGW_PORT } from '../../src/model/storage-kinds.js';
import type { DaemonKind } from '../daemon/loop.js';

export const rgwKind: DaemonKind = {
  type: Daemon.rgw,
  entity: (n) => DAEMONS.rgw.entity(n.spec.hostname),
  caps: DAEMONS.rgw.caps,
  startArgs: (n, c) => ({ name: n.spec.hostname, fsid: c.spec.fsid, port: RGW_PORT }),
  stopOrphan: DAEMONS.rgw.stopOrphan,
};
