// The backends the store's contract tests run on, so they cannot drift: memory, embedded, and
// etcd (a real one, one per test file, each test under a prefix of its own).
import type { ExecutionContext, TestFn } from 'ava';
import { Etcd3 } from 'etcd3';
import { EmbeddedBackend, EtcdBackend, LEADER_KEY, MemoryBackend, type Backend, type ValueCodec } from '../../src/store/index.js';
import { EtcdCluster } from './etcd-server.js';
import { tempDir } from './helpers.js';

export interface OpenOptions<V> {
  historySize?: number;
  onWatchError?: (e: unknown) => void;
  codec?: ValueCodec<V>;
}

export interface Subject {
  name: string;
  open: <V = unknown>(t: ExecutionContext, opts?: OpenOptions<V>) => Promise<Backend<V>>;
  /** etcd's revision is the whole server's: its tests run one at a time, so the revisions a
   * test's writes get still follow each other and its assertions stay exact. */
  serial: boolean;
  /** The history is bounded by historySize (memory, embedded); etcd's by compaction. */
  boundedHistory: boolean;
  /** Events caught up on from the history carry prevValue (etcd keeps every old value). */
  replayHasPrev: boolean;
  /** A transaction's writes share one revision (etcd) rather than take consecutive ones. */
  txnOneRevision: boolean;
}

let cluster: EtcdCluster | undefined;
let prefixes = 0;

/** A fresh prefix per backend opened on the file's etcd. */
export const etcdPrefix = (): string => `quarry-test/${process.pid}/${++prefixes}/`;

export function etcdEndpoints(): string[] {
  if (!cluster) throw new Error('etcd was not started: call backendSubjects(test) at the top of the file');
  return cluster.endpoints();
}

/** Opens an EtcdBackend on the file's etcd, closed when the test ends. */
export async function openEtcd<V>(
  t: ExecutionContext,
  opts: OpenOptions<V> & { endpoints?: string[]; prefix?: string; cache?: boolean; unwatched?: string[] } = {},
): Promise<EtcdBackend<V>> {
  const b = new EtcdBackend<V>({
    endpoints: opts.endpoints ?? etcdEndpoints(),
    prefix: opts.prefix ?? etcdPrefix(),
    ...(opts.cache === false ? { cache: false } : {}),
    ...(opts.unwatched ? { unwatched: opts.unwatched } : {}),
    ...(opts.codec ? { codec: opts.codec } : {}),
    ...(opts.onWatchError ? { onWatchError: opts.onWatchError } : {}),
  });
  await b.open();
  t.teardown(() => b.close());
  return b;
}

/** Deletes the election key behind its holder's back: what the end of its lease does. */
export async function deleteLeaderKey(t: ExecutionContext, prefix: string): Promise<void> {
  const raw = new Etcd3({ hosts: etcdEndpoints() });
  t.teardown(() => raw.close());
  await raw
    .delete()
    .key(prefix + LEADER_KEY)
    .exec();
}

/** Registers the hooks that start the file's etcd before its tests and stop it after them. */
export function useEtcd(test: TestFn): void {
  test.before(async () => {
    cluster = await EtcdCluster.start(1);
  });
  test.after.always(async () => {
    await cluster?.stop();
  });
}

/** The backends (etcd twice: with its read cache, and without it, every read a request);
 * registers the hooks that start and stop the file's etcd. */
export function backendSubjects(test: TestFn): Subject[] {
  useEtcd(test);
  return [
    {
      name: 'memory',
      serial: false,
      boundedHistory: true,
      replayHasPrev: false,
      txnOneRevision: false,
      async open<V>(_t: ExecutionContext, opts: OpenOptions<V> = {}) {
        const b = new MemoryBackend<V>(opts);
        await b.open();
        return b;
      },
    },
    {
      name: 'embedded',
      serial: false,
      boundedHistory: true,
      replayHasPrev: false,
      txnOneRevision: false,
      async open<V>(t: ExecutionContext, opts: OpenOptions<V> = {}) {
        const b = new EmbeddedBackend<V>(await tempDir(t), opts);
        await b.open();
        t.teardown(() => b.close());
        return b;
      },
    },
    { name: 'etcd', serial: true, boundedHistory: false, replayHasPrev: true, txnOneRevision: true, open: openEtcd },
    {
      name: 'etcd (no read cache)',
      serial: true,
      boundedHistory: false,
      replayHasPrev: true,
      txnOneRevision: true,
      open: <V>(t: ExecutionContext, opts: OpenOptions<V> = {}) => openEtcd<V>(t, { ...opts, cache: false }),
    },
  ];
}

/** test or test.serial, as the subject needs. */
export function testFor(test: TestFn, s: Subject): (title: string, impl: (t: ExecutionContext) => Promise<void>) => void {
  return (title, impl) => (s.serial ? test.serial(title, impl) : test(title, impl));
}
