// The etcd backend's read cache: every document under the prefix in memory, kept current by one
// watch of the prefix, so the loops' gets and lists are answered here instead of by a request to
// etcd each (a Kubernetes informer's cache). Writes still go to etcd, and compare-and-swap is
// still etcd's, on the object's revision: a read that lags costs at most a conflict and a retry.
//
// What a read is guaranteed to see (`floor`): every write this process had acknowledged, every
// event a watcher of this backend had been handed (a loop woken by a change reads at least that
// change) and every version a direct read had returned (reads do not go back in time). A read
// waits for the cache to reach the floor, at most `waitMs`, and then asks etcd: every one of
// those revisions is an event under the prefix, which the cache's watch delivers. Changes by
// other controllers appear as fast as etcd's watch brings them.
//
// When the cache is not synced, reads go to etcd, as they all did before the cache:
// - at start-up the backend's open() waits for the first list instead: nothing is served yet;
// - after etcd compacted the history the watch needed, or the watch's stream broke (a member
//   restarted), the cache lists everything again. That takes a list of the whole prefix (a few
//   hundred ms at thousands of documents) and may wait as long as etcd is away; a direct read is
//   correct meanwhile, and fails with STORE_UNAVAILABLE exactly when etcd is away. After a break
//   the resumed watch would lose nothing, but only a fresh list says when the cache has caught up
//   (etcd 3.4 tells a watcher its position only with an event under the prefix).
import type { KeyValue, RelistSignal, WatchEvent } from './backend.js';
import { EtcdWatch, type EtcdWatchDeps } from './etcd-watch.js';
import { KeyTable } from './key-table.js';

export interface EtcdCacheOptions<V> {
  /** The watch's dependencies (the client, the prefix, the values). */
  watch: EtcdWatchDeps<V>;
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
  /** What reads must see: see the header. */
  private floor = 0;
  private synced = false;
  private stopped = false;
  /** Moves at every break and relist, so a list begun before one is not used after it. */
  private epoch = 0;
  private resyncOnConnect = false;
  /** Events delivered while a list is being taken; applied over it. */
  private buffer: (WatchEvent<V> | Undecodable)[] | null = null;
  /** The watch's position: every event up to it has been handed over. */
  private watchPos = 0;
  private watch: EtcdWatch<V> | undefined;
  private readonly waiters = new Set<Waiter>();
  private readonly counts = { hits: 0, misses: 0, waits: 0, timeouts: 0, resyncs: 0 };

  constructor(private readonly opts: EtcdCacheOptions<V>) {}

  /** The first list, then the watch from its revision. Rejects when etcd does not answer. */
  async start(): Promise<void> {
    this.replace(await this.opts.listAll());
    const revision = this.rev;
    this.synced = true;
    const deps: EtcdWatchDeps<V> = {
      ...this.opts.watch,
      keysOnly: true,
      advanced: (r) => this.advanced(r),
      disconnected: () => this.broken(),
      connected: () => {
        if (this.resyncOnConnect) this.resync();
      },
      undecodable: (key, r) => this.onEvent({ type: 'bad', key, revision: r }),
    };
    this.watch = new EtcdWatch<V>(deps, revision, (e) => this.onEvent(e));
    this.watch.start();
  }

  stop(): void {
    this.stopped = true;
    this.synced = false;
    this.watch?.stop();
    this.wake();
  }

  /** The newest revision a read is guaranteed to see. */
  revision(): number {
    return Math.max(this.rev, this.floor);
  }

  /** A revision reads must see from now on (an acknowledged write, a delivered event). */
  raise(revision: number): void {
    if (revision > this.floor) this.floor = revision;
  }

  /** A watcher of the backend was told to list again at `revision`: its next lists must see at
   * least that, which may be a revision of a key outside the prefix, so the cache lists too. */
  relisted(revision: number): void {
    this.raise(revision);
    if (this.rev < revision) this.resync();
  }

  /** Whether a read may be answered from the cache: synced and at the floor (or `atLeast`),
   * waiting for it at most waitMs. Counts the read as a hit or a miss. */
  async fresh(atLeast = 0): Promise<boolean> {
    const need = Math.max(this.floor, atLeast);
    let ok = this.synced && this.rev >= need;
    if (!ok && this.synced) {
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
    return { synced: this.synced, revision: this.rev, keys: this.table.size, ...this.counts };
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
  }

  private advanced(revision: number): void {
    this.watchPos = Math.max(this.watchPos, revision);
    if (this.buffer || !this.synced) return;
    this.rev = Math.max(this.rev, revision);
    this.wake();
  }

  private broken(): void {
    this.resyncOnConnect = true;
    this.unsync();
  }

  private unsync(): void {
    this.epoch++;
    this.synced = false;
    this.buffer ??= [];
    this.wake();
  }

  /** Lists everything again (until it succeeds, or a newer break or relist supersedes it). */
  private resync(): void {
    this.resyncOnConnect = false;
    this.unsync();
    const epoch = this.epoch;
    void this.relist(epoch);
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
        this.synced = true;
        this.wake();
        return;
      } catch (err) {
        this.opts.watch.onWatchError(err);
        await new Promise((resolve) => setTimeout(resolve, delay).unref());
      }
    }
  }

  /** After an await: stopped, or a newer break or relist started another list. */
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
    for (const w of this.waiters) {
      if (this.synced && this.rev < w.need) continue;
      clearTimeout(w.timer);
      this.waiters.delete(w);
      w.resolve(this.synced);
    }
  }
}
