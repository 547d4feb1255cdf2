// One etcd watch of the prefix shared by every store watcher of the process that starts from
// where it stands (the loops' manager, the projections, the auth index, the boot records...):
// each etcd event is decoded once, not once per watcher (nine of them each decoding every value
// and its previous value cost the controller more than the agents' reports, when the heartbeat
// records still came through the watch).
//
// A watcher that asks for events from before the hub's position (a resume from an older
// revision) gets a watch of its own from etcd's history, as every watcher did before.
import type { RelistSignal, WatchEvent, WatchHandler } from './backend.js';
import { EtcdWatch, type EtcdWatchDeps } from './etcd-watch.js';

interface Subscriber<V> {
  /** Events up to this revision were before the subscription: not handed over. */
  from: number;
  handler: WatchHandler<V>;
}

export class EtcdWatchHub<V> {
  private watch: EtcdWatch<V> | undefined;
  private readonly subscribers = new Set<Subscriber<V>>();

  constructor(
    private readonly deps: EtcdWatchDeps<V>,
    /** Told of every event before any subscriber (the read cache's floor). */
    private readonly before: (e: WatchEvent<V> | RelistSignal) => void,
    /** Where the hub starts: the store's revision when the first watcher comes. Not that
     * watcher's own revision, which may be old or compacted: its relist would reach everyone. */
    private readonly current: () => number,
  ) {}

  /** Subscribes `handler` to the events after `fromRevision`, or answers undefined when the
   * hub is past it (events the hub has handed over already: the caller watches on its own). */
  subscribe(fromRevision: number, handler: WatchHandler<V>): (() => void) | undefined {
    this.watch ??= this.open(this.current());
    if (fromRevision < this.watch.position()) return undefined;
    const s: Subscriber<V> = { from: fromRevision, handler };
    this.subscribers.add(s);
    return () => this.subscribers.delete(s);
  }

  /** Every event up to this revision has been handed over (0 before the first watcher). */
  position(): number {
    return this.watch?.position() ?? 0;
  }

  /** Watchers served by the hub now. */
  size(): number {
    return this.subscribers.size;
  }

  stop(): Promise<void> {
    this.subscribers.clear();
    return this.watch?.stop() ?? Promise.resolve();
  }

  private open(fromRevision: number): EtcdWatch<V> {
    const w = new EtcdWatch<V>(this.deps, fromRevision, (e) => this.fanOut(e));
    // Started after subscribe() returns, like every backend's watch: a handler never runs
    // before its caller holds the stop function.
    queueMicrotask(() => w.start());
    return w;
  }

  private fanOut(e: WatchEvent<V> | RelistSignal): void {
    this.before(e);
    for (const s of this.subscribers) {
      // A relist concerns everyone; an event only those subscribed before it.
      if (e.type !== 'relist' && e.revision <= s.from) continue;
      try {
        s.handler(e);
      } catch (err) {
        this.deps.onWatchError(err);
      }
    }
  }
}
