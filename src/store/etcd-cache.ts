// The etcd backend's read cache: every document under the prefix in memory (but the unwatched
// ones, etcd.ts), kept current by one watch of the prefix, so the loops' gets and lists are
// answered here instead of by a request to etcd each (a Kubernetes informer's cache). Writes
// still go to etcd, and compare-and-swap is still etcd's, on the object's revision: a read that
// lags costs at most a conflict and a retry.
//
// What a read of a key is guaranteed to see (its floor): every write of it this process had
// acknowledged, every event of it a watcher of this backend had been handed (a loop woken by a
// change reads at least that change, and every earlier change of any key: events come in
// revision order) and every version of it a direct read had returned (reads do not go back in
// time); a list, the same for every key under its prefix; and for every read, the revision a
// relist or the caller (a resourceVersion) names. A read waits for the cache to reach the
// floor, at most `waitMs`, and then asks etcd: every one of those revisions is an event under
// the prefix, which the cache's watch delivers. Changes by other controllers appear as fast as
// etcd's watch brings them.
//
// When the cache is not synced, reads go to etcd, as they all did before the cache:
// - at start-up the backend's open() waits for the first list instead: nothing is served yet;
// - while the watch's stream is broken (a member went away, or lost its leader:
//   etcd-channel.ts): its lag is then unbounded, and a direct read is correct, and fails with
//   STORE_UNAVAILABLE exactly when etcd is away. The watch resumes at the revision
//   after the last one it delivered (etcd-watch.ts), so nothing is lost, but the cache serves
//   again only once it has caught up: it writes a marker key (`~sync`, no document) after the
//   stream is back and waits for the watch to deliver it (etcd 3.4 tells a watcher its
//   position only with an event; any event past the marker's revision means every change
//   before it was delivered);
// - after etcd compacted the history the watch needed to resume (a long break), when what
//   changed is unknown: the cache lists everything again (a few hundred ms at thousands of
//   documents, as long as etcd is away), and serves again once the list is in.
//
// What this process writes comes back through the watch too. When the bytes are the ones it
// sent, the cache takes the value as written instead of decoding them again (the embedded store
// keeps the written value as well): the writer holds that value anyway, so the cache shares it
// rather than holding a second copy, and the leader, which writes the agents' heartbeat records
// (about 1,000 a second at 10,000 agents), decodes none of them.
import type { KeyValue, RelistSignal, WatchEvent } from './backend.js';
import { EtcdWatch, type EtcdWatchDeps } from './etcd-watch.js';
import { KeyTable } from './key-table.js';

export interface EtcdCacheOptions<V> {
  /** The watch's dependencies (the client, the prefix, the values). */
  watch: EtcdWatchDeps<V>;
  /** Writes the marker key; resolves with its revision. */
  mark(): Promise<number>;
  /** Every document under the prefix, read from etcd at one revision; `bad`: the keys whose
   * value does not decode. */
  listAll(): Promise<{ items: KeyValue<V>[]; bad: string[]; revision: number }>;
  /** How long a read waits for the cache to reach its floor before it asks etcd. */
  waitMs: number;
  /** First pause after a failed list; doubles up to 5 s. */
  retryMs?: number;
}

export interface CacheStats {
  synced: boolean;
  revision: number;
  keys: number;
  /** Reads answered by the cache, and by etcd (not synced, or the wait ran out). */
  hits: number;
  misses: number;
  /** Reads that waited for the cache to reach their floor, and those whose wait ran out. */
  waits: number;
  timeouts: number;
  /** Lists of the whole prefix after the first. */
  resyncs: number;
}

/** A put whose value does not decode, in the order of the events. */
interface Undecodable {
  type: 'bad';
  key: string;
  revision: number;
}

interface Waiter {
  need: number;
  resolve: (fresh: boolean) => void;
  timer: NodeJS.Timeout;
}

export class EtcdCache<V> {
  private table = new KeyTable<V>();
  /** Keys whose value in etcd does not decode: their reads go to etcd, which says why. */
  private bad = new Set<string>();
  /** Every event up to this revision is in the table (while synced). */
  private rev = 0;
  /** What every read must see: see the header. */
  private floor = 0;
  /** What reads of one key must see, above the cache's revision: this process's writes of it,
   * the events of it handed to watchers. Kept per key because a floor for all would make every
   * read wait for the cache after each write anywhere — 1,000 heartbeat records a second at
   * 10,000 agents held every agent's report until the cache had caught up. Pruned as the
   * cache reaches them. */
  private readonly keyFloors = new Map<string, number>();
  /** The same, in the order raised (nearly revision order): pruned from the front as the cache
   * advances, so a cache lagging behind a burst of writes does not scan them all at each step. */
  private readonly raisedOrder: { key: string; revision: number }[] = [];
  private raisedHead = 0;
  /** The highest of those, for revision() and for lists. */
  private keyTop = 0;
  /** The table holds a list and the events after it (false while a list is being taken). */
  private listed = false;
  /** The watch's stream is up and caught up (at start: being set up, from the list's revision). */
  private connected = true;
  /** After a break: the marker's revision the watch must deliver before the cache serves. */
  private catchUp = 0;
  /** Moves at every break, so a marker written before one is not waited for after it. */
  private breaks = 0;
  private broken = false;
  private stopped = false;
  /** Moves at every relist, so a list begun before one is not used after it. */
  private epoch = 0;
  /** Events delivered while a list is being taken; applied over it. */
  private buffer: (WatchEvent<V> | Undecodable)[] | null = null;
  /** The watch's position: every event up to it has been handed over. */
  private watchPos = 0;
  private watch: EtcdWatch<V> | undefined;
  private readonly waiters = new Set<Waiter>();
  /** The values of this process's writes whose event has not come yet, and the bytes sent. */
  private readonly writing = new Map<string, { bytes: Buffer; value: V }>();
  private readonly counts = { hits: 0, misses: 0, waits: 0, timeouts: 0, resyncs: 0 };

  constructor(private readonly opts: EtcdCacheOptions<V>) {}

  /** The first list, then the watch from its revision. Rejects when etcd does not answer. */
  async start(): Promise<void> {
    this.replace(await this.opts.listAll());
    const revision = this.rev;
    this.listed = true;
    const deps: EtcdWatchDeps<V> = {
      ...this.opts.watch,
      withoutPrevious: true,
      advanced: (r) => this.advanced(r),
      disconnected: () => this.setConnected(false),
      connected: () => this.setConnected(true),
      undecodable: (key, r) => this.onEvent({ type: 'bad', key, revision: r }),
      ownValue: (key, raw) => this.ownValue(key, raw),
    };
    this.watch = new EtcdWatch<V>(deps, revision, (e) => this.onEvent(e));
    this.watch.start();
  }

  /** Resolves once etcd confirmed the watch's cancel (EtcdWatch.stop). */
  stop(): Promise<void> {
    this.stopped = true;
    this.listed = false;
    this.wake();
    return this.watch?.stop() ?? Promise.resolve();
  }

  /** The newest revision a read is guaranteed to see. */
  revision(): number {
    return Math.max(this.rev, this.floor, this.keyTop);
  }

  /** A revision reads of `key` must see from now on (an acknowledged write of it, an event of
   * it delivered, a version of it read from etcd); without a key, every read. A read of one key
   * still sees every change of it up to an event delivered to its caller: the watchers are
   * handed events in revision order, each key's floor raised before its handler runs. */
  raise(revision: number, key?: string): void {
    if (key === undefined) {
      if (revision > this.floor) this.floor = revision;
      return;
    }
    if (revision <= this.rev || revision <= (this.keyFloors.get(key) ?? 0)) return;
    this.keyFloors.set(key, revision);
    this.raisedOrder.push({ key, revision });
    if (revision > this.keyTop) this.keyTop = revision;
  }

  /** This process is writing `value` to `key` as `bytes` (before the write is sent: its event
   * may come before its answer). */
  willWrite(key: string, bytes: Buffer, value: V): void {
    this.writing.set(key, { bytes, value });
  }

  /** The write of `bytes` to `key` was refused: no event of it will come. */
  notWritten(key: string, bytes: Buffer): void {
    if (this.writing.get(key)?.bytes === bytes) this.writing.delete(key);
  }

  /** The value this process wrote, when `raw` is what it sent. Other bytes are another writer's
   * (ours may still come), so the entry stays; identical bytes decode to an identical value. */
  private ownValue(key: string, raw: Buffer): { value: V } | undefined {
    const w = this.writtenValue(key, raw);
    if (w) this.writing.delete(key);
    return w;
  }

  /** The same, left for the cache's own watch to take (the watchers' hub asks it). */
  writtenValue(key: string, raw: Buffer): { value: V } | undefined {
    const w = this.writing.get(key);
    return w && w.bytes.equals(raw) ? { value: w.value } : undefined;
  }

  /** Every event up to this revision has been handed to the cache. */
  position(): number {
    return this.watchPos;
  }

  /** A watcher of the backend was told to list again at `revision`: its next lists must see at
   * least that, which may be a revision of a key outside the prefix, so the cache lists too. */
  relisted(revision: number): void {
    this.raise(revision);
    if (this.rev < revision) this.resync();
  }

  /** Whether a read of `scope` (a key, or the keys under a prefix) may be answered from the
   * cache: synced and at the floor (or `atLeast`), waiting for it at most waitMs. Counts the
   * read as a hit or a miss. */
  async fresh(atLeast = 0, scope: { key: string } | { prefix: string } = { prefix: '' }): Promise<boolean> {
    const need = Math.max(this.floor, atLeast, this.keyNeed(scope));
    let ok = this.synced() && this.rev >= need;
    if (!ok && this.synced()) {
      this.counts.waits++;
      ok = await new Promise<boolean>((resolve) => {
        const w: Waiter = {
          need,
          resolve,
          timer: setTimeout(() => {
            this.waiters.delete(w);
            this.counts.timeouts++;
            resolve(false);
          }, this.opts.waitMs),
        };
        w.timer.unref();
        this.waiters.add(w);
      });
    }
    if (ok) this.counts.hits++;
    else this.counts.misses++;
    return ok;
  }

  get(key: string): KeyValue<V> | undefined {
    return this.table.get(key);
  }

  /** A key's floor; a list's, the highest of any key's still ahead of the cache (a list waits
   * as long as it did under one floor for all, while any write is in flight). */
  private keyNeed(scope: { key: string } | { prefix: string }): number {
    if ('key' in scope) return this.keyFloors.get(scope.key) ?? 0;
    return this.keyFloors.size > 0 ? this.keyTop : 0;
  }

  /** Drops the floors the cache has reached, from the front of the order they were raised in.
   * One raised out of order stays until the front passes it: harmless, it is below the cache. */
  private prune(): void {
    const order = this.raisedOrder;
    while (this.raisedHead < order.length && (order[this.raisedHead]?.revision ?? 0) <= this.rev) {
      const { key, revision } = order[this.raisedHead++]!;
      if (this.keyFloors.get(key) === revision) this.keyFloors.delete(key);
    }
    if (this.raisedHead > 1024 && this.raisedHead * 2 > order.length) {
      order.splice(0, this.raisedHead);
      this.raisedHead = 0;
    }
  }

  /** Whether a read of `key`, or a list of `prefix`, must go to etcd: a value there does not
   * decode, and only etcd's answer says how. */
  undecodable(prefix: string): boolean {
    if (this.bad.size === 0) return false;
    for (const key of this.bad) if (key.startsWith(prefix)) return true;
    return false;
  }

  /** Every key starting with prefix, in key order, and the revision the cache holds. */
  list(prefix: string): { items: KeyValue<V>[]; revision: number } {
    return { items: this.table.list(prefix), revision: this.rev };
  }

  stats(): CacheStats {
    return { synced: this.synced(), revision: this.rev, keys: this.table.size, ...this.counts };
  }

  private onEvent(e: WatchEvent<V> | Undecodable | RelistSignal): void {
    // The history the watch needed is gone (compacted): what changed meanwhile is unknown.
    if (e.type === 'relist') this.resync();
    else if (this.buffer) this.buffer.push(e);
    else this.apply(e);
  }

  private apply(e: WatchEvent<V> | Undecodable): void {
    // At or below the cache's revision: already in the list the table was made from.
    if (e.revision <= this.rev) return;
    if (e.type === 'bad') this.bad.add(e.key);
    else this.bad.delete(e.key);
    if (e.type === 'put') this.table.set({ key: e.key, value: e.value, createRevision: e.createRevision, modRevision: e.revision });
    else this.table.delete(e.key);
    // A put of ours whose call failed and never landed would otherwise stay expected for as
    // long as nobody writes the key again.
    if (e.type === 'delete') this.writing.delete(e.key);
  }

  private synced(): boolean {
    return this.listed && this.connected;
  }

  private advanced(revision: number): void {
    this.watchPos = Math.max(this.watchPos, revision);
    if (this.catchUp > 0 && this.watchPos >= this.catchUp) {
      this.catchUp = 0;
      this.connected = true;
    }
    // While a list is being taken the events wait in the buffer: the table is not there yet.
    if (!this.listed) return;
    this.rev = Math.max(this.rev, revision);
    this.wake();
  }

  private setConnected(up: boolean): void {
    if (!up) {
      this.breaks++;
      this.broken = true;
      this.catchUp = 0;
      this.connected = false;
      this.wake();
    } else if (this.broken) {
      this.broken = false;
      void this.markAndCatchUp(this.breaks);
    }
  }

  /** After a break: the marker, then the watch delivering it (advanced) syncs the cache. */
  private async markAndCatchUp(breaks: number): Promise<void> {
    for (let delay = this.opts.retryMs ?? 100; ; delay = Math.min(delay * 2, 5_000)) {
      try {
        const revision = await this.opts.mark();
        if (this.stopped || breaks !== this.breaks) return;
        this.catchUp = revision;
        this.advanced(this.watchPos);
        return;
      } catch (err) {
        if (this.stopped || breaks !== this.breaks) return;
        this.opts.watch.onWatchError(err);
        await new Promise((resolve) => setTimeout(resolve, delay).unref());
      }
    }
  }

  /** Lists everything again (until it succeeds, or a newer relist supersedes it). */
  private resync(): void {
    this.epoch++;
    // Writes whose event the lost history held would wait for ever: the list brings them.
    this.writing.clear();
    this.listed = false;
    this.buffer ??= [];
    this.wake();
    void this.relist(this.epoch);
  }

  private async relist(epoch: number): Promise<void> {
    for (let delay = this.opts.retryMs ?? 100; ; delay = Math.min(delay * 2, 5_000)) {
      if (this.superseded(epoch)) return;
      try {
        const listed = await this.opts.listAll();
        if (this.superseded(epoch)) return;
        const buffered = this.buffer ?? [];
        this.buffer = null;
        this.replace(listed);
        // The watch went on meanwhile, without a gap: what it delivered after the list's
        // revision goes over the list, and the cache is then where the watch is.
        for (const e of buffered) this.apply(e);
        this.rev = Math.max(this.rev, this.watchPos);
        this.counts.resyncs++;
        this.listed = true;
        this.wake();
        return;
      } catch (err) {
        // A list cut short by close() is no failure to report.
        if (this.superseded(epoch)) return;
        this.opts.watch.onWatchError(err);
        await new Promise((resolve) => setTimeout(resolve, delay).unref());
      }
    }
  }

  /** After an await: stopped, or a newer relist started another list. */
  private superseded(epoch: number): boolean {
    return this.stopped || epoch !== this.epoch;
  }

  private replace(listed: { items: KeyValue<V>[]; bad: string[]; revision: number }): void {
    const table = new KeyTable<V>();
    for (const kv of listed.items) table.set(kv);
    this.table = table;
    this.bad = new Set(listed.bad);
    this.rev = listed.revision;
  }

  /** Settles the reads waiting for the cache: fresh once it holds their floor, or not at all
   * once it is no longer synced (they ask etcd). */
  private wake(): void {
    this.prune();
    const synced = this.synced();
    for (const w of this.waiters) {
      if (synced && this.rev < w.need) continue;
      clearTimeout(w.timer);
      this.waiters.delete(w);
      w.resolve(synced);
    }
  }
}
