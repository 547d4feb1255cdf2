// /nodes/details says why a daemon the node wants is not there (#16): hasMon true with
// monExists false always comes with its loop's phase and a reason.
import test from 'ava';
import { daemonsReadyOf, nodeDetailOf } from '../../src/services/views.js';
import { node } from '../builders.js';

test('node detail daemonsReady gives each wanted daemon its loop phase and why it is not ready, and says when no loop wrote one', (t) => {
  const n = node('active').build();
  n.spec.daemons = { mon: { diskId: 'd' }, mgr: {}, nfs: { export: 'cephfs', path: '/' } };
  n.status.daemons = { mon: false, mgr: true };
  n.status.ceph = {
    mon: { phase: 'failed', reason: 'RetryBackoff', message: 'joining the monitor quorum; attempt 3 failed: boom' },
    mgr: { phase: 'running', reason: 'Running', message: 'the manager runs' },
  };
  const ready = daemonsReadyOf(n);
  t.deepEqual(
    ready.map((d) => d.type),
    ['mon', 'mgr', 'nfs'],
  );
  t.like(ready[0], { ready: false, phase: 'failed', message: 'joining the monitor quorum; attempt 3 failed: boom' });
  t.like(ready[1], { ready: true, phase: 'running' });
  t.like(ready[2], { ready: false, phase: 'pending' });
  t.regex(ready[2]!.message, /no nfs state yet/);
  t.deepEqual(nodeDetailOf(n, 0, 0).daemonsReady, ready);
});

test('node detail daemonsReady lists only the daemons the spec names: one running but not wanted is left out', (t) => {
  const n = node('active').build();
  n.spec.daemons = { mgr: {} };
  n.status.daemons = { mgr: true, mds: true };
  n.status.ceph = { mgr: { phase: 'running', reason: 'Running', message: 'the manager runs' } };
  t.deepEqual(
    daemonsReadyOf(n).map((d) => [d.type, d.ready]),
    [['mgr', true]],
  );
});
