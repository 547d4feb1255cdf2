// The controllers' leader election and the fence on the leader's writes (#18 parts 3–4), on a
// real etcd: one of several candidates leads, the others know where; a clean stop hands over at
// once; a leader whose lease ends is told and its writes (late ones included) are refused whole.
// Serial: one test stops etcd under its leader.
import test, { type ExecutionContext } from 'ava';
import { Etcd3 } from 'etcd3';
import { DocumentStore, FencedBackend, FencedError, LEADER_KEY, type EtcdBackend, type EtcdElection } from '../../src/store/index.js';
import type { StoredDoc } from '../../src/store/stored.js';
import { Kind } from '../../src/model/kinds.js';
import { etcdEndpoints, etcdPrefix, openEtcd, useEtcd } from './backends.js';
import { EtcdCluster, etcdMissing } from './etcd-server.js';
import { nodeSpec, until } from './helpers.js';

useEtcd(test);
const it = etcdMissing() ? test.skip : test.serial;

interface Candidate {
  backend: EtcdBackend<StoredDoc>;
  election: EtcdElection;
  lost: string[];
  /** The candidate's loop store: fenced by its own election. */
  fenced: DocumentStore;
}

async function candidate(t: ExecutionContext, prefix: string, id: string, ttlSeconds = 2, endpoints?: string[]): Promise<Candidate> {
  const backend = await openEtcd<StoredDoc>(t, { prefix, ...(endpoints ? { endpoints } : {}) });
  const lost: string[] = [];
  const election = backend.election({ me: { id, url: `http://${id}.test:8080` }, ttlSeconds, onLost: (why) => lost.push(why) });
  t.teardown(() => election.stop().catch(() => undefined));
  return { backend, election, lost, fenced: new DocumentStore(new FencedBackend(backend, () => election.fence())) };
}

it('one of two candidates leads, the other knows where; a clean stop hands over without waiting out the lease', async (t) => {
  const prefix = etcdPrefix();
  // Long leases both: a loaded machine's late keepalive deposes nobody here.
  const a = await candidate(t, prefix, 'a', 20);
  const b = await candidate(t, prefix, 'b', 60);
  const fenceA = await a.election.campaign();
  t.true(a.election.isLeader());
  t.is(fenceA.key, LEADER_KEY);
  let bWon = false;
  const bCampaign = b.election.campaign().then((f) => {
    bWon = true;
    return f;
  });
  await until(() => b.election.leaderUrl() === 'http://a.test:8080', "b learns a's URL");
  t.false(b.election.isLeader());
  t.false(bWon);
  // A follower's loop store writes nothing.
  await t.throwsAsync(b.fenced.create({ kind: Kind.Node, name: 'n0', spec: nodeSpec() }), { instanceOf: FencedError });
  await a.fenced.create({ kind: Kind.Node, id: 'n1', name: 'n1', spec: nodeSpec() });
  await a.election.stop();
  // Neither lease can have run out: b leads because a resigned.
  const fenceB = await bCampaign;
  t.true(fenceB.modRevision > fenceA.modRevision);
  t.is(b.election.leaderUrl(), 'http://b.test:8080');
  t.deepEqual(a.lost, [], 'a resigned: it lost nothing');
  await b.fenced.updateStatus(Kind.Node, 'n1', { phase: 'discovered' });
  // The documents' watch does not see the election key.
  const keys: string[] = [];
  const stop = a.backend.watch(0, (e) => keys.push(e.type === 'relist' ? 'relist' : e.key));
  await until(() => keys.includes('Node/n1'), 'the node in the watch');
  stop();
  t.false(
    keys.some((k) => k.startsWith('~')),
    keys.join(','),
  );
});

it("a leader whose key goes is told once, and its writes are refused whole — even one sent with the old fence after the new leader's", async (t) => {
  const prefix = etcdPrefix();
  const a = await candidate(t, prefix, 'a');
  const b = await candidate(t, prefix, 'b');
  const fenceA = await a.election.campaign();
  const bCampaign = b.election.campaign();
  await a.fenced.create({ kind: Kind.Node, id: 'n1', name: 'n1', spec: nodeSpec() });
  // a's lease revoked behind its back (what its expiry does after a partition).
  const raw = new Etcd3({ hosts: etcdEndpoints() });
  t.teardown(() => raw.close());
  const kv = (await raw.get(prefix + LEADER_KEY).exec()).kvs[0];
  await raw.leaseClient.leaseRevoke({ ID: kv!.lease });
  await bCampaign;
  await until(() => a.lost.length > 0, 'a told it lost');
  t.regex(a.lost[0] ?? '', /deleted|lost/);
  t.false(a.election.isLeader());
  const before = await a.backend.get('Node/n1');
  // A write that left a while a still led, arriving now: the stale fence refuses it.
  const late = new DocumentStore(new FencedBackend(a.backend, () => fenceA));
  const err = await t.throwsAsync(late.updateStatus(Kind.Node, 'n1', { phase: 'offline' }), { instanceOf: FencedError });
  t.is(err.code, 'FENCED');
  t.regex(err.message, /no longer leads/);
  await t.throwsAsync(a.fenced.updateStatus(Kind.Node, 'n1', { phase: 'offline' }), { instanceOf: FencedError });
  t.is((await a.backend.get('Node/n1'))?.modRevision, before?.modRevision, 'nothing written');
  await b.fenced.updateStatus(Kind.Node, 'n1', { phase: 'discovered' });
  t.deepEqual((await b.fenced.get(Kind.Node, 'n1'))?.status, { phase: 'discovered' });
  t.is(a.lost.length, 1, 'told once');
});

it('a leader cut off from etcd deposes itself within its TTL, and another leads once etcd is back', async (t) => {
  // Its own one-member etcd: this test stops it.
  const cluster = await EtcdCluster.start(1);
  t.teardown(() => cluster.stop());
  const prefix = etcdPrefix();
  const a = await candidate(t, prefix, 'a', 2, cluster.endpoints());
  await a.election.campaign();
  await cluster.kill(0);
  await until(() => a.lost.length > 0, 'a deposes itself');
  t.regex(a.lost[0] ?? '', /could not be renewed for 2 s|lost/);
  t.false(a.election.isLeader());
  await cluster.restart(0);
  const b = await candidate(t, prefix, 'b', 2, cluster.endpoints());
  await b.election.campaign();
  t.true(b.election.isLeader());
  await t.throwsAsync(a.fenced.create({ kind: Kind.Node, name: 'n', spec: nodeSpec() }), { instanceOf: FencedError });
});
