// One kind's documents held in memory and kept in step with the store: what a request checks
// (is this session open, is this API token good) is answered without a store read, yet every
// controller sharing the store (STORE=etcd, #18) sees what the others write.
//
// Kept as the manager and the node-details projection keep theirs: the watch starts from the
// revision taken before the list, so nothing written in between is missed. A list may be older
// than events that came while it ran, so those events are applied again over it; a document's
// resourceVersion orders the two, and an older view never replaces a newer one. `relist` (the
// store's history no longer reaches back to the watch's position) lists again the same way.
import type { Logger } from '../../log.js';
import type { AnyDoc } from '../../model/document.js';
import type { Store, StoreEvent } from '../../store/types.js';

export interface IndexHooks<V> {
  /** The in-memory form of a document; `prev`, the form of its older version, if known. */
  read(doc: AnyDoc, prev: V | undefined): V;
  /** An entry left: its document was deleted (here or by another controller). */
  removed(id: string, value: V): void;
}

interface Entry<V> {
  value: V;
  rev: number;
}

type DocEvent = Exclude<StoreEvent, { type: 'relist' }>;

/** A relist that failed (the store away) is tried again this much later. */
const RELIST_RETRY_MS = 1000;

export class StoreIndex<V> {
  private entries = new Map<string, Entry<V>>();
  /** Deleted by this controller, the delete's own event not back yet: an older event still on
   * its way must not bring the entry back. (Ids of these kinds are UUIDs, never reused.) */
  private readonly gone = new Set<string>();
  /** Events seen while a list runs, applied again over its result; null when no list runs. */
  private replay: DocEvent[] | null = null;
  private listAgain = false;
  private stopWatch: (() => void) | undefined;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly store: Store,
    readonly kind: string,
    private readonly hooks: IndexHooks<V>,
    private readonly logger: Logger,
  ) {}

  /** Lists and follows; a list that fails fails the start. */
  async start(): Promise<void> {
    this.replay = [];
    this.stopWatch = this.store.watch(this.store.revision(), (e) => this.onEvent(e));
    try {
      await this.list();
    } catch (err) {
      this.stop();
      throw err;
    }
    this.listAgainIfTold();
  }

  stop(): void {
    this.stopped = true;
    this.stopWatch?.();
    if (this.retry) clearTimeout(this.retry);
  }

  get(id: string): V | undefined {
    return this.entries.get(id)?.value;
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  get size(): number {
    return this.entries.size;
  }

  /** In the order entries came in: the list's (by id), then the watch's. */
  *all(): IterableIterator<[string, V]> {
    for (const [id, e] of this.entries) yield [id, e.value];
  }

  /** A document this controller just wrote: known here at once, not one watch delivery later. */
  put(doc: AnyDoc): void {
    if (!this.gone.has(doc.id)) this.set(this.entries, doc);
  }

  /** A document this controller just deleted. */
  remove(id: string): void {
    const e = this.entries.get(id);
    if (!e) return;
    this.entries.delete(id);
    this.gone.add(id);
    this.hooks.removed(id, e.value);
  }

  private onEvent(e: StoreEvent): void {
    if (this.stopped) return;
    if (e.type === 'relist') {
      this.logger('warn', 'store history lost; listing again', { kind: this.kind, revision: e.revision });
      if (this.replay) this.listAgain = true;
      else {
        this.replay = [];
        void this.relist();
      }
      return;
    }
    if (e.doc.kind !== this.kind) return;
    this.replay?.push(e);
    const removed = this.apply(this.entries, e);
    if (removed) this.hooks.removed(e.doc.id, removed.value);
  }

  /** Returns the entry a delete took out. */
  private apply(into: Map<string, Entry<V>>, e: DocEvent): Entry<V> | undefined {
    const id = e.doc.id;
    if (e.type !== 'deleted') {
      if (!this.gone.has(id)) this.set(into, e.doc);
      return undefined;
    }
    this.gone.delete(id);
    const cur = into.get(id);
    if (!cur || cur.rev >= e.revision) return undefined;
    into.delete(id);
    return cur;
  }

  private set(into: Map<string, Entry<V>>, doc: AnyDoc): void {
    const cur = into.get(doc.id);
    const rev = doc.metadata.resourceVersion;
    if (cur && cur.rev >= rev) return;
    into.set(doc.id, { value: this.hooks.read(doc, cur?.value ?? this.entries.get(doc.id)?.value), rev });
  }

  /** The new index is built aside and then swapped in: a request never sees it half made, and
   * only what really went is reported removed. */
  private async list(): Promise<void> {
    const docs = await this.store.list(this.kind);
    if (this.stopped) return;
    const next = new Map<string, Entry<V>>();
    for (const doc of docs) if (!this.gone.has(doc.id)) this.set(next, doc);
    // A deletion of ours the list already reflects: the event that would clear it may be one
    // a lost history took, so it is cleared here.
    const listed = new Set(docs.map((d) => d.id));
    for (const id of this.gone) if (!listed.has(id)) this.gone.delete(id);
    for (const e of this.replay ?? []) this.apply(next, e);
    this.replay = null;
    const old = this.entries;
    this.entries = next;
    for (const [id, e] of old) if (!next.has(id)) this.hooks.removed(id, e.value);
  }

  private async relist(): Promise<void> {
    try {
      await this.list();
    } catch (err) {
      if (this.stopped) return;
      this.logger('warn', 'listing again failed; trying again', {
        kind: this.kind,
        error: err instanceof Error ? err.message : String(err),
      });
      this.retry = setTimeout(() => void this.relist(), RELIST_RETRY_MS);
      this.retry.unref();
      return;
    }
    this.listAgainIfTold();
  }

  /** A relist told while a list ran: that list may predate what the lost history held. */
  private listAgainIfTold(): void {
    if (!this.listAgain || this.stopped) return;
    this.listAgain = false;
    this.replay = [];
    void this.relist();
  }
}
