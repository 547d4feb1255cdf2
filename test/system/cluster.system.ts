// Issue 7 end to end: three real nodes (network namespaces on a bridge this test makes, loop
// devices as their disks, Quarry's agent program in each), a real Quarry in DRIVER=real, and
// every Ceph daemon brought up through the API only, to HEALTH_OK with every PG active+clean.
// Then: what Quarry reports equals what Ceph says, S3 against the real gateway, faults for
// real, and a teardown that leaves nothing behind. The tests share one cluster and run in order;
// each needs the ones before it.
import test from 'ava';
import type { ExecutionContext } from 'ava';
import { runS3Steps } from '../s3/steps.js';
import { bringUp, healthy, userWithKeys, waitNodesReady, type BringUp } from './cluster-bringup.js';
import { killMonitor, killOsd, nodeAway } from './cluster-faults.js';
import { confIsWhatDaemonsUse, keysAreTheNodes, metricsMatchStatus, nodesMatchMaps } from './cluster-observed.js';
import { nfsThroughApi } from './cluster-nfs.js';
import { fsDeletedAfterYes } from './cluster-fs-delete.js';
import { monStoresOnTheirDisks } from './cluster-mon-disk.js';
import { monRemovedAndDeclaredAgain } from './cluster-mon-undo.js';
import { NetnsCluster } from './netns-cluster.js';
import { until } from './node-sandbox.js';

const DISKS_PER_NODE = 2;
let cluster: NetnsCluster | undefined;
let up: BringUp | undefined;

const need = <T>(v: T | undefined, what: string): T => {
  if (v === undefined) throw new Error(`${what} is not there: an earlier test failed`);
  return v;
};

/** On a failure, what the loops did and what the daemons said: the first thing CI needs. */
function explainOnFailure(t: ExecutionContext): void {
  t.teardown(async () => {
    if (t.passed || !cluster?.q) return;
    for (const r of (await cluster.q.tasks.recent(40)).reverse())
      t.log(`${r.metadata.createdAt} ${r.spec.taskName} ${JSON.stringify(r.spec.args)} ${r.status.state} ${r.status.error ?? ''}`);
    for (const tail of await cluster.logTails()) t.log(tail);
  });
}

test.before(async () => {
  cluster = await NetnsCluster.start({ nodes: 3, disksPerNode: DISKS_PER_NODE });
});

// Also after a failure: nothing may survive the run. (A run killed outright is swept by the next
// one: NetnsCluster.start removes what a dead run left.)
test.after.always(async () => {
  if (!cluster) return;
  await cluster.stop();
  const left = await cluster.leftovers();
  if (left.length) throw new Error(`teardown left behind:\n${left.join('\n')}`);
});

test.serial(
  'cluster: three monitors, a manager, OSDs, MDS, a filesystem, a gateway and an RGW user through the API reach HEALTH_OK',
  async (t) => {
    explainOnFailure(t);
    const c = need(cluster, 'the cluster');
    const disks = await waitNodesReady(c, DISKS_PER_NODE);
    t.is(disks.length, 6);
    up = await bringUp(c, disks);
    t.log(`HEALTH_OK with every PG active+clean ${(up.healthyAfterMs / 1000).toFixed(1)} s after the first API call`);
    t.is(up.status.quorumNames.length, 3);
    t.is(up.status.osdUp, 3);
    t.true(up.status.pgStates.every((p) => p.state === 'active+clean'));
  },
);

test.serial('cluster: /ceph/metrics, /nodes/details and node Ceph state agree with ceph status, osd tree and mon dump', async (t) => {
  explainOnFailure(t);
  const c = need(cluster, 'the cluster');
  need(up, 'the bring-up');
  await metricsMatchStatus(t, c);
  await nodesMatchMaps(t, c);
});

test.serial("cluster: each monitor's store is on the disk it was created on, mounted at its data dir (findmnt)", async (t) => {
  explainOnFailure(t);
  need(up, 'the bring-up');
  await monStoresOnTheirDisks(t, need(cluster, 'the cluster'));
});

test.serial('cluster: the conf and its hash are what every daemon runs with', async (t) => {
  explainOnFailure(t);
  await confIsWhatDaemonsUse(t, need(cluster, 'the cluster'));
});

test.serial("cluster: a node's keyring works for its own daemon and not as another node's", async (t) => {
  explainOnFailure(t);
  await keysAreTheNodes(t, need(cluster, 'the cluster'));
});

test.serial('cluster: S3 through Quarry and directly with the AWS SDK against the real gateway', async (t) => {
  explainOnFailure(t);
  const c = need(cluster, 'the cluster');
  const u = need(up, 'the bring-up');
  const otherKeys = await userWithKeys(c.admin, 'qsys-other', 'Another user');
  await runS3Steps(t, { base: c.q.url, keys: u.userKeys, gatewayUrl: u.gatewayUrl, otherKeys });
});

test.serial(
  'cluster: an NFS gateway through the API exports the filesystem; a userspace NFS client writes and reads a file that the data pool holds',
  async (t) => {
    explainOnFailure(t);
    need(up, 'the bring-up');
    await nfsThroughApi(t, need(cluster, 'the cluster'));
  },
);

test.serial('cluster: a killed monitor leaves a quorum, is reported not running and is started again', async (t) => {
  explainOnFailure(t);
  await killMonitor(t, need(cluster, 'the cluster'));
});

test.serial('cluster: a monitor removed and declared again is made afresh by a join and rejoins the quorum (3/3)', async (t) => {
  explainOnFailure(t);
  await monRemovedAndDeclaredAgain(t, need(cluster, 'the cluster'));
});

test.serial('cluster: a killed OSD is reported down and started again', async (t) => {
  explainOnFailure(t);
  await killOsd(t, need(cluster, 'the cluster'));
});

test.serial('cluster: a node whose agent stops goes offline, is sent nothing, and converges when it returns', async (t) => {
  explainOnFailure(t);
  const c = need(cluster, 'the cluster');
  await nodeAway(t, c);
  const s = await until(
    'HEALTH_OK again',
    () => c.ceph.status(),
    (x) => healthy(x, 3),
    180_000,
  );
  t.is(s.health, 'HEALTH_OK');
});

// Last before the teardown: the filesystem (and the NFS export over it) are gone after it.
test.serial('cluster: a filesystem declared absent is deleted after a "yes" and leaves no pools behind (ceph osd pool ls)', async (t) => {
  explainOnFailure(t);
  need(up, 'the bring-up');
  await fsDeletedAfterYes(t, need(cluster, 'the cluster'));
});

test.serial('cluster: teardown leaves no process, mount, loop device, namespace or directory', async (t) => {
  const c = need(cluster, 'the cluster');
  await c.stop();
  t.deepEqual(await c.leftovers(), []);
});
