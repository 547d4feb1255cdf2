// /nodes/details says why a daemon the node wants is not there (#16): hasMon true with
// monExists false always comes with its loop's reason.
import test from 'ava';
import { daemonReasons, nodeDetailOf } from '../../src/services/views.js';
import { node } from '../builders.js';

test('node detail daemonReasons gives the loop state of each wanted daemon that does not run, and says when none was written', (t) => {
  const n = node('active').build();
  n.spec.daemons = { mon: { diskId: 'd' }, mgr: {}, nfs: { export: 'cephfs', path: '/' } };
  n.status.daemons = { mon: false, mgr: true };
  n.status.ceph = {
    mon: { phase: 'failed', reason: 'RetryBackoff', message: 'joining the monitor quorum; attempt 3 failed: boom' },
    mgr: { phase: 'running', reason: 'Running', message: 'the manager runs' },
  };
  const reasons = daemonReasons(n);
  t.deepEqual(Object.keys(reasons).sort(), ['mon', 'nfs']);
  t.deepEqual(reasons.mon, n.status.ceph.mon);
  t.like(reasons.nfs, { phase: 'pending', reason: 'NotReported' });
  t.deepEqual(nodeDetailOf(n, 0, 0).daemonReasons, reasons);
});

test('node detail daemonReasons is empty when every wanted daemon runs, and ignores one running but not wanted', (t) => {
  const n = node('active').build();
  n.spec.daemons = { mgr: {} };
  n.status.daemons = { mgr: true, mds: true };
  t.deepEqual(daemonReasons(n), {});
});
