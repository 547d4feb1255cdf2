// /events with two controllers on etcd (#18 part 3), through a real EventSource: a client of the
// follower gets the leader's events from the follower itself (its hub streams the store's feed,
// nothing is relayed); when the leader is deposed and the follower takes over, the same client
// keeps streaming with ids that only grow, and a client resuming with Last-Event-ID gets exactly
// what came after.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import type { Quarry } from '../../src/main.js';
import { deleteLeaderKey, etcdPrefix, useEtcd } from '../store/backends.js';
import { etcdMissing } from '../store/etcd-server.js';
import { waitFor } from '../helpers/wait.js';
import { increasing, openEventStream, type Seen } from './event-stream.js';
import { ETCD_ADMIN_PASSWORD, startEtcdQuarry } from './etcd-quarry.js';

useEtcd(test);
const it = etcdMissing() ? test.skip : test.serial;

const nodes = (seen: Seen[]): string[] => seen.filter((e) => e.type === 'node.state.changed').map((e) => e.nodeId ?? '');

it("/events on two controllers: the follower streams the leader's events from the store, and goes on with growing ids after a failover", async (t) => {
  const prefix = etcdPrefix();
  const secretsKey = randomBytes(32).toString('base64');
  const start = (): Promise<Quarry> => startEtcdQuarry(t, prefix, secretsKey);
  const first = await start();
  await waitFor('the first leads', () => first.leader.isLeader() && first.manager.running());
  const second = await start();
  await waitFor("the second knows the leader's URL", () => second.leader.leaderUrl() === first.url);

  const onSecond = (await openEventStream(t, second.url, ETCD_ADMIN_PASSWORD)).seen;
  t.is(first.hub.stats().clients, 0, 'served by the follower, not relayed to the leader');
  t.is(second.hub.stats().clients, 1);
  first.bus.publish('node.state.changed', { nodeId: 'n-before-1', status: 'ready' });
  first.bus.publish('node.state.changed', { nodeId: 'n-before-2', status: 'ready' });
  await waitFor("the leader's events on the follower", () => nodes(onSecond).includes('n-before-2'));
  // What the follower publishes itself is its own: not on anyone's stream.
  second.bus.publish('node.state.changed', { nodeId: 'n-follower', status: 'ready' });

  await deleteLeaderKey(t, prefix);
  await waitFor('the second leads with its loops', () => second.leader.isLeader() && second.manager.running());
  second.bus.publish('node.state.changed', { nodeId: 'n-after', status: 'ready' });
  await waitFor("the new leader's event on the same stream", () => nodes(onSecond).includes('n-after'));
  t.true(increasing(onSecond), `ids only grow: ${onSecond.map((e) => e.id).join(',')}`);
  t.false(nodes(onSecond).includes('n-follower'), "a follower's own bus is not the stream");
  t.deepEqual(
    nodes(onSecond).filter((n) => n.startsWith('n-')),
    ['n-before-1', 'n-before-2', 'n-after'],
  );

  // A client that had seen up to n-before-1 resumes on the new leader: exactly what followed.
  const after = onSecond.find((e) => e.nodeId === 'n-before-1')?.id ?? 0;
  const resumed = (await openEventStream(t, second.url, ETCD_ADMIN_PASSWORD, after)).seen;
  await waitFor('the replay', () => nodes(resumed).includes('n-after'));
  t.is(resumed[0]?.nodeId, 'n-before-2', 'the replay starts right after the id given');
  // Up to n-after: the new leader's loops may have more to say by now.
  const last = onSecond.find((e) => e.nodeId === 'n-after')?.id ?? 0;
  const upTo = (seen: Seen[]): number[] => seen.filter((e) => e.id > after && e.id <= last).map((e) => e.id);
  t.deepEqual(upTo(resumed), upTo(onSecond));
});
