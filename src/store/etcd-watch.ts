// One Backend watch over etcd's watch of the prefix.
//
// The etcd3 client re-creates a watch by itself after a lost connection, resuming from the
// revision it last noted. It notes the *header* revision of each response, which runs ahead of
// the events delivered so far (the created response of a catch-up, a catch-up etcd splits into
// batches), so a reconnect at the wrong moment would skip events. We note our own position
// instead: the newest revision whose events were all handed over (etcd never splits one
// revision's events, a transaction's, across responses) and put it back into the request.
//
// When etcd cancels the watch (the revision asked for was compacted away, or any other reason
// it gives), the history is gone: the handler gets `relist` at the current revision and the
// watch goes on from there.
import type { IWatchResponse, Namespace, Watcher } from 'etcd3';
import { outsideRequest } from '../log.js';
import type { RelistSignal, WatchEvent, WatchHandler } from './backend.js';
import type { EtcdValues } from './etcd-values.js';

export interface EtcdWatchDeps<V> {
  client: Namespace;
  /** The keys, and the range the watch covers (EtcdValues.watched). */
  values: EtcdValues<V>;
  /** The current revision, read from etcd (after a cancelled watch). */
  current(): Promise<number>;
  /** Every response's header revision: keeps the backend's revision() fresh. */
  seen(revision: number): void;
  onWatchError(err: unknown): void;
  /** Without the previous values (prevValue, a deleted key's value): the read cache, which
   * needs neither, saves etcd sending them and us decoding them. */
  withoutPrevious?: boolean;
  /** How long to wait before asking again after a failed relist; doubles up to 5 s. */
  retryMs?: number;
  /** After each response: every event up to this revision has been handed over (the read
   * cache's position; it moves for the bookkeeping keys too, which no handler sees). */
  advanced?(revision: number): void;
  /** The watch's stream broke (a member went away): events stop until it is connected again. */
  disconnected?(): void;
  /** The watch is (again) registered with etcd. */
  connected?(): void;
  /** A put's value as this process wrote it, when `raw` is what it sent: taken instead of
   * decoding the bytes again (etcd-cache.ts). Asked of every put, so that the read cache
   * forgets the writes whose event came even when the value came from `shared`. */
  ownValue?(key: string, raw: Buffer): { value: V } | undefined;
  /** The value of a put at its revision, from the process's other watch of the range when it
   * decoded it first, else `decode()` (etcd-shared-decodes.ts). */
  shared?(key: string, revision: number, decode: () => V): V;
  /** A put whose value does not decode: reported to onWatchError and left out of the events. */
  undecodable?(key: string, revision: number): void;
}

export class EtcdWatch<V> {
  private watcher: Watcher | undefined;
  private stopped = false;
  private retryMs: number;

  constructor(
    private readonly deps: EtcdWatchDeps<V>,
    /** Every event up to this revision has been handed over. */
    private last: number,
    private readonly handler: WatchHandler<V>,
  ) {
    this.retryMs = deps.retryMs ?? 100;
  }

  start(): void {
    const b = this.deps.client
      .watch()
      .inRange(this.deps.values.watched())
      .startRevision(String(this.last + 1));
    const w = (this.deps.withoutPrevious ? b : b.withPreviousKV()).watcher();
    this.watcher = w;
    const resumeHere = (): void => {
      w.request.start_revision = String(this.last + 1);
    };
    // Registered after the client's own listeners, so ours run last and our position wins.
    w.on('connected', (res: IWatchResponse) => {
      this.deps.seen(Number(res.header.revision));
      resumeHere();
      if (this.watcher === w) this.deps.connected?.();
    });
    w.on('disconnected', () => {
      if (this.watcher === w) this.deps.disconnected?.();
    });
    w.on('data', (res: IWatchResponse) => {
      try {
        if (this.watcher === w) this.onData(res);
      } catch (err) {
        // Reported, not thrown into the client, which would rethrow it where nothing catches it.
        this.deps.onWatchError(err);
      }
      resumeHere();
      if (this.watcher === w && !this.stopped) this.deps.advanced?.(this.last);
    });
    w.on('error', () => {
      if (this.watcher !== w || this.stopped) return;
      // etcd already dropped this watch: no cancel to send.
      void this.drop(w, false);
      void this.relist();
    });
  }

  /** Every event up to this revision has been handed over. */
  position(): number {
    return this.last;
  }

  /** Resolves once etcd confirmed the cancel (it may never: bound the wait). */
  stop(): Promise<void> {
    this.stopped = true;
    return this.watcher ? this.drop(this.watcher) : Promise.resolve();
  }

  private drop(w: Watcher, cancel = true): Promise<void> {
    this.watcher = undefined;
    w.removeAllListeners();
    // An error listener stays: a late error of a dropped watcher must not crash the process.
    w.on('error', () => undefined);
    return cancel ? w.cancel().catch(() => undefined) : Promise.resolve();
  }

  private onData(res: IWatchResponse): void {
    this.deps.seen(Number(res.header.revision));
    if (res.events.length === 0) {
      // A progress notification: etcd sends them only to a watcher that has caught up.
      this.last = Math.max(this.last, Number(res.header.revision));
      return;
    }
    const events: (WatchEvent<V> | RelistSignal)[] = [];
    let newest = this.last;
    for (const ev of res.events) {
      const revision = Number(ev.kv.mod_revision);
      if (revision <= this.last) continue;
      newest = Math.max(newest, revision);
      if (this.deps.values.reserved(ev.kv.key)) continue;
      let event: WatchEvent<V> | undefined;
      try {
        event = this.toEvent(ev.type, ev.kv, ev.prev_kv, revision);
      } catch (err) {
        // A value that does not decode (not JSON, sealed with another key): reported and left
        // out, the other events of the response still delivered.
        this.deps.onWatchError(err);
        this.deps.undecodable?.(this.deps.values.unkey(ev.kv.key), revision);
        continue;
      }
      if (!event) {
        // A delete whose previous value etcd no longer has: what went is unknown.
        this.last = Number(res.header.revision);
        this.deliver([{ type: 'relist', revision: this.last }]);
        return;
      }
      events.push(event);
    }
    this.last = newest;
    this.deliver(events);
  }

  private toEvent(
    type: string,
    kv: IWatchResponse['events'][number]['kv'],
    prev: IWatchResponse['events'][number]['prev_kv'] | undefined,
    revision: number,
  ): WatchEvent<V> | undefined {
    const { values } = this.deps;
    const key = values.unkey(kv.key);
    if (type === 'Delete') {
      // The cache only needs the key; a watcher of the store, what went.
      if (this.deps.withoutPrevious) return { type: 'delete', key, value: undefined as V, revision, createRevision: 0 };
      if (!prev) return undefined;
      return { type: 'delete', key, value: values.decode(key, prev.value), revision, createRevision: Number(prev.create_revision) };
    }
    const own = this.deps.ownValue?.(key, kv.value);
    const decode = (): V => (own ? own.value : values.decode(key, kv.value));
    const event: WatchEvent<V> = {
      type: 'put',
      key,
      value: this.deps.shared ? this.deps.shared(key, revision, decode) : decode(),
      revision,
      createRevision: Number(kv.create_revision),
    };
    if (prev) {
      // Optional: without it a watcher only knows less (DocumentStore: specChanged true).
      try {
        event.prevValue = values.decode(key, prev.value);
      } catch (err) {
        this.deps.onWatchError(err);
      }
    }
    return event;
  }

  private deliver(events: (WatchEvent<V> | RelistSignal)[]): void {
    // The gRPC stream carries the async context of whatever first opened it, perhaps an HTTP
    // request: loops woken here outlive it and must not carry its id.
    outsideRequest(() => {
      for (const e of events) {
        if (this.stopped) return;
        try {
          this.handler(e);
        } catch (err) {
          this.deps.onWatchError(err);
        }
      }
    });
  }

  private async relist(): Promise<void> {
    while (!this.stopped) {
      try {
        const revision = await this.deps.current();
        this.resumeAfterRelist(revision);
        return;
      } catch (err) {
        this.deps.onWatchError(err);
        await new Promise((resolve) => setTimeout(resolve, this.retryMs));
        this.retryMs = Math.min(this.retryMs * 2, 5_000);
      }
    }
  }

  /** After an await: stop() may have run meanwhile. */
  private resumeAfterRelist(revision: number): void {
    if (this.stopped) return;
    this.last = revision;
    this.deliver([{ type: 'relist', revision }]);
    // The handler may have stopped the watch.
    if (!this.watching()) return;
    this.deps.advanced?.(revision);
    this.start();
  }

  private watching(): boolean {
    return !this.stopped;
  }
}
