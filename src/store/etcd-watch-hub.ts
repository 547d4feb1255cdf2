// One watch of the prefix shared by every store watcher of the process that starts from where
// it stands (the loops' manager, the projections, the auth index, the boot records...): each
// etcd event is decoded once, not once per watcher. At 10,000 agents on etcd about 1,000
// heartbeat records change a second, and nine watchers each decoding every value and its
// previous value cost the controller more than the reports themselves. With a read cache the
// hub's events are the cache's (etcd-cache.ts tap: one etcd watch in all); without one, an etcd
// watch with previous values of its own.
//
// A watcher that asks for events from before the hub's position (a resume from an older
// revision) gets a watch of its own from etcd's history, as every watcher did before.
import type { RelistSignal, WatchEvent, WatchHandler } from './backend.js';

/** Where the hub's events come from, opened for the first watcher. */
export interface HubSource {
  /** Every event up to this revision has been handed over. */
  position(): number;
  stop(): Promise<void>;
}

interface Subscriber<V> {
  /** Events up to this revision were before the subscription: not handed over. */
  from: number;
  handler: WatchHandler<V>;
}

export class EtcdWatchHub<V> {
  private source: HubSource | undefined;
  private readonly subscribers = new Set<Subscriber<V>>();

  constructor(
    /** Opens the source, handing its events to `handler`; never before open returns. */
    private readonly open: (handler: WatchHandler<V>) => HubSource,
    /** Told of every event before any subscriber (the read cache's floor). */
    private readonly before: (e: WatchEvent<V> | RelistSignal) => void,
    private readonly onError: (err: unknown) => void,
  ) {}

  /** Subscribes `handler` to the events after `fromRevision`, or answers undefined when the
   * hub is past it (events the hub has handed over already: the caller watches on its own). */
  subscribe(fromRevision: number, handler: WatchHandler<V>): (() => void) | undefined {
    this.source ??= this.open((e) => this.fanOut(e));
    if (fromRevision < this.source.position()) return undefined;
    const s: Subscriber<V> = { from: fromRevision, handler };
    this.subscribers.add(s);
    return () => this.subscribers.delete(s);
  }

  /** Watchers served by the hub now. */
  size(): number {
    return this.subscribers.size;
  }

  stop(): Promise<void> {
    this.subscribers.clear();
    return this.source?.stop() ?? Promise.resolve();
  }

  private fanOut(e: WatchEvent<V> | RelistSignal): void {
    this.before(e);
    for (const s of this.subscribers) {
      // A relist concerns everyone; an event only those subscribed before it.
      if (e.type !== 'relist' && e.revision <= s.from) continue;
      try {
        s.handler(e);
      } catch (err) {
        this.onError(err);
      }
    }
  }
}
