// Issue 13's proof on real daemons: an NFS gateway added to the three-node cluster through the
// API alone (POST /invoke/node ceph.create-nfs with the filesystem it exports), reported running
// by the node's agent, and used by a userspace NFS client that writes a file into the export and
// reads it back, while the filesystem's data pool holds the bytes (nfs-check.ts).
import type { ExecutionContext } from 'ava';
import { dirname, join } from 'node:path';
import { DAEMONS } from '../../src/catalogue/index.js';
import { FS } from './cluster-bringup.js';
import type { NetnsCluster } from './netns-cluster.js';
import { nfsRoundTrip } from './nfs-check.js';
import { until } from './node-sandbox.js';

const NFS_PORT = DAEMONS.nfs.startArgs.port;

interface Detail {
  id: string;
  hasNfs: boolean;
  nfsExists: boolean;
}

export async function nfsThroughApi(t: ExecutionContext, c: NetnsCluster): Promise<void> {
  const node = c.nodes[1]!;
  const asked = await c.admin.post('/invoke/node', {
    operation: 'ceph.create-nfs',
    nodeIds: [node.id],
    params: { export: FS.name, path: '/' },
  });
  t.deepEqual(asked.json, { results: [{ id: node.id, status: 'scheduled' }] }, asked.text);
  const started = Date.now();
  await until(
    'the NFS gateway reported running',
    () => c.admin.get('/nodes/details').then((r) => (r.json as Detail[]).find((d) => d.id === node.id)),
    (d) => d?.hasNfs === true && d.nfsExists,
    120_000,
  );
  t.log(`NFS gateway running ${((Date.now() - started) / 1000).toFixed(1)} s after the API call`);
  const trip = await nfsRoundTrip({
    runner: c.runner,
    cephArgs: ['-c', c.cephConf, '-n', 'client.admin', '-k', join(dirname(c.cephConf), 'ceph.client.admin.keyring')],
    addr: node.addr,
    port: NFS_PORT,
    fs: FS.name,
  });
  t.log(`nfs-cp write ${trip.writeMs} ms, read ${trip.readMs} ms; object ${trip.object} of ${trip.dataPool}`);
  t.is(trip.dataPool, FS.dataPool);
  t.true(trip.bytes > 0);
  // The gateway came from a run of the catalogue's start step, not from anything done by hand.
  const runs = (await c.q.tasks.recent(200)).filter((r) => r.spec.taskName.startsWith('ceph.nfs.'));
  t.true(runs.some((r) => r.spec.taskName === 'ceph.nfs.start' && r.status.state === 'completed'));
}
