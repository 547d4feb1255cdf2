// The lab's simulated agents check a run's arguments against the step's schema before they
// simulate anything, as the real agent does (src/catalogue/validate.ts).
import test from 'ava';
import { Kind } from '../../src/model/kinds.js';
import { allActive, startLab } from './harness.js';

test('lab agent refuses a run whose arguments do not match its step schema: failed, the field named, the cluster unchanged', async (t) => {
  const q = await startLab(t, 1);
  const [node] = await allActive(q, 1);
  const nodeId = node!.id;
  const ceph = q.lab!.ceph;
  const start = (taskName: string, args: Record<string, unknown>) =>
    q.tasks.start({
      taskName,
      target: { kind: Kind.Node, id: nodeId, generation: 1 },
      node: { id: nodeId, hostname: node!.spec.hostname },
      args,
      timeoutMs: 10_000,
    });
  const bootstrap = await q.tasks.whenFinished(
    (await start('ceph.mon.bootstrap', { fsid: 'f', monName: node!.spec.hostname, addr: 'not-an-address' })).id,
  );
  t.like(bootstrap.status, { state: 'failed', error: 'argument addr must be an IPv4 address' });
  const restart = await q.tasks.whenFinished((await start('ceph.daemon.restart', { daemon: 'nfs-ganesha', name: node!.spec.hostname })).id);
  t.like(restart.status, { state: 'failed', error: "unknown daemon type 'nfs-ganesha'" });
  t.true(
    (await q.tasks.logs(bootstrap.id)).some((l) => l.level === 'error' && l.message === 'argument addr must be an IPv4 address'),
    "the refusal is in the run's log",
  );
  t.false(ceph.mons.bootstrapped, 'no monmap was made');
  t.deepEqual(ceph.hosts.all(), [], 'no daemon was started');
});
