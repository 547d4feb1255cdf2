// The controllers' shared /events feed (#18 part 3) on a real etcd: the leader's events reach
// every reader once and in order, in batches larger than one etcd transaction; a follower
// writes nothing; a deposed leader's late batch is refused whole and the next leader numbers
// on from what was kept; etcd deletes the events once their retention has passed.
import test, { type ExecutionContext } from 'ava';
import type { EtcdBackend, EtcdElection, EtcdEventFeed, FeedEvent } from '../../src/store/index.js';
import type { StoredDoc } from '../../src/store/stored.js';
import { waitFor } from '../helpers/wait.js';
import { deleteLeaderKey, etcdPrefix, openEtcd, useEtcd } from './backends.js';
import { etcdMissing } from './etcd-server.js';

useEtcd(test);
const it = etcdMissing() ? test.skip : test.serial;

interface Controller {
  backend: EtcdBackend<StoredDoc>;
  election: EtcdElection;
  feed: EtcdEventFeed;
  errors: string[];
}

async function controller(t: ExecutionContext, prefix: string, id: string, retentionSeconds?: number): Promise<Controller> {
  const backend = await openEtcd<StoredDoc>(t, { prefix });
  // Long leases: a loaded machine's late keepalive must depose nobody here.
  const election = backend.election({ me: { id, url: `http://${id}.test:8080` }, ttlSeconds: 30, onLost: () => {} });
  t.teardown(() => election.stop().catch(() => undefined));
  const errors: string[] = [];
  const feed = backend.eventFeed(() => election.fence(), {
    onError: (err) => errors.push(String(err)),
    ...(retentionSeconds ? { retentionSeconds } : {}),
  });
  t.teardown(() => feed.close());
  return { backend, election, feed, errors };
}

const event = (seq: number, type = 'node.state.changed'): FeedEvent => ({
  seq,
  at: new Date().toISOString(),
  type,
  payload: { nodeId: `n-${seq}` },
});

async function reader(t: ExecutionContext, feed: EtcdEventFeed, after = 0): Promise<number[]> {
  const seqs: number[] = [];
  const stop = await feed.follow(after, (e) => seqs.push(e.seq));
  t.teardown(stop);
  return seqs;
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

it("the leader's events reach every reader once and in order; a follower's are not kept; a late reader replays the newest", async (t) => {
  const prefix = etcdPrefix();
  const a = await controller(t, prefix, 'a');
  const b = await controller(t, prefix, 'b');
  await a.election.campaign();
  const onA = await reader(t, a.feed);
  const onB = await reader(t, b.feed);
  // b does not lead: whatever it appends goes nowhere.
  b.feed.append(event(10_000));
  // 250: three transactions, the middle one full.
  for (const seq of range(1, 250)) a.feed.append(event(seq));
  await waitFor('b read the 250', () => onB.length >= 250);
  await waitFor('a read the 250', () => onA.length >= 250);
  t.deepEqual(onB, range(1, 250));
  t.deepEqual(onA, range(1, 250));
  t.is(await b.feed.latest(), 250, "the follower's event was not written");
  t.deepEqual(
    (await b.feed.recent(5)).map((e) => e.seq),
    range(246, 250),
  );
  // A reader that starts from the middle gets only what follows.
  const late = await reader(t, b.feed, 240);
  a.feed.append(event(251));
  await waitFor('the late reader up to 251', () => late.at(-1) === 251);
  t.deepEqual(late, range(241, 251));
  t.deepEqual(a.errors, []);
});

it("a deposed leader's late batch is refused whole; the next leader numbers on and readers never go back", async (t) => {
  const prefix = etcdPrefix();
  const a = await controller(t, prefix, 'a');
  const b = await controller(t, prefix, 'b');
  const fenceA = await a.election.campaign();
  const seen = await reader(t, b.feed);
  for (const seq of range(1, 5)) a.feed.append(event(seq));
  await waitFor('b read 1–5', () => seen.length >= 5);
  const bLeads = b.election.campaign();
  // a's key deleted behind its back (what its lease's end does); b takes the leadership.
  await deleteLeaderKey(t, prefix);
  await bLeads;
  // A write still carrying a's old proof, however late it comes: refused, nothing of it kept.
  const stale: string[] = [];
  const late = a.backend.eventFeed(() => fenceA, { onError: (err) => stale.push(String(err)) });
  t.teardown(() => late.close());
  for (const seq of range(6, 8)) late.append(event(seq, 'stale'));
  await waitFor('the stale batch refused', () => stale.length > 0);
  t.regex(stale[0] ?? '', /no longer leads/);
  const next = (await b.feed.latest()) + 1;
  t.is(next, 6, 'the new leader numbers on from the last kept event');
  b.feed.append(event(next));
  await waitFor('the reader at 6', () => seen.includes(6));
  const types = (await b.feed.after(0)).events.map((e) => e.type);
  t.false(types.includes('stale'), types.join(','));
  t.deepEqual(seen, range(1, 6));
});

it('etcd deletes the events once their retention has passed', async (t) => {
  const prefix = etcdPrefix();
  const a = await controller(t, prefix, 'a', 2);
  await a.election.campaign();
  a.feed.append(event(1));
  await waitFor('the event kept', async () => (await a.feed.latest()) === 1);
  // The lease was granted for the retention and never renewed: etcd lets it expire.
  await waitFor('the event gone', async () => (await a.feed.latest()) === 0, 30_000);
  t.deepEqual(a.errors, []);
});
