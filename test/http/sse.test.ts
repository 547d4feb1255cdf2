// /events end to end: a real koa server on loopback, the real EventBus, a real EventSource
// client (npm `eventsource`), raw fetch for what EventSource hides (comments, headers) and a
// raw socket that never reads for the slow client. Conditions are awaited, never timed.
import test from 'ava';
import Koa from 'koa';
import { once } from 'node:events';
import type { AddressInfo, Socket } from 'node:net';
import { connect } from 'node:net';
import type { Server } from 'node:http';
import { EventSource } from 'eventsource';
import { EventBus } from '../../src/tasks/bus.js';
import { SseHub, type SseHubOptions } from '../../src/http/sse/hub.js';
import { sseHandler } from '../../src/http/sse/handler.js';

interface Harness {
  bus: EventBus;
  hub: SseHub;
  url: string;
  /** Server-side sockets, to cut connections from the server's end. */
  sockets: Set<Socket>;
  close(): Promise<void>;
}

async function start(opts: SseHubOptions = {}): Promise<Harness> {
  const bus = new EventBus();
  const hub = new SseHub(bus, opts);
  const app = new Koa();
  const events = sseHandler(hub, { retryMs: 20 });
  app.use(async (ctx, next) => {
    if (ctx.path === '/events') await events(ctx, next);
    else await next();
  });
  const server: Server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const sockets = new Set<Socket>();
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  const { port } = server.address() as AddressInfo;
  return {
    bus,
    hub,
    url: `http://127.0.0.1:${port}/events`,
    sockets,
    async close() {
      hub.close();
      for (const s of sockets) s.destroy();
      server.close();
      await once(server, 'close');
    },
  };
}

interface Received {
  id: string;
  data: { type: string; at?: string; payload: unknown };
}

/** An EventSource that records every message; `headers` are added to each request. */
function listen(url: string, headers: () => Record<string, string> = () => ({}), gate?: (attempt: number) => Promise<void>) {
  const messages: Received[] = [];
  const requests: Record<string, string>[] = [];
  const es = new EventSource(url, {
    fetch: async (input, init) => {
      const sent = { ...(init.headers as Record<string, string>), ...headers() };
      requests.push(sent);
      await gate?.(requests.length);
      return fetch(input, { ...init, headers: sent });
    },
  });
  es.onmessage = (ev) => messages.push({ id: ev.lastEventId, data: JSON.parse(String(ev.data)) as Received['data'] });
  return { es, messages, requests };
}

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 20_000; i++) {
    if (cond()) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`never happened: ${what}`);
}

const ids = (ms: Received[]): number[] => ms.map((m) => Number(m.id));
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i);

test('sse relays events in order with ids and the documented payloads unchanged', async (t) => {
  const h = await start();
  const { es, messages } = listen(h.url);
  await until(() => h.hub.stats().clients === 1, 'client attached');
  const shapes = [
    { type: 'image.download.progress', payload: { imageId: 'img-1', bytes: 512, total: 2048, percent: 25, done: false } },
    { type: 'task.state.changed', payload: { runId: 'run-1', taskName: 'osd.create', state: 'running' } },
    { type: 'node.state.changed', payload: { nodeId: 'node-1', status: 'provisioning' } },
    { type: 'some.future.type', payload: { anything: [1, 'two', null] } },
  ] as const;
  for (const s of shapes) h.bus.publish(s.type, s.payload);
  await until(() => messages.length === shapes.length, 'all events received');
  t.deepEqual(ids(messages), [1, 2, 3, 4]);
  // The documented envelope and payloads, plus the time each was published.
  t.deepEqual(
    messages.map(({ data: { at: _, ...rest } }) => rest),
    shapes.map((s) => ({ type: s.type, payload: s.payload })),
  );
  for (const m of messages) t.false(Number.isNaN(Date.parse(m.data.at ?? '')), `an ISO time: ${m.data.at}`);
  es.close();
  await h.close();
});

test('sse answers with stream headers, a retry line first, and heartbeat comments', async (t) => {
  const h = await start({ heartbeatMs: 10 });
  const res = await fetch(h.url);
  t.is(res.status, 200);
  t.is(res.headers.get('content-type'), 'text/event-stream; charset=utf-8');
  t.is(res.headers.get('cache-control'), 'no-cache');
  t.is(res.headers.get('x-accel-buffering'), 'no');
  // fetch's body is a ReadableStream of any; its chunks are bytes.
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  while (!text.includes(': heartbeat\n\n')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += decoder.decode(value, { stream: true });
  }
  t.true(text.startsWith('retry: 20\n\n'));
  t.true(text.includes(': heartbeat\n\n'));
  await reader.cancel();
  await h.close();
});

test('sse resumes a reconnecting client with exactly the events it missed', async (t) => {
  const h = await start();
  let release!: () => void;
  const released = new Promise<void>((r) => (release = r));
  // The reconnect waits at the gate until the missed events are published.
  const { es, messages, requests } = listen(
    h.url,
    () => ({}),
    (attempt) => (attempt > 1 ? released : Promise.resolve()),
  );
  await until(() => h.hub.stats().clients === 1, 'client attached');
  for (let i = 1; i <= 3; i++) h.bus.publish('node.state.changed', { nodeId: `n${i}`, status: 'ready' });
  await until(() => messages.length === 3, 'first three received');

  for (const s of h.sockets) s.destroy();
  await until(() => h.hub.stats().clients === 0 && requests.length === 2, 'disconnected, reconnect pending');
  for (let i = 4; i <= 6; i++) h.bus.publish('node.state.changed', { nodeId: `n${i}`, status: 'ready' });
  release();
  await until(() => h.hub.stats().clients === 1, 'client re-attached');
  for (let i = 7; i <= 8; i++) h.bus.publish('node.state.changed', { nodeId: `n${i}`, status: 'ready' });
  await until(() => messages.length >= 8, 'all eight received');

  t.is(requests[1]?.['Last-Event-ID'], '3');
  t.deepEqual(ids(messages), range(1, 8));
  t.deepEqual(
    messages.map((m) => (m.data.payload as { nodeId: string }).nodeId),
    range(1, 8).map((i) => `n${i}`),
  );
  es.close();
  await h.close();
});

test('sse replays from ?lastEventId= for clients that cannot set headers', async (t) => {
  const h = await start();
  for (let i = 1; i <= 5; i++) h.bus.publish('node.state.changed', { nodeId: `n${i}`, status: 'ready' });
  const { es, messages } = listen(`${h.url}?lastEventId=2`);
  await until(() => messages.length === 3, 'replay received');
  t.deepEqual(ids(messages), [3, 4, 5]);
  es.close();
  await h.close();
});

test('sse sends one resync event to a client older than the buffer, then live events', async (t) => {
  const h = await start({ bufferSize: 5 });
  for (let i = 1; i <= 20; i++) h.bus.publish('node.state.changed', { nodeId: `n${i}`, status: 'ready' });
  t.is(h.hub.stats().replayFloor, 15);

  const old = listen(h.url, () => ({ 'Last-Event-ID': '14' }));
  const edge = listen(h.url, () => ({ 'Last-Event-ID': '15' }));
  const ahead = listen(h.url, () => ({ 'Last-Event-ID': '999' }));
  await until(() => h.hub.stats().clients === 3, 'three attached');
  h.bus.publish('node.state.changed', { nodeId: 'n21', status: 'ready' });
  await until(() => old.messages.length === 2 && edge.messages.length === 6 && ahead.messages.length === 2, 'all received');

  const resync = { id: '20', data: { type: 'resync', payload: {} } };
  t.deepEqual(old.messages[0], resync);
  t.deepEqual(ahead.messages[0], resync);
  t.deepEqual(ids(old.messages), [20, 21]);
  t.deepEqual(ids(edge.messages), range(16, 21));
  for (const c of [old, edge, ahead]) c.es.close();
  await h.close();
});

test('sse drops a client that stops reading and releases what it held', async (t) => {
  const h = await start({ maxQueuedBytes: 256 * 1024, bufferSize: 8, flushIntervalMs: 0 });
  const fast = listen(h.url);
  await until(() => h.hub.stats().clients === 1, 'fast client attached');
  const url = new URL(h.url);
  const slow = connect(Number(url.port), '127.0.0.1');
  slow.on('error', () => {});
  await once(slow, 'connect');
  slow.write(`GET /events HTTP/1.1\r\nHost: ${url.host}\r\nAccept: text/event-stream\r\n\r\n`);
  slow.pause(); // never reads again: the kernel buffers fill, then the server's, then ours
  await until(() => h.hub.stats().clients === 2, 'slow client attached');

  const big = 'x'.repeat(64 * 1024);
  let sent = 0;
  // Paced by the fast client, so only the slow one can fall behind. Bounded: ~128 MiB at most.
  while (h.hub.stats().droppedClients === 0 && sent < 2000) {
    sent += 1;
    h.bus.publish('task.log', { runId: 'r', line: { timestamp: '', level: 'info', message: big } });
    await until(() => fast.messages.length === sent, `fast client got event ${sent}`);
  }

  const stats = h.hub.stats();
  t.is(stats.droppedClients, 1);
  t.is(stats.clients, 1, 'the fast client stays');
  t.is(stats.queuedBytes, 0, 'nothing is held for the dropped client');
  t.is(stats.bufferedEvents, 8);
  slow.destroy();
  fast.es.close();
  await h.close();
});

test('sse removes clients that close', async (t) => {
  const h = await start();
  const clients = [listen(h.url), listen(h.url), listen(h.url)];
  await until(() => h.hub.stats().clients === 3, 'three attached');
  clients[0]?.es.close();
  clients[1]?.es.close();
  await until(() => h.hub.stats().clients === 1, 'two removed');
  h.bus.publish('node.state.changed', { nodeId: 'n1', status: 'ready' });
  await until(() => clients[2]?.messages.length === 1, 'the remaining one still receives');
  t.is(h.hub.stats().clients, 1);
  t.is(h.hub.stats().droppedClients, 0);
  clients[2]?.es.close();
  await until(() => h.hub.stats().clients === 0, 'last removed');
  t.pass();
  await h.close();
});
