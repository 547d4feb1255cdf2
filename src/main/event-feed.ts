// /events with several controllers on etcd (#18 part 3): every controller's hub streams the
// shared feed (src/store/etcd-event-feed.ts) rather than its own bus, so the leader's events
// reach the clients of every controller, with the same ids, and a client resumes on another
// controller with Last-Event-ID. The leader writes its bus there once it leads; what a follower
// publishes on its own bus stays in its log.
import type { SseEventSource, SseSourceEvent } from '../http/sse/types.js';
import type { EtcdEventFeed, FeedEvent } from '../store/index.js';
import type { AnyBusEvent, EventBus } from '../tasks/bus.js';

export interface SharedEvents {
  /** The hub's source: the feed's newest events first (replay), then what is written. */
  source: SseEventSource;
  /** Once elected: the bus numbers on from the feed's newest event, and its events go there. */
  lead(): Promise<void>;
  close(): Promise<void>;
}

/** `backlog`: as many as the hub keeps for replay. `shared`: which bus events go to the feed. */
export async function sharedEvents(
  feed: EtcdEventFeed,
  bus: EventBus,
  backlog: number,
  shared: (e: AnyBusEvent) => boolean,
): Promise<SharedEvents> {
  // Kept only until the hub subscribes (it is created after this returns), then the hub's own
  // ring keeps the replay: one subscriber, the hub.
  let kept: FeedEvent[] = await feed.recent(backlog);
  let newest = kept.at(-1)?.seq ?? (await feed.latest());
  const handlers = new Set<(e: SseSourceEvent) => void>();
  const stopFollowing = await feed.follow(newest, (e) => {
    newest = e.seq;
    if (handlers.size === 0) {
      kept.push(e);
      if (kept.length > backlog) kept.shift();
    }
    for (const h of handlers) h(e);
  });
  let unsubscribe = (): void => {};
  return {
    source: {
      lastSeq: () => (kept[0] ? kept[0].seq - 1 : newest),
      subscribe(handler) {
        for (const e of kept) handler(e);
        kept = [];
        handlers.add(handler);
        return () => handlers.delete(handler);
      },
    },
    async lead() {
      // Read after the election: whatever the deposed leader still wrote is below this (its
      // later writes fail the fence), so ids only grow.
      bus.continueFrom(await feed.latest());
      unsubscribe();
      unsubscribe = bus.subscribe((e) => {
        if (shared(e)) feed.append(e);
      });
    },
    async close() {
      unsubscribe();
      stopFollowing();
      await feed.close();
    },
  };
}
