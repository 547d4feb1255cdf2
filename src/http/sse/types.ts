// The shapes the SSE hub exchanges with the bus, its owner and its handler.

/** What the hub needs of an event: EventBus's events and plain test buses both fit. */
export interface SseSourceEvent {
  seq: number;
  /** When it was published; sent as the envelope's `at` when known. */
  at?: string;
  type: string;
  payload: unknown;
}

/** The narrow side of the bus the hub depends on. */
export interface SseEventSource {
  subscribe(handler: (event: SseSourceEvent) => void): () => void;
  /** The newest seq already published; lets a hub created late know where history starts. */
  lastSeq?(): number;
}

export interface SseHubOptions {
  /** Events kept for Last-Event-ID replay. */
  bufferSize?: number;
  /** Interval of the `: heartbeat` comment. */
  heartbeatMs?: number;
  /**
   * At most one write per client per this interval, and no event waits longer than it;
   * 0 writes every event at once. End-to-end p99 is about this plus the fan-out time.
   */
  flushIntervalMs?: number;
  /** A client whose socket is not draining is dropped once this much waits for it. */
  maxQueuedBytes?: number;
}

export interface SseStats {
  clients: number;
  /** Events held for replay. */
  bufferedEvents: number;
  /** Replay works for Last-Event-ID at or above this; below it a client gets resync. */
  replayFloor: number;
  lastSeq: number;
  /** Bytes waiting in the hub's per-client queues, summed. */
  queuedBytes: number;
  /** Clients whose last write was refused and that wait for 'drain'. */
  blockedClients: number;
  /** Since start: clients cut off for not reading. */
  droppedClients: number;
}

export interface AttachOptions {
  /** From the Last-Event-ID header or ?lastEventId=; absent or empty means "live only". */
  lastEventId?: string | null;
  /** Written before any event, e.g. `retry: 2000\n\n`. */
  preamble?: string;
}
