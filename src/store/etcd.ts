// The Backend over etcd v3 (the etcd3 client): one key per object under a prefix, every write a
// Txn that compares the key's mod_revision, so compare-and-swap is etcd's own and several
// Quarry processes could share the keys safely. Durability and replication are etcd's (a write
// is acknowledged once a quorum has it on disk).
//
// Revisions are etcd's: one global counter that also moves for keys outside the prefix (so never
// dense), and one revision for all the writes of a transaction (so "one revision, or
// consecutive ones": backend.ts).
//
// Reads are answered by a cache of the prefix fed by a watch (etcd-cache.ts: what a read is
// guaranteed to see, and when it asks etcd instead); revision() is the cache's, raised by this
// process's writes. Without the cache (`cache: false`) every read is a request and revision()
// the newest revision seen in any response or watch event.
//
// Keys under the `unwatched` prefixes (the agents' heartbeat records) live in a range of their
// own after the others (etcd-values.ts): the watches cover the rest, so etcd sends none of their
// changes, the cache does not hold them, and their reads go to etcd.
import { Etcd3, Range, type ComparatorBuilder, type DeleteBuilder, type IOptions, type IRangeResponse, type PutBuilder } from 'etcd3';
import { ConflictError } from '../errors.js';
import {
  deleteByTxn,
  putByTxn,
  type Backend,
  type KeyValue,
  type Precondition,
  type RelistSignal,
  type TxnOp,
  type WatchEvent,
  type WatchHandler,
} from './backend.js';
import type { ValueCodec } from './codec.js';
import { checkTxn } from './core.js';
import { noMemberBreaker, noRetry, ourEarlierAttempt, refused, RETRY_FOR_MS, retryPause, transient } from './etcd-retry.js';
import { EtcdCache, type CacheStats } from './etcd-cache.js';
import { etcdCallOptions, etcdChannelOptions } from './etcd-channel.js';
import { EtcdValues, mapEtcdError, reservedKey, SYNC_KEY } from './etcd-values.js';
import { EtcdWatch, type EtcdWatchDeps } from './etcd-watch.js';
import { EtcdWatchHub } from './etcd-watch-hub.js';
import { SharedDecodes } from './etcd-shared-decodes.js';
import { byKey } from './key-table.js';
import { EtcdElection, LEADER_KEY, type ElectionOptions } from './election.js';
import { EtcdEventFeed, EVENTS_KEY, type EventFeedOptions } from './etcd-event-feed.js';
import type { Fence } from './fenced.js';

export interface EtcdBackendOptions<V> {
  /** etcd's client URLs, e.g. https://10.0.0.1:2379. */
  endpoints: string[];
  /** Every key lives under it (e.g. "quarry/"): other users of the cluster are left alone. */
  prefix: string;
  /** PEM contents. A CA turns TLS on; a client certificate and key authenticate us to etcd. */
  tls?: { ca: Buffer; cert?: Buffer; key?: Buffer };
  /** What values look like in etcd (secret fields sealed: codec.ts); identity when absent. */
  codec?: ValueCodec<V>;
  /** Where a throwing watch handler's error, or a value that does not decode, goes. */
  onWatchError?: (err: unknown) => void;
  /** Per request: a call etcd has not answered by then fails as unavailable. Default 10 s. */
  requestTimeoutMs?: number;
  /** Extra etcd3 client options (tests: a faster watch backoff). */
  client?: Partial<IOptions>;
  /** Reads from a cache fed by a watch (etcd-cache.ts). Default true. */
  cache?: boolean;
  /** How long a read waits for the cache to hold what it must see before asking etcd. Default
   * 500 ms: the watch brings a change within a few ms; a cache lagging longer than this is
   * slower than a request would be. */
  cacheWaitMs?: number;
  /** Store key prefixes kept outside the range the watches cover (UNWATCHED_KINDS: the
   * agents' heartbeat records): no watch carries them, the read cache does not hold them, and
   * their reads go to etcd. Every process sharing the prefix must give the same. */
  unwatched?: readonly string[];
}

/** Keys a list reads per request: etcd answers in one gRPC message, which has a size limit. */
const PAGE = 500;

export class EtcdBackend<V = unknown> implements Backend<V> {
  readonly commitsInOrder = false;
  private readonly values: EtcdValues<V>;
  private client: Etcd3 | undefined;
  private rev = 0;
  private state: 'new' | 'open' | 'closed' = 'new';
  private readonly watches = new Set<EtcdWatch<V>>();
  private cache: EtcdCache<V> | undefined;
  private hub: EtcdWatchHub<V> | undefined;
  /** Values one of the cache's and the hub's watches decoded, for the other. */
  private readonly decodes = new SharedDecodes<V>(() => Math.min(this.cache?.position() ?? 0, this.hub?.position() ?? 0));

  constructor(private readonly opts: EtcdBackendOptions<V>) {
    if (opts.endpoints.length === 0) throw new Error('the etcd backend needs at least one endpoint');
    if (opts.prefix === '') throw new Error('the etcd backend needs a key prefix');
    this.values = new EtcdValues(opts.prefix, opts.codec, opts.unwatched);
  }

  async open(): Promise<void> {
    if (this.state !== 'new') throw new Error(`store is ${this.state === 'open' ? 'already open' : 'closed'}`);
    const tls = this.opts.tls;
    const timeout = this.opts.requestTimeoutMs ?? 10_000;
    this.client = new Etcd3({
      hosts: this.opts.endpoints,
      ...(tls ? { credentials: { rootCertificate: tls.ca, privateKey: tls.key, certChain: tls.cert } } : {}),
      defaultCallOptions: etcdCallOptions(timeout),
      ...this.opts.client,
      grpcOptions: { ...etcdChannelOptions(), ...this.opts.client?.grpcOptions },
      faultHandling: { global: noRetry, host: noMemberBreaker(), ...this.opts.client?.faultHandling },
    });
    try {
      await this.current();
    } catch (err) {
      this.client.close();
      throw mapEtcdError(err, `connecting to ${this.opts.endpoints.join(', ')}`);
    }
    this.state = 'open';
    if (this.opts.cache === false) return;
    const cache = new EtcdCache<V>({
      watch: { ...this.watchDeps(this.client), shared: this.shared },
      listAll: () => this.listAll(),
      mark: async () => {
        const client = this.writable();
        const res = await this.call('write the cache marker', () => client.put(this.values.key(SYNC_KEY)).value('').exec());
        return Number(res.header.revision);
      },
      waitMs: this.opts.cacheWaitMs ?? 500,
    });
    try {
      await cache.start();
    } catch (err) {
      await this.close();
      throw mapEtcdError(err, 'reading the documents into the cache');
    }
    this.cache = cache;
  }

  async close(): Promise<void> {
    if (this.state !== 'open') return;
    this.state = 'closed';
    const cancels: Promise<void>[] = [
      this.cache?.stop() ?? Promise.resolve(),
      this.hub?.stop() ?? Promise.resolve(),
      ...[...this.watches].map((w) => w.stop()),
    ];
    this.watches.clear();
    // The watches' stream must end before the client closes, or it outlives it and holds the
    // process; etcd's confirmations may never come on a stream torn down meanwhile: bounded.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(cancels), new Promise((resolve) => (timer = setTimeout(resolve, 2_000)))]);
    clearTimeout(timer);
    this.client?.close();
  }

  revision(): number {
    return this.cache ? this.cache.revision() : this.rev;
  }

  /** Store watchers served by the shared watch, and by one of their own (from an older
   * revision). */
  watchStats(): { shared: number; own: number } {
    return { shared: this.hub?.size() ?? 0, own: this.watches.size };
  }

  /** Values one of the two watches decoded that the other has not taken yet. */
  sharedDecodes(): number {
    return this.decodes.size();
  }

  /** The read cache's counters, when there is one. */
  cacheStats(): CacheStats | undefined {
    return this.cache?.stats();
  }

  /** From the cache once it holds `minRevision` (and all this process must see), else from
   * etcd. The bookkeeping keys (the election's) are always read from etcd: the fence is judged
   * on them. */
  async get(key: string, minRevision?: number): Promise<KeyValue<V> | undefined> {
    const cache = this.cacheOf(key);
    if (cache && !reservedKey(key) && !cache.undecodable(key) && (await cache.fresh(minRevision, { key }))) return cache.get(key);
    const res = await this.call(`get ${key}`, (c) => c.get(this.values.key(key)).exec());
    const raw = res.kvs[0];
    const kv = raw && this.values.kv(raw);
    if (kv) cache?.raise(kv.modRevision, key);
    return kv;
  }

  /** From the cache when it is fresh (see get), else from etcd: always when the list reaches
   * keys the cache does not hold. */
  async list(prefix: string): Promise<{ items: KeyValue<V>[]; revision: number }> {
    const cache = this.cache;
    if (cache && !this.values.reachesUnwatched(prefix) && !cache.undecodable(prefix) && (await cache.fresh(undefined, { prefix })))
      return cache.list(prefix);
    const listed = await this.listDirect(prefix);
    // Later reads of the cache see at least what this list showed.
    for (const kv of listed.items) this.cacheOf(kv.key)?.raise(kv.modRevision, kv.key);
    return listed;
  }

  /** The read cache, unless `key` is one it never holds (unwatched). */
  private cacheOf(key: string): EtcdCache<V> | undefined {
    return this.values.unwatched(key) ? undefined : this.cache;
  }

  /** In pages, all read at the revision of the first, so the list is one consistent state. A
   * compaction past that revision before the last page starts the list over. */
  private async listDirect(
    prefix: string,
    ranges = this.values.ranges(prefix),
    undecodable?: (key: string, err: unknown) => void,
  ): Promise<{ items: KeyValue<V>[]; revision: number }> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.listPages(prefix, ranges, undecodable);
      } catch (err) {
        if (attempt >= 3 || !(err instanceof Error) || !/compacted/.test(err.message)) throw err;
      }
    }
  }

  /** The cache's list: every watched document, the keys whose value does not decode set apart. */
  private async listAll(): Promise<{ items: KeyValue<V>[]; bad: string[]; revision: number }> {
    let bad: string[] = [];
    const listed = await this.listDirect('', [this.values.watched()], (key, err) => {
      bad.push(key);
      this.onWatchError(err);
    });
    // A list started over after a compaction reports its keys again: the last one's count.
    bad = [...new Set(bad)];
    return { ...listed, bad };
  }

  /** The bookkeeping keys are not documents: no list shows them, as no document watch does. A
   * value that does not decode fails the list, or goes to `undecodable` when given. Several
   * ranges (a prefix reaching the unwatched keys: EtcdValues.ranges) are read at the revision of
   * the first and merged in key order. */
  private async listPages(
    prefix: string,
    ranges: Range[],
    undecodable?: (key: string, err: unknown) => void,
  ): Promise<{ items: KeyValue<V>[]; revision: number }> {
    const items: KeyValue<V>[] = [];
    let revision: number | undefined;
    for (const range of ranges) revision = await this.listRange(prefix, range, items, revision, undecodable);
    if (ranges.length > 1) items.sort(byKey);
    return { items, revision: revision ?? this.rev };
  }

  /** Appends `range`'s documents to `items`, in pages all read at `revision` (when given) or at
   * the first page's, which it returns. */
  private async listRange(
    prefix: string,
    range: Range,
    items: KeyValue<V>[],
    revision: number | undefined,
    undecodable?: (key: string, err: unknown) => void,
  ): Promise<number> {
    const end = range.end;
    let start = range.start;
    for (;;) {
      const at = revision;
      const res: IRangeResponse = await this.call(`list ${prefix}`, (c) => {
        const b = c.getAll().inRange(new Range(start, end)).limit(PAGE);
        return (at === undefined ? b : b.revision(at)).exec();
      });
      revision ??= Number(res.header.revision);
      for (const raw of res.kvs) {
        if (this.values.reserved(raw.key)) continue;
        try {
          items.push(this.values.kv(raw));
        } catch (err) {
          if (!undecodable) throw err;
          undecodable(this.values.unkey(raw.key), err);
        }
      }
      const last = res.kvs[res.kvs.length - 1];
      if (!res.more || !last) break;
      start = Buffer.concat([last.key, Buffer.from([0])]);
    }
    return revision;
  }

  put(key: string, value: V, pre?: Precondition): Promise<number> {
    return putByTxn(this, key, value, pre);
  }

  delete(key: string, pre?: Precondition): Promise<number> {
    return deleteByTxn(this, key, pre);
  }

  /**
   * One etcd Txn: its compares are every precondition and "exists" for each delete that needs
   * the key; its success branch the writes; its failure branch reads the keys, so a refusal
   * names the same key and reason as the other backends (checkTxn on what etcd had).
   */
  async txn(ops: TxnOp<V>[]): Promise<number[]> {
    const client = this.writable();
    if (ops.length === 0) return [];
    const keys = new Set<string>();
    for (const o of ops) {
      if (keys.has(o.key)) throw new Error(`a transaction writes ${o.key} twice`);
      keys.add(o.key);
    }
    const sent = ops.map((o) => (o.op === 'put' ? this.values.encode(o.key, o.value) : undefined));
    const bytes = sent.map((json) => (json === undefined ? undefined : Buffer.from(json)));
    // Each key made into bytes once: etcd3 converts a string key at every use (the write, its
    // compare, the failure branch's read), three buffers per key of a 120-write status batch, all
    // alive until etcd answers.
    const wire = ops.map((o) => Buffer.from(this.values.key(o.key)));
    const writes: Array<PutBuilder | DeleteBuilder> = [];
    ops.forEach((o, i) => {
      if (o.op === 'put') {
        writes.push(client.put(wire[i]!).value(bytes[i] as Buffer));
        this.cacheOf(o.key)?.willWrite(o.key, bytes[i] as Buffer, o.value);
      } else if (o.op === 'del') writes.push(client.delete().key(wire[i]!));
    });
    let cmp: ComparatorBuilder | undefined;
    const and = (key: Buffer, column: 'Mod' | 'Version', op: '==' | '>', v: number): void => {
      cmp = cmp ? cmp.and(key, column, op, v) : client.if(key, column, op, v);
    };
    ops.forEach((o, i) => {
      if (o.pre?.modRevision !== undefined) and(wire[i]!, 'Mod', '==', o.pre.modRevision);
      if (o.op === 'del' && !o.ifExists) and(wire[i]!, 'Version', '>', 0);
    });
    // etcd3 builds a Txn from a first compare; one that always holds stands in for none.
    const txn = (cmp ?? client.if(wire[0]!, 'Mod', '>', -1)).then(...writes).else(...wire.map((key) => client.get(key)));
    const what = ops.length === 1 ? `${ops[0]!.op} ${ops[0]!.key}` : `a transaction of ${ops.length} writes`;
    const attempts = { retried: false };
    // A call that failed may still have landed (its answer was lost): its values stay expected.
    const res = await this.call(
      what,
      () => txn.commit(),
      () => (attempts.retried = true),
    );
    const rev = Number(res.header.revision);
    if (!res.succeeded) {
      const current = ops.map((_, i) => res.responses[i]?.response_range.kvs[0]);
      const landed = attempts.retried ? ourEarlierAttempt(ops, sent, current) : undefined;
      if (landed !== undefined) {
        for (const o of ops) if (o.op !== 'check') this.cacheOf(o.key)?.raise(landed, o.key);
        return ops.map((o) => (o.op === 'put' ? landed : 0));
      }
      ops.forEach((o, i) => {
        if (o.op === 'put') this.cacheOf(o.key)?.notWritten(o.key, bytes[i] as Buffer);
      });
      const found = new Map(ops.map((o, i) => [o.key, this.values.revisions(current[i])]));
      // The retry that follows a conflict must read what refused it.
      for (const [key, kv] of found) if (kv) this.cacheOf(key)?.raise(kv.modRevision, key);
      checkTxn(ops, (key) => found.get(key));
      throw new ConflictError(`${what} was refused by etcd's compare (the keys moved meanwhile)`);
    }
    // The responses are the writes', in order; a check has none and answers 0.
    let w = 0;
    const revs = ops.map((o) => {
      if (o.op === 'check') return 0;
      const r = res.responses[w++];
      return o.op === 'del' && Number(r?.response_delete_range.deleted ?? 0) === 0 ? 0 : rev;
    });
    // Read-your-writes: this process's reads see the write from now on.
    // (A delete that found nothing made no event to wait for: revision 0, nothing raised.)
    ops.forEach((o, i) => {
      if (revs[i]) this.cacheOf(o.key)?.raise(revs[i], o.key);
    });
    return revs;
  }

  /** One shared etcd watch for the watchers that start where it stands (etcd-watch-hub.ts), a
   * watch of its own for one that starts before. A handler reads at least the change it was
   * handed: the cache's floor is raised to it first. */
  watch(fromRevision: number, handler: WatchHandler<V>): () => void {
    const client = this.writable();
    const cache = this.cache;
    const floor = (e: WatchEvent<V> | RelistSignal): void => {
      if (e.type === 'relist') cache?.relisted(e.revision);
      else cache?.raise(e.revision, e.key);
    };
    this.hub ??= new EtcdWatchHub<V>(
      {
        ...this.watchDeps(client),
        shared: this.shared,
        // This process's own writes are not decoded by the hub either, when it comes first.
        ownValue: (key, raw) => this.cache?.writtenValue(key, raw),
      },
      floor,
      () => this.revision(),
    );
    const shared = this.hub.subscribe(fromRevision, handler);
    if (shared) return shared;
    const w = new EtcdWatch<V>(this.watchDeps(client), fromRevision, (e) => {
      floor(e);
      handler(e);
    });
    this.watches.add(w);
    // Started after watch() returns, like the other backends: a handler never runs before the
    // caller holds its stop function.
    queueMicrotask(() => {
      if (this.watches.has(w)) w.start();
    });
    return () => {
      this.watches.delete(w);
      void w.stop();
    };
  }

  /** Shared only while both watches run: with one, nothing would take what it leaves. A bound
   * arrow: both watches' deps hold it. */
  private readonly shared = (key: string, revision: number, decode: () => V): V =>
    this.cache && this.hub ? this.decodes.value(key, revision, decode) : decode();

  private onWatchError(err: unknown): void {
    if (this.opts.onWatchError) this.opts.onWatchError(err);
    else process.emitWarning(`store watch handler threw: ${String(err)}`);
  }

  private watchDeps(client: Etcd3): EtcdWatchDeps<V> {
    return {
      client,
      values: this.values,
      current: () => this.current(),
      seen: (r) => this.seen(r),
      onWatchError: (err) => this.onWatchError(err),
    };
  }

  /** A candidate in the controllers' leader election, on this store's etcd and prefix. */
  election(opts: ElectionOptions): EtcdElection {
    return new EtcdElection(this.writable(), { full: this.values.key(LEADER_KEY), store: LEADER_KEY }, opts);
  }

  /** The controllers' shared /events feed under this prefix, written only under `fence`. */
  eventFeed(fence: () => Fence | null, opts?: EventFeedOptions): EtcdEventFeed {
    const full = (): { key: string; modRevision: number } | null => {
      const f = fence();
      return f && { key: this.values.key(f.key), modRevision: f.modRevision };
    };
    return new EtcdEventFeed(this.writable(), this.values.key(EVENTS_KEY), full, opts);
  }

  /** Compacts etcd's history up to `revision` (tests: a watcher from before it gets relist). */
  async compact(revision: number): Promise<void> {
    const client = this.writable();
    await this.call('compact', () => client.kv.compact({ revision: String(revision), physical: true }));
  }

  /** Reads etcd's current revision (a count-only range of the prefix: no values move). */
  private async current(): Promise<number> {
    const client = this.client as Etcd3;
    const range = Range.prefix(this.opts.prefix);
    const res = await client.kv.range({ key: range.start, range_end: range.end, count_only: true });
    this.seen(Number(res.header.revision));
    return Number(res.header.revision);
  }

  private seen(revision: number): void {
    if (revision > this.rev) this.rev = revision;
  }

  /** Tries a call again, on whichever member answers, while it fails as unavailable (a member
   * gone, an etcd election) while its attempts start within RETRY_FOR_MS; then it fails as STORE_UNAVAILABLE. Our loop
   * rather than the client's so a write knows it was sent twice (ourEarlierAttempt). */
  private async call<T extends { header: { revision: string } }>(
    what: string,
    fn: (c: Etcd3) => Promise<T>,
    onRetry?: () => void,
  ): Promise<T> {
    const client = this.writable();
    const t0 = Date.now();
    let refusedInRow = 0;
    for (let attempt = 1; ; attempt++) {
      const startedAt = Date.now();
      try {
        const res = await fn(client);
        this.seen(Number(res.header.revision));
        return res;
      } catch (err) {
        if (!(err instanceof Error) || !transient(err) || this.state !== 'open') throw mapEtcdError(err, what);
        // A member that refuses the connection is down: the next draw likely finds another, at
        // once and even past the window; when three in a row refuse (etcd down), the window
        // decides. Otherwise every attempt started within the window earns another: etcd
        // answers a proposal lost with its leader only after its own request timeout (7 s
        // measured), past the window, when the next attempt would succeed.
        refusedInRow = refused(err) ? refusedInRow + 1 : 0;
        const redraw = refusedInRow > 0 && refusedInRow <= 3;
        if (!redraw && startedAt > t0 + RETRY_FOR_MS) throw mapEtcdError(err, `${what} (${attempt} attempts over ${Date.now() - t0} ms)`);
        onRetry?.();
        if (!redraw) await new Promise((resolve) => setTimeout(resolve, retryPause(attempt)));
      }
    }
  }

  private writable(): Etcd3 {
    if (this.state !== 'open' || !this.client) throw new Error(`store is ${this.state === 'new' ? 'not open' : 'closed'}`);
    return this.client;
  }
}
