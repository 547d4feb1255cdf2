// The hub on its own, against real node Writables whose draining the test controls:
// framing, batching, backpressure, dropping, replay and resync without a network.
import test from 'ava';
import { Writable } from 'node:stream';
import { EventBus } from '../../src/tasks/bus.js';
import { SseHub } from '../../src/http/sse/hub.js';
import { FrameRing } from '../../src/http/sse/ring.js';

/** A Writable that records each write; `stalled` ones never finish a write until drain(). */
class Sink extends Writable {
  readonly chunks: string[] = [];
  private pending: (() => void) | null = null;
  constructor(private stalled = false) {
    super({ decodeStrings: false, highWaterMark: stalled ? 1 : 16 * 1024 });
  }
  override _write(chunk: unknown, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.chunks.push(String(chunk));
    if (this.stalled) this.pending = () => done();
    else done();
  }
  /** Lets the stalled write finish (and any behind it), which emits 'drain'. */
  drain(): void {
    this.stalled = false;
    const p = this.pending;
    this.pending = null;
    p?.();
  }
  get text(): string {
    return this.chunks.join('');
  }
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 20_000; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`never happened: ${what}`);
}

/** Every event is stamped with the time it was published (the bus's clock, fixed here). */
const AT = '2026-11-25T00:00:00.000Z';
const frame = (seq: number, type: string, payload: unknown): string => `id: ${seq}\ndata: ${JSON.stringify({ type, at: AT, payload })}\n\n`;
/** The hub's own resync frame: not a bus event, no publication time. */
const resync = (seq: number): string => `id: ${seq}\ndata: ${JSON.stringify({ type: 'resync', payload: {} })}\n\n`;
const RESYNC6 = resync(6);
const publishN = (bus: EventBus, from: number, to: number): void => {
  for (let n = from; n <= to; n++) bus.publish('t', { n });
};

test('sse hub frames each event as id and one data line, no event line', (t) => {
  const bus = new EventBus({ now: () => AT });
  const hub = new SseHub(bus, { flushIntervalMs: 0 });
  const out = new Sink();
  hub.attach(out, { preamble: 'retry: 2000\n\n' });
  bus.publish('node.state.changed', { nodeId: 'n1', status: 'ready' });
  t.is(out.text, `retry: 2000\n\n${frame(1, 'node.state.changed', { nodeId: 'n1', status: 'ready' })}`);
  hub.close();
});

test('sse hub batches a burst into one write per client', async (t) => {
  const bus = new EventBus({ now: () => AT });
  const hub = new SseHub(bus, { flushIntervalMs: 100 });
  const a = new Sink();
  const b = new Sink();
  hub.attach(a);
  hub.attach(b);
  publishN(bus, 1, 5);
  t.deepEqual(a.chunks, [], 'nothing is written synchronously');
  await until(() => a.chunks.length === 1 && b.chunks.length === 1, 'first flush');
  publishN(bus, 6, 8);
  await until(() => a.chunks.length === 2, 'second flush');
  const expected = [1, 2, 3, 4, 5].map((n) => frame(n, 't', { n })).join('');
  t.is(a.chunks[0], expected);
  t.is(b.chunks[0], expected);
  t.is(a.chunks[1], [6, 7, 8].map((n) => frame(n, 't', { n })).join(''));
  hub.close();
});

test('sse hub flushes on its own, with nothing else to wake the event loop', async (t) => {
  const bus = new EventBus({ now: () => AT });
  const hub = new SseHub(bus, { flushIntervalMs: 100 });
  const writes: string[] = [];
  let wrote!: () => void;
  const out = new Writable({
    decodeStrings: false,
    write(chunk: unknown, _enc, done) {
      writes.push(String(chunk));
      wrote();
      done();
    },
  });
  hub.attach(out);
  // No polling here: the hub's own immediate (first flush) and timer (second) must fire.
  for (let round = 1; round <= 2; round++) {
    const next = new Promise<void>((r) => (wrote = r));
    bus.publish('t', { n: round });
    await next;
  }
  t.deepEqual(writes, [frame(1, 't', { n: 1 }), frame(2, 't', { n: 2 })]);
  hub.close();
});

test('sse hub without batching writes every event at once', (t) => {
  const bus = new EventBus({ now: () => AT });
  const hub = new SseHub(bus, { flushIntervalMs: 0 });
  const out = new Sink();
  hub.attach(out);
  publishN(bus, 1, 3);
  t.is(out.chunks.length, 3);
  hub.close();
});

test('sse hub holds events for a blocked client and sends them in one write on drain', async (t) => {
  const bus = new EventBus({ now: () => AT });
  const hub = new SseHub(bus, { flushIntervalMs: 0 });
  const out = new Sink(true);
  hub.attach(out);
  publishN(bus, 1, 4);
  t.is(out.chunks.length, 1, 'the first write was refused; the rest wait in the hub');
  t.is(hub.stats().blockedClients, 1);
  t.true(hub.stats().queuedBytes > 0);
  out.drain();
  await until(() => out.chunks.length === 2, 'flushed after drain');
  t.is(out.chunks[1], [2, 3, 4].map((n) => frame(n, 't', { n })).join(''));
  t.is(hub.stats().queuedBytes, 0);
  t.is(hub.stats().blockedClients, 0);
  hub.close();
});

test('sse hub drops a blocked client at the byte cap and keeps nothing for it', (t) => {
  const bus = new EventBus({ now: () => AT });
  const hub = new SseHub(bus, { flushIntervalMs: 0, maxQueuedBytes: 1000 });
  const stuck = new Sink(true);
  const fine = new Sink();
  hub.attach(stuck);
  hub.attach(fine);
  const big = 'x'.repeat(300);
  for (let i = 0; i < 5; i++) bus.publish('t', { big });
  t.true(stuck.destroyed);
  t.false(fine.destroyed);
  t.like(hub.stats(), { clients: 1, droppedClients: 1, queuedBytes: 0, blockedClients: 0 });
  t.is(fine.chunks.length, 5);
  hub.close();
});

test('sse hub writes early instead of dropping a client that is only bursting', (t) => {
  const bus = new EventBus({ now: () => AT });
  const hub = new SseHub(bus, { flushIntervalMs: 60_000, maxQueuedBytes: 1000 });
  const out = new Sink();
  hub.attach(out);
  const big = 'x'.repeat(300);
  // Each frame is ~350 bytes: the third crosses the cap.
  for (let i = 0; i < 3; i++) bus.publish('t', { big });
  t.is(out.chunks.length, 1, 'the cap forced one write of the three events');
  t.is(out.chunks[0], [1, 2, 3].map((n) => frame(n, 't', { big })).join(''));
  t.like(hub.stats(), { clients: 1, droppedClients: 0, queuedBytes: 0 });
  hub.close();
});

test('sse hub replays after Last-Event-ID and continues live without gaps or repeats', (t) => {
  const bus = new EventBus({ now: () => AT });
  const hub = new SseHub(bus, { flushIntervalMs: 0, bufferSize: 4 });
  publishN(bus, 1, 6);
  const cases: [string | null, string][] = [
    [null, ''],
    ['', ''],
    ['6', ''],
    ['3', [4, 5, 6].map((n) => frame(n, 't', { n })).join('')],
    ['2', [3, 4, 5, 6].map((n) => frame(n, 't', { n })).join('')],
    ['1', RESYNC6],
    ['7', RESYNC6],
    ['abc', RESYNC6],
    ['-1', RESYNC6],
  ];
  const sinks = cases.map(([lastEventId]) => {
    const s = new Sink();
    hub.attach(s, { lastEventId });
    return s;
  });
  bus.publish('t', { n: 7 });
  cases.forEach(([lastEventId, replay], i) => {
    t.is(sinks[i]?.text, replay + frame(7, 't', { n: 7 }), `Last-Event-ID ${String(lastEventId)}`);
  });
  hub.close();
});

test('sse hub created after events were published knows its history starts there', (t) => {
  const bus = new EventBus({ now: () => AT });
  publishN(bus, 1, 10);
  const hub = new SseHub(bus, { flushIntervalMs: 0 });
  const behind = new Sink();
  const current = new Sink();
  hub.attach(behind, { lastEventId: '5' });
  hub.attach(current, { lastEventId: '10' });
  t.is(behind.text, resync(10));
  t.is(current.text, '');
  hub.close();
});

test('sse hub forgets a client whose stream closes', async (t) => {
  const bus = new EventBus({ now: () => AT });
  const hub = new SseHub(bus, { flushIntervalMs: 0 });
  const out = new Sink();
  const detach = hub.attach(out);
  const other = new Sink();
  hub.attach(other);
  t.is(hub.stats().clients, 2);
  out.destroy();
  await until(() => hub.stats().clients === 1, 'closed stream removed');
  detach(); // idempotent
  hub.attach(out); // already destroyed: ignored
  t.is(hub.stats().clients, 1);
  hub.close();
  t.is(hub.stats().clients, 0);
  t.is(bus.subscriberCount(), 0);
});

test('sse ring keeps the newest events across wraparound', (t) => {
  const ring = new FrameRing(3);
  for (let seq = 1; seq <= 7; seq++) ring.push({ seq, text: String(seq), bytes: 1 });
  t.is(ring.size, 3);
  t.is(ring.floor, 4);
  t.deepEqual(
    ring.since(4)?.map((f) => f.seq),
    [5, 6, 7],
  );
  t.deepEqual(
    ring.since(6)?.map((f) => f.seq),
    [7],
  );
  t.deepEqual(ring.since(7), []);
  t.is(ring.since(3), null);
  t.throws(() => new FrameRing(0), { instanceOf: RangeError });
});
