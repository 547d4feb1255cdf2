// Relays bus events to every connected SSE client. The bus delivers synchronously and attach()
// runs to completion, so "replay from the ring, then join the live set" cannot interleave with
// a publish: nothing falls between replay and live, and nothing comes twice.
import type { Writable } from 'node:stream';
import { FrameRing, type Frame } from './ring.js';
import type { AttachOptions, SseEventSource, SseHubOptions, SseSourceEvent, SseStats } from './types.js';

export type { AttachOptions, SseEventSource, SseHubOptions, SseSourceEvent, SseStats } from './types.js';

export const SSE_DEFAULTS = {
  bufferSize: 10_000,
  heartbeatMs: 30_000,
  // 50 ms, not 100: fan-out to 1,000 clients adds ~25 ms, and p99 delivery must stay under 100 ms
  // (bench/sse.ts); 50 ms still folds bursts into one write per client.
  flushIntervalMs: 50,
  maxQueuedBytes: 1024 * 1024,
} as const;

const HEARTBEAT = ': heartbeat\n\n';
const HEARTBEAT_BYTES = Buffer.byteLength(HEARTBEAT);

interface Client {
  out: Writable;
  queue: string[];
  queuedBytes: number;
  blocked: boolean;
  closed: boolean;
  onDrain: () => void;
  onGone: () => void;
}

export class SseHub {
  private readonly opts: Required<SseHubOptions>;
  private readonly ring: FrameRing;
  private readonly clients = new Set<Client>();
  /** Clients with something queued; the one shared flush walks only these. */
  private readonly dirty = new Set<Client>();
  private readonly unsubscribe: () => void;
  private lastSeq: number;
  private dropped = 0;
  private lastFlushAt = -Infinity;
  private flushTimer: NodeJS.Timeout | null = null;
  private flushImmediate: NodeJS.Immediate | null = null;
  private heartbeatTimer: NodeJS.Timeout | null = null;

  constructor(source: SseEventSource, opts: SseHubOptions = {}) {
    this.opts = { ...SSE_DEFAULTS, ...definedOnly(opts) };
    this.lastSeq = source.lastSeq?.() ?? 0;
    this.ring = new FrameRing(this.opts.bufferSize, this.lastSeq);
    this.unsubscribe = source.subscribe((event) => this.onEvent(event));
  }

  /** Starts streaming to `out` (headers already sent); returns the function that detaches. */
  attach(out: Writable, opts: AttachOptions = {}): () => void {
    if (out.destroyed || out.writableEnded) return () => {};
    const client: Client = {
      out,
      queue: [],
      queuedBytes: 0,
      blocked: false,
      closed: false,
      onDrain: () => this.onDrain(client),
      onGone: () => this.detach(client),
    };
    out.on('drain', client.onDrain);
    out.on('close', client.onGone);
    out.on('error', client.onGone);
    // Replay goes out in one write outside the cap: the ring already bounds it.
    const first = (opts.preamble ?? '') + this.replayFor(opts.lastEventId).join('');
    if (first && !out.write(first)) client.blocked = true;
    this.clients.add(client);
    this.startHeartbeat();
    return client.onGone;
  }

  stats(): SseStats {
    let queuedBytes = 0;
    let blockedClients = 0;
    for (const c of this.clients) {
      queuedBytes += c.queuedBytes;
      if (c.blocked) blockedClients += 1;
    }
    return {
      clients: this.clients.size,
      bufferedEvents: this.ring.size,
      replayFloor: this.ring.floor,
      lastSeq: this.lastSeq,
      queuedBytes,
      blockedClients,
      droppedClients: this.dropped,
    };
  }

  /** Stops relaying and ends every stream; clients reconnect elsewhere or later. */
  close(): void {
    this.unsubscribe();
    this.clearFlush();
    this.stopHeartbeat();
    for (const c of [...this.clients]) {
      this.detach(c);
      c.out.end();
    }
    this.ring.clear();
  }

  private onEvent(event: SseSourceEvent): void {
    const frame = toFrame(event);
    this.lastSeq = event.seq;
    this.ring.push(frame);
    for (const c of this.clients) this.enqueue(c, frame.text, frame.bytes);
    this.scheduleFlush();
  }

  private replayFor(lastEventId: string | null | undefined): string[] {
    if (lastEventId === undefined || lastEventId === null || lastEventId === '') return [];
    const n = /^\d{1,15}$/.test(lastEventId) ? Number(lastEventId) : NaN;
    // Ahead of us (a restarted server) or garbage: the client cannot trust what it holds.
    const frames = n <= this.lastSeq ? this.ring.since(n) : null;
    if (frames) return frames.map((f) => f.text);
    return [toFrame({ seq: this.lastSeq, type: 'resync', payload: {} }).text];
  }

  private enqueue(c: Client, text: string, bytes: number): void {
    c.queue.push(text);
    c.queuedBytes += bytes;
    if (c.queuedBytes < this.opts.maxQueuedBytes) {
      this.dirty.add(c);
    } else if (c.blocked) {
      this.drop(c);
    } else {
      // A burst, not a stuck socket: write now rather than hold more.
      this.flushClient(c);
    }
  }

  private flushClient(c: Client): void {
    this.dirty.delete(c);
    if (c.blocked || c.closed || c.queue.length === 0) return;
    const chunk = c.queue.length === 1 ? (c.queue[0] ?? '') : c.queue.join('');
    c.queue = [];
    c.queuedBytes = 0;
    if (!c.out.write(chunk)) c.blocked = true;
  }

  private flushAll = (): void => {
    this.flushTimer = null;
    this.flushImmediate = null;
    this.lastFlushAt = performance.now();
    for (const c of this.dirty) this.flushClient(c);
  };

  /**
   * A throttle on one shared timer: after a quiet spell the next flush goes out at once
   * (coalescing whatever the same tick publishes); within a window it waits for the window's
   * end. At most one write per client per flushIntervalMs, and no event waits longer.
   */
  private scheduleFlush(): void {
    if (this.dirty.size === 0 || this.flushTimer || this.flushImmediate) return;
    const interval = this.opts.flushIntervalMs;
    if (interval <= 0) {
      this.flushAll();
      return;
    }
    const wait = this.lastFlushAt + interval - performance.now();
    if (wait <= 0) this.flushImmediate = setImmediate(this.flushAll);
    else this.flushTimer = setTimeout(this.flushAll, wait);
    // Not unref'd: an unref'd immediate does not stop libuv from blocking in poll, so it would
    // wait for unrelated I/O. Pending flushes exist only while clients do, and close() clears them.
  }

  private clearFlush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    if (this.flushImmediate) clearImmediate(this.flushImmediate);
    this.flushTimer = null;
    this.flushImmediate = null;
    this.dirty.clear();
  }

  private onDrain(c: Client): void {
    c.blocked = false;
    if (c.queue.length === 0) return;
    this.dirty.add(c);
    this.scheduleFlush();
  }

  private drop(c: Client): void {
    this.dropped += 1;
    this.detach(c);
    // destroy, not end: end would wait behind the very bytes the client is not reading.
    c.out.destroy();
  }

  private detach(c: Client): void {
    if (c.closed) return;
    c.closed = true;
    c.queue = [];
    c.queuedBytes = 0;
    this.clients.delete(c);
    this.dirty.delete(c);
    c.out.off('drain', c.onDrain);
    c.out.off('close', c.onGone);
    c.out.off('error', c.onGone);
    // A late 'error' after we stopped listening must not crash the process.
    c.out.on('error', ignore);
    if (this.clients.size === 0) this.stopHeartbeat();
  }

  private startHeartbeat(): void {
    if (this.heartbeatTimer || this.opts.heartbeatMs <= 0) return;
    this.heartbeatTimer = setInterval(() => {
      for (const c of this.clients) this.enqueue(c, HEARTBEAT, HEARTBEAT_BYTES);
      this.scheduleFlush();
    }, this.opts.heartbeatMs);
    this.heartbeatTimer.unref();
  }

  private stopHeartbeat(): void {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    this.heartbeatTimer = null;
  }
}

function toFrame(event: SseSourceEvent): Frame {
  // JSON.stringify never emits a raw newline, so one data: line always suffices.
  const envelope = { type: event.type, ...(event.at ? { at: event.at } : {}), payload: event.payload ?? null };
  const text = `id: ${event.seq}\ndata: ${JSON.stringify(envelope)}\n\n`;
  return { seq: event.seq, text, bytes: Buffer.byteLength(text) };
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function ignore(): void {}
