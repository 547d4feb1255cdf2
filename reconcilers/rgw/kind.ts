// The RADOS gateway: S3 on the node's address, port 7480 (radosgw's own default). A gateway
// holds no data (its state is in RADOS pools), so one no longer desired is simply stopped.
import { RGW_PORT } from '../../src/model/storage-kinds.js';
import type { DaemonKind } from '../daemon/loop.js';

export const rgwKind: DaemonKind = {
  type: 'rgw',
  entity: (n) => `client.rgw.${n.spec.hostname}`,
  caps: { mon: 'allow rw', osd: 'allow rwx', mgr: 'allow rw' },
  startArgs: (n, c) => ({ name: n.spec.hostname, fsid: c.spec.fsid, port: RGW_PORT }),
  stopOrphan: true,
};
