// The /events stream shared by every controller on one etcd (#18 part 3). The leader's events
// are written under `<prefix>~events/<seq>` and every controller — the leader too — streams what
// it reads back, so a client sees the same ids in the same order whichever controller it is
// connected to, and resumes with Last-Event-ID on another one after a failover.
//
// Writes: batched (one Txn per burst, at most MAX_OPS_PER_TXN events) and fenced by the election
// key like the loops' writes, so a deposed leader adds nothing once another controller has
// been elected. Keys carry a lease that is granted but never renewed, so etcd deletes them by itself
// when its lease ends; a new lease every sixth of the retention keeps each event between five
// sixths of the retention and the whole of it.
//
// Reads: the watch is only a doorbell. Each ring reads the keys after the last seq delivered,
// in key (= seq) order; a reconnect rings it too. So an event is never delivered twice or out
// of order, and none is skipped across a reconnect or a compaction, without tracking revisions.
import { Range, type Etcd3, type Watcher } from 'etcd3';

/** An event as the feed keeps it: the bus's shape, with nothing the feed needs to know of it. */
export interface FeedEvent {
  seq: number;
  at: string;
  type: string;
  payload: unknown;
}

export interface EventFeedOptions {
  /** How long an event stays in etcd; default an hour (the hub replays at most 10,000 anyway). */
  retentionSeconds?: number;
  /** A batch refused or lost, a watch error: the feed carries on. */
  onError?: (err: unknown) => void;
}

/** Under the store's prefix; `~` keeps it out of the documents' lists and watch. */
export const EVENTS_KEY = '~events/';
/** Below etcd's default --max-txn-ops (128). */
const MAX_OPS_PER_TXN = 100;
/** Keys read per request on a catch-up. */
const PAGE = 500;
/** Fixed width: etcd orders keys as bytes, so the keys' order is the seqs'. */
const SEQ_DIGITS = 16;
/** A batch etcd could not take is tried again this many times (a member lost, an election). */
const WRITE_TRIES = 20;
const WRITE_RETRY_MS = 250;
const READ_RETRY_MS = 500;
/** Events waiting for etcd beyond this are dropped, oldest first: a stalled etcd must not grow
 * the leader's memory without bound (the clients get a resync). */
const MAX_PENDING = 20_000;

/** The election key (full etcd key) and the revision our campaign wrote it at. */
export interface FeedFence {
  key: string;
  modRevision: number;
}

export class EtcdEventFeed {
  private pending: FeedEvent[] = [];
  private writing = false;
  private lease: { id: string; at: number } | null = null;
  private readonly retentionMs: number;
  private readonly onError: (err: unknown) => void;
  private closed = false;
  private readonly readers = new Set<FeedReader>();

  constructor(
    private readonly client: Etcd3,
    /** Full key prefix of the events (`<prefix>~events/`). */
    private readonly root: string,
    /** The leadership's proof, null while this controller does not lead. */
    private readonly fence: () => FeedFence | null,
    opts: EventFeedOptions = {},
  ) {
    this.retentionMs = (opts.retentionSeconds ?? 3600) * 1000;
    this.onError = opts.onError ?? (() => {});
  }

  key(seq: number): string {
    return this.root + String(seq).padStart(SEQ_DIGITS, '0');
  }

  /** The newest seq kept (0 when none): a new leader numbers on from it. */
  async latest(): Promise<number> {
    const keys = await this.client.getAll().prefix(this.root).sort('Key', 'Descend').limit(1).keys();
    return keys[0] === undefined ? 0 : Number(keys[0].slice(this.root.length));
  }

  /** The newest `count` events kept, oldest first. */
  async recent(count: number): Promise<FeedEvent[]> {
    if (count <= 0) return [];
    const values = await this.client.getAll().prefix(this.root).sort('Key', 'Descend').limit(count).strings();
    return Object.values(values).map(parse).filter(isEvent).reverse();
  }

  /** Queues an event for etcd. Only the leader's are kept: without a fence, nothing is written. */
  append(event: FeedEvent): void {
    if (this.closed || this.fence() === null) return;
    this.pending.push(event);
    if (this.pending.length > MAX_PENDING) {
      const dropped = this.pending.splice(0, this.pending.length - MAX_PENDING);
      this.onError(new Error(`etcd is not taking events: ${dropped.length} dropped`));
    }
    if (!this.writing) void this.drain();
  }

  /** Delivers every event after `afterSeq`, in seq order, as they are written, until stopped. */
  async follow(afterSeq: number, handler: (e: FeedEvent) => void): Promise<() => void> {
    const reader = new FeedReader(this, afterSeq, handler, this.onError);
    this.readers.add(reader);
    await reader.start(this.client, this.root);
    return () => {
      this.readers.delete(reader);
      reader.stop();
    };
  }

  /** Events after `afterSeq`, in order (one page; `more` when there may be others). */
  async after(afterSeq: number): Promise<{ events: FeedEvent[]; more: boolean }> {
    const end = Range.prefix(this.root).end;
    const values = await this.client
      .getAll()
      .inRange(new Range(this.key(afterSeq + 1), end))
      .sort('Key', 'Ascend')
      .limit(PAGE)
      .strings();
    const list = Object.values(values);
    return { events: list.map(parse).filter(isEvent), more: list.length === PAGE };
  }

  async close(): Promise<void> {
    this.closed = true;
    this.pending = [];
    for (const r of this.readers) r.stop();
    this.readers.clear();
  }

  private async drain(): Promise<void> {
    this.writing = true;
    try {
      while (this.pending.length > 0 && !this.closed) {
        const batch = this.pending.splice(0, MAX_OPS_PER_TXN);
        if (!(await this.write(batch))) this.pending = [];
      }
    } finally {
      this.writing = false;
    }
  }

  /** False when the batch is refused for good (deposed): what is queued behind it is too. */
  private async write(batch: FeedEvent[]): Promise<boolean> {
    for (let attempt = 1; ; attempt++) {
      const fence = this.fence();
      if (fence === null || this.closed) return false;
      try {
        const lease = await this.currentLease();
        const res = await this.client
          .if(fence.key, 'Mod', '==', fence.modRevision)
          .then(...batch.map((e) => this.client.put(this.key(e.seq)).value(JSON.stringify(e)).lease(lease)))
          .commit();
        if (res.succeeded) return true;
        this.onError(new Error(`events ${batch[0]?.seq}–${batch.at(-1)?.seq} not kept: this controller no longer leads`));
        return false;
      } catch (err) {
        // A lease that expired or was lost with a member: the next try grants a new one.
        this.lease = null;
        if (attempt >= WRITE_TRIES) {
          this.onError(new Error(`events ${batch[0]?.seq}–${batch.at(-1)?.seq} not kept: ${String(err)}`));
          return true;
        }
        await new Promise((resolve) => setTimeout(resolve, WRITE_RETRY_MS).unref());
      }
    }
  }

  /** A lease granted at most a sixth of the retention ago: an event goes no earlier than five
   * sixths of the retention after it was written, and no later than the retention. */
  private async currentLease(): Promise<string> {
    const now = Date.now();
    if (this.lease && now - this.lease.at < this.retentionMs / 6) return this.lease.id;
    const lease = this.client.lease(Math.max(2, Math.ceil(this.retentionMs / 1000)), { autoKeepAlive: false });
    const id = await lease.grant();
    this.lease = { id, at: now };
    return id;
  }
}

/** One follower of the feed: the watch rings, a single read at a time catches up. */
class FeedReader {
  private watcher: Watcher | undefined;
  private reading = false;
  private again = false;
  private stopped = false;

  constructor(
    private readonly feed: EtcdEventFeed,
    private last: number,
    private readonly handler: (e: FeedEvent) => void,
    private readonly onError: (err: unknown) => void,
  ) {}

  async start(client: Etcd3, root: string): Promise<void> {
    // The watch exists before the first read: an event written between the two still rings.
    const w = await client.watch().prefix(root).create();
    this.watcher = w;
    w.on('put', () => this.ring());
    w.on('connected', () => this.ring());
    w.on('error', (err) => {
      this.onError(err);
      this.ring();
    });
    if (this.stopped) void w.cancel().catch(() => undefined);
    this.ring();
  }

  stop(): void {
    this.stopped = true;
    void this.watcher?.cancel().catch(() => undefined);
  }

  private ring(): void {
    if (this.stopped) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    void this.read();
  }

  private rungWhileReading(): boolean {
    const rung = this.again;
    this.again = false;
    return rung;
  }

  private async read(): Promise<void> {
    this.reading = true;
    try {
      for (;;) {
        const { events, more } = await this.feed.after(this.last);
        for (const e of events) {
          if (this.stopped || e.seq <= this.last) continue;
          this.last = e.seq;
          this.handler(e);
        }
        if (this.stopped || (!more && !this.rungWhileReading())) break;
      }
    } catch (err) {
      // etcd unreachable: try again shortly (the watch rings on its reconnect too).
      this.onError(err);
      setTimeout(() => this.ring(), READ_RETRY_MS).unref();
    } finally {
      this.reading = false;
    }
  }
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

function isEvent(v: unknown): v is FeedEvent {
  if (typeof v !== 'object' || v === null) return false;
  const e = v as Record<string, unknown>;
  return Number.isSafeInteger(e.seq) && typeof e.at === 'string' && typeof e.type === 'string';
}
