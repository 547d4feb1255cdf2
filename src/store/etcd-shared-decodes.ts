// Two etcd watches of the same range run in every controller: the read cache's
// (etcd-cache.ts) and the hub that feeds the store's watchers (etcd-watch-hub.ts). Each used to
// decode every value it was sent, so every document that changed was decoded twice and held
// twice: at 10,000 nodes the node-details projection kept its own copy of every node, 430,000
// objects that each major collection marked again (the heartbeats bench's slow GETs were those
// collections). Whichever watch meets a (key, revision) first decodes it and leaves the value
// here; the other takes it. etcd never changes the value of a key at a revision, so the value
// taken is always the right one.
//
// A value the other watch never asks for (it started later, it relisted past the event) is
// dropped once both watches have gone past its revision, checked when the entries outgrow
// PRUNE_AT: the map holds the events in flight between the two watches, not the documents. A
// watch that stops moving (its stream broken) leaves at most one value per key behind, each
// replaced by the key's next change: never more than the cache itself holds.

/** Entries kept before the ones both watches passed are looked for. */
export const PRUNE_AT = 4_096;

export class SharedDecodes<V> {
  private readonly pending = new Map<string, { revision: number; value: V }>();
  private pruneAt = PRUNE_AT;

  constructor(
    /** The revision both watches have handed over every event up to (the lower position). */
    private readonly passed: () => number,
  ) {}

  /** The value of `key` at `revision`: the other watch's when it decoded it first (then
   * forgotten: both have it), else `decode()`'s, left for the other. */
  value(key: string, revision: number, decode: () => V): V {
    const p = this.pending.get(key);
    if (p?.revision === revision) {
      this.pending.delete(key);
      return p.value;
    }
    const value = decode();
    // An older revision (a watcher resuming from the history) does not replace a newer one.
    if (!p || p.revision < revision) {
      this.pending.set(key, { revision, value });
      if (this.pending.size > this.pruneAt) this.prune();
    }
    return value;
  }

  /** Values waiting for the other watch (tests). */
  size(): number {
    return this.pending.size;
  }

  private prune(): void {
    const passed = this.passed();
    for (const [key, p] of this.pending) if (p.revision <= passed) this.pending.delete(key);
    // Entries neither watch has passed yet stay; the next look waits until they have doubled,
    // so a long lag costs a scan per doubling, not one per event.
    this.pruneAt = Math.max(PRUNE_AT, this.pending.size * 2);
  }
}
