// The etcd backend on a three-member cluster, given all three endpoints: each member in turn is
// killed (SIGKILL) and restarted underneath, and writes and a watch carry on. A write caught by
// the kill fails as STORE_UNAVAILABLE (retryable) and goes through when tried again.
import test from 'ava';
import { ServiceUnavailableError } from '../../src/errors.js';
import { EtcdBackend, type RelistSignal, type WatchEvent } from '../../src/store/index.js';
import { EtcdCluster } from './etcd-server.js';
import { until } from './helpers.js';

let cluster: EtcdCluster | undefined;

test.before(async () => {
  cluster = await EtcdCluster.start(3);
});

test.after.always(async () => {
  await cluster?.stop();
});

/** Tries again while etcd says "unavailable", as a loop would; gives up after 30 s. */
async function retrying<T>(fn: () => Promise<T>, retries: { n: number }): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (!(err instanceof ServiceUnavailableError) || Date.now() > deadline) throw err;
      retries.n++;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

test('etcd cluster: writes and a watch keep working while each member in turn is killed and restarted', async (t) => {
  const etcd = cluster as EtcdCluster;
  const b = new EtcdBackend<{ n: number }>({ endpoints: etcd.endpoints(), prefix: 'cluster-test/', requestTimeoutMs: 5_000 });
  await b.open();
  t.teardown(() => b.close());
  const events: (WatchEvent<{ n: number }> | RelistSignal)[] = [];
  b.watch(b.revision(), (e) => events.push(e));
  const written: string[] = [];
  const retries = { n: 0 };
  const write = async (key: string, n: number): Promise<void> => {
    await retrying(() => b.put(key, { n }), retries);
    written.push(key);
  };
  await write('before', 0);
  for (let member = 0; member < 3; member++) {
    await etcd.kill(member);
    for (let j = 1; j <= 3; j++) await write(`down${member}-${j}`, j);
    await until(() => events.length >= written.length, `the watch to see the writes with member ${member} down`, 40_000);
    await etcd.restart(member);
    await write(`up${member}`, 0);
  }
  await until(() => events.length >= written.length, 'the last write', 40_000);
  t.log(`${retries.n} writes were retried after STORE_UNAVAILABLE`);
  t.false(
    events.some((e) => e.type === 'relist'),
    'no history was lost',
  );
  const puts = events.filter((e): e is WatchEvent<{ n: number }> => e.type === 'put');
  // A write retried after a lost answer may have landed twice: the same key, in a row.
  t.deepEqual(
    puts.map((e) => e.key).filter((k, i, all) => k !== all[i - 1]),
    written,
  );
  t.true(
    puts.every((e, i) => i === 0 || e.revision > (puts[i - 1] as WatchEvent).revision),
    'revisions only grow',
  );
  t.deepEqual((await b.list('')).items.map((kv) => kv.key).sort(), [...written].sort());
});
