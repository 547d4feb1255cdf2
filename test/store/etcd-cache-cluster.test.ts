// The etcd backend's read cache when its watch breaks, on a three-member cluster: the member the
// cache watches through is killed, another client writes, deletes and compacts meanwhile, and
// the member comes back. While the watch is down the cache serves nothing (a read goes to etcd,
// here unreachable, and fails as retryable); once the member is back the cache has listed again
// and holds every change made while it was away, lost by no watch. A member cut off from the
// others stops the cache serving too: its watch would deliver nothing new.
import test from 'ava';
import { ServiceUnavailableError } from '../../src/errors.js';
import { EtcdBackend, type RelistSignal, type WatchEvent } from '../../src/store/index.js';
import { waitFor } from '../helpers/wait.js';
import { EtcdCluster } from './etcd-server.js';

let cluster: EtcdCluster | undefined;

test.before(async () => {
  cluster = await EtcdCluster.start(3);
});

test.after.always(async () => {
  await cluster?.stop();
});

async function open(endpoints: string[], prefix: string): Promise<EtcdBackend<{ n: number }>> {
  const b = new EtcdBackend<{ n: number }>({ endpoints, prefix, requestTimeoutMs: 2_000 });
  await b.open();
  return b;
}

test.serial('etcd cache: a broken watch serves nothing stale, and the cache lists again with every change made meanwhile', async (t) => {
  const etcd = cluster as EtcdCluster;
  const [m0, m1, m2] = etcd.endpoints() as [string, string, string];
  const prefix = 'cache-break/';
  // The reader reaches etcd through member 0 only: killing it breaks the reader's watch.
  const reader = await open([m0], prefix);
  t.teardown(() => reader.close());
  const writer = await open([m1, m2], prefix);
  t.teardown(() => writer.close());
  await writer.put('changed', { n: 1 });
  await writer.put('deleted', { n: 1 });
  await waitFor('the reader to hold both', async () => (await reader.list('')).items.length === 2);
  // A watcher of the reader's store, on the reader's member too.
  const seen: (WatchEvent<{ n: number }> | RelistSignal)[] = [];
  reader.watch(reader.revision(), (e) => seen.push(e));

  await etcd.kill(0);
  await waitFor('the reader to notice', () => reader.cacheStats()?.synced === false);
  await writer.put('changed', { n: 2 });
  await writer.delete('deleted');
  await writer.put('created', { n: 3 });
  // The history the reader's watch would resume from is compacted away too.
  const compacted = writer.revision();
  await writer.compact(compacted);
  // Not the cached { n: 1 }: etcd is asked, and the reader's only member is down.
  await t.throwsAsync(reader.get('changed'), { instanceOf: ServiceUnavailableError });

  await etcd.restart(0);
  await waitFor('the reader synced again', () => reader.cacheStats()?.synced === true, 60_000);
  const stats = reader.cacheStats();
  t.true((stats?.resyncs ?? 0) >= 1, 'it listed again');
  const hits = stats?.hits ?? 0;
  t.deepEqual(
    (await reader.list('')).items.map((kv) => [kv.key, kv.value.n]),
    [
      ['changed', 2],
      ['created', 3],
    ],
  );
  t.is((await reader.get('changed'))?.value.n, 2);
  t.is(await reader.get('deleted'), undefined);
  t.true((reader.cacheStats()?.hits ?? 0) > hits, 'from the cache again');
  // And it follows the watch again.
  await writer.put('changed', { n: 4 });
  await waitFor('the next change', async () => (await reader.get('changed'))?.value.n === 4);
  // The watcher lost its history too: told once to list again, past the compaction, then of the
  // change after it, with the value it replaced.
  await waitFor('the watcher to hear of it', () => seen.some((e) => e.type === 'put'));
  t.deepEqual(
    seen.map((e) => (e.type === 'relist' ? ['relist', e.revision >= compacted] : [e.type, e.key, e.value.n, e.prevValue?.n])),
    [
      ['relist', true],
      ['put', 'changed', 4, 2],
    ],
  );
});

test.serial(
  'etcd cache: a member that lost its leader ends the watch, so the cache serves nothing stale; it serves again once a leader is back',
  async (t) => {
    const etcd = cluster as EtcdCluster;
    const [m0] = etcd.endpoints() as [string, string, string];
    const prefix = 'cache-no-leader/';
    const reader = await open([m0], prefix);
    t.teardown(() => reader.close());
    await reader.put('k', { n: 1 });
    t.true(reader.cacheStats()?.synced);
    // Members 1 and 2 frozen: member 0 is alive and answers, but has no leader. Its watch stream
    // has no deadline; only etcd ending it (the calls require a leader) tells the cache.
    etcd.pause(1);
    etcd.pause(2);
    t.teardown(() => {
      etcd.resume(1);
      etcd.resume(2);
    });
    await waitFor('the reader to stop serving', () => reader.cacheStats()?.synced === false, 60_000);
    await t.throwsAsync(reader.get('k'), { instanceOf: ServiceUnavailableError });
    etcd.resume(1);
    etcd.resume(2);
    await waitFor('the reader synced again', () => reader.cacheStats()?.synced === true, 60_000);
    const hits = reader.cacheStats()?.hits ?? 0;
    await reader.put('k', { n: 2 });
    t.is((await reader.get('k'))?.value.n, 2);
    t.true((reader.cacheStats()?.hits ?? 0) > hits, 'from the cache again');
  },
);
