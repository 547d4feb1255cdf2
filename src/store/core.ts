// The in-memory heart both backends share: committed key-values, the global revision, a
// bounded history for watch resumption and the fan-out to watchers. It only ever holds
// *committed* state; the embedded backend decides when a write counts as committed.
import { ConflictError, NotFoundError } from '../errors.js';
import type { KeyValue, Precondition, RelistSignal, TxnOp, WatchEvent, WatchHandler } from './backend.js';
import { outsideRequest } from '../log.js';
import { History } from './history.js';
import { KeyTable } from './key-table.js';

/** One write, as journaled and as applied. */
export interface Mutation<V = unknown> {
  rev: number;
  op: 'put' | 'del';
  key: string;
  value?: V;
  createRevision?: number;
}

export interface CoreOptions {
  /** Watch events kept for resumption; older resume points get a relist. Default 10,000. */
  historySize?: number;
  /** Where a throwing watch handler's error goes; the store itself carries on. */
  onWatchError?: (err: unknown) => void;
}

export const DEFAULT_HISTORY = 10_000;

interface Watcher<V> {
  handler: WatchHandler<V>;
  /** Newest revision this watcher has seen; anything at or below it is skipped. */
  last: number;
  /** False until the history catch-up ran, so live events cannot overtake older ones. */
  live: boolean;
  stopped: boolean;
}

/** Throws ConflictError when the key's current modRevision does not match the precondition. */
export function checkPrecondition(key: string, current: KeyValue | undefined, pre?: Precondition): void {
  if (pre?.modRevision === undefined) return;
  const found = current?.modRevision ?? 0;
  if (found === pre.modRevision) return;
  if (pre.modRevision === 0) throw new ConflictError(`${key} already exists (modRevision ${found})`);
  const now = current ? `found modRevision ${found}` : 'it no longer exists';
  throw new ConflictError(`${key} was modified concurrently: expected modRevision ${pre.modRevision}, ${now}`);
}

/** Throws what the first failing op of a transaction would: a key written twice, a failed
 * precondition, a delete of a missing key (unless ifExists). `current` is the newest state. */
export function checkTxn<V>(ops: TxnOp<V>[], current: (key: string) => KeyValue<V> | undefined): void {
  const keys = new Set<string>();
  for (const o of ops) {
    if (keys.has(o.key)) throw new Error(`a transaction writes ${o.key} twice`);
    keys.add(o.key);
    const cur = current(o.key);
    checkPrecondition(o.key, cur, o.pre);
    if (o.op === 'del' && !cur && !o.ifExists) throw new NotFoundError(`${o.key} not found`);
  }
}

export class KvCore<V = unknown> {
  private readonly items = new KeyTable<V>();
  private readonly history: History<WatchEvent<V>>;
  private readonly watchers = new Set<Watcher<V>>();
  private readonly onWatchError: (err: unknown) => void;
  private rev = 0;
  private queue: WatchEvent<V>[] = [];
  private draining = false;

  constructor(opts: CoreOptions = {}) {
    this.history = new History(opts.historySize ?? DEFAULT_HISTORY);
    this.onWatchError = opts.onWatchError ?? ((err) => process.emitWarning(`store watch handler threw: ${String(err)}`));
  }

  revision(): number {
    return this.rev;
  }

  size(): number {
    return this.items.size;
  }

  get(key: string): KeyValue<V> | undefined {
    return this.items.get(key);
  }

  list(prefix: string): KeyValue<V>[] {
    return this.items.list(prefix);
  }

  /** Loads a snapshot entry; only before any mutation is applied. */
  load(kv: KeyValue<V>, revision: number): void {
    this.items.set(kv);
    this.rev = Math.max(this.rev, revision);
  }

  setRevision(revision: number): void {
    this.rev = revision;
  }

  entries(): IterableIterator<KeyValue<V>> {
    return this.items.values();
  }

  /** Applies one committed mutation; revisions must follow each other without a gap, which
   * is also how a damaged journal is caught on replay. */
  apply(m: Mutation<V>): WatchEvent<V> {
    if (m.rev !== this.rev + 1) throw new Error(`revision ${m.rev} does not follow ${this.rev}`);
    const prev = this.items.get(m.key);
    let event: WatchEvent<V>;
    if (m.op === 'put') {
      const createRevision = m.createRevision ?? prev?.createRevision ?? m.rev;
      this.items.set({ key: m.key, value: m.value as V, createRevision, modRevision: m.rev });
      event = { type: 'put', key: m.key, value: m.value as V, revision: m.rev, createRevision };
    } else {
      if (!prev) throw new Error(`revision ${m.rev} deletes ${m.key}, which does not exist`);
      this.items.delete(m.key);
      event = { type: 'delete', key: m.key, value: prev.value, revision: m.rev, createRevision: prev.createRevision };
    }
    this.rev = m.rev;
    // The ring keeps no previous values: they are otherwise garbage, and 10,000 of them (a burst
    // of status writes at 10k nodes) held 8 MB of old documents for as long as they stayed in it.
    this.history.push(event);
    return m.op === 'put' && prev ? { ...event, prevValue: prev.value } : event;
  }

  /** Hands events to every watcher in order. Re-entrant calls (a handler that writes to a
   * memory backend) only enqueue, so no watcher ever sees revisions out of order. */
  publish(events: WatchEvent<V>[]): void {
    for (const e of events) this.queue.push(e);
    if (this.draining) return;
    // A write made by an HTTP request wakes loops that outlive it: they must not carry its id.
    outsideRequest(() => this.drain());
  }

  private drain(): void {
    this.draining = true;
    try {
      for (let i = 0; i < this.queue.length; i++) {
        const event = this.queue[i] as WatchEvent<V>;
        for (const w of [...this.watchers]) if (w.live) this.deliver(w, event);
      }
    } finally {
      this.queue = [];
      this.draining = false;
    }
  }

  /** The catch-up from history runs in a microtask so a handler never runs before watch()
   * has returned its stop function. */
  watch(fromRevision: number, handler: WatchHandler<V>): () => void {
    const w: Watcher<V> = { handler, last: fromRevision, live: false, stopped: false };
    this.watchers.add(w);
    queueMicrotask(() => this.catchUp(w));
    return () => {
      w.stopped = true;
      this.watchers.delete(w);
    };
  }

  stopAll(): void {
    for (const w of this.watchers) w.stopped = true;
    this.watchers.clear();
  }

  private catchUp(w: Watcher<V>): void {
    // Loops because a handler may write (memory backend) while we catch up; those events are
    // skipped by publish() until the watcher is live and must be picked up here.
    while (!w.stopped && w.last < this.rev) {
      const missed = this.history.between(w.last, this.rev);
      if (missed === undefined) {
        const signal: RelistSignal = { type: 'relist', revision: this.rev };
        w.last = this.rev;
        this.call(w, signal);
      } else {
        for (const event of missed) this.deliver(w, event);
      }
    }
    w.live = true;
  }

  private deliver(w: Watcher<V>, event: WatchEvent<V>): void {
    if (w.stopped || event.revision <= w.last) return;
    w.last = event.revision;
    this.call(w, event);
  }

  private call(w: Watcher<V>, event: WatchEvent<V> | RelistSignal): void {
    try {
      w.handler(event);
    } catch (err) {
      this.onWatchError(err);
    }
  }
}
