// The in-process event bus: reconcilers and tasks publish, /events relays. Known types are
// checked against EventMap; further types may be published with any payload.
import type { BusEvent, EventMap } from './types.js';

/** The payload a type must carry: EventMap's for known types, anything for others. */
export type PayloadOf<K extends string> = K extends keyof EventMap ? EventMap[K] : unknown;

/** An event as subscribers see it: one of EventMap's, or a further type. */
export type AnyBusEvent = { [K in keyof EventMap]: BusEvent<K> }[keyof EventMap] | OtherBusEvent;
export interface OtherBusEvent {
  seq: number;
  at: string;
  type: string;
  payload: unknown;
}

/** Narrows an event to a known type (a plain `type ===` check cannot: further types are
 * strings too). */
export const isEvent = <K extends keyof EventMap>(event: AnyBusEvent, type: K): event is BusEvent<K> => event.type === type;

/** What it returns is not used, except that a promise's rejection is caught (async subscribers). */
export type BusHandler = (event: AnyBusEvent) => unknown;

export interface EventBusOptions {
  /** Told about a subscriber that threw; the bus itself carries on. */
  onError?: (err: unknown, event: AnyBusEvent) => void;
  /** The time stamped on each event (ISO 8601); the wall clock when absent. */
  now?: () => string;
}

export class EventBus {
  private seq = 0;
  private readonly handlers = new Set<BusHandler>();
  private readonly onError: (err: unknown, event: AnyBusEvent) => void;
  private readonly now: () => string;

  constructor(opts: EventBusOptions = {}) {
    this.onError = opts.onError ?? reportToConsole;
    this.now = opts.now ?? (() => new Date().toISOString());
  }

  /** Delivers synchronously to every subscriber, in subscription order, and returns the event. */
  publish<K extends string>(type: K, payload: PayloadOf<K>): AnyBusEvent {
    this.seq += 1;
    // Stamped here, once: every event says when, wherever it came from.
    const event = { seq: this.seq, at: this.now(), type, payload } as AnyBusEvent;
    // A copy: a handler may subscribe or unsubscribe while we deliver.
    for (const handler of [...this.handlers]) this.deliver(handler, event);
    return event;
  }

  /** Returns the function that unsubscribes. */
  subscribe(handler: BusHandler): () => void {
    // Wrapped, so the same function subscribed twice is two subscriptions.
    const entry: BusHandler = (e) => handler(e);
    this.handlers.add(entry);
    return () => {
      this.handlers.delete(entry);
    };
  }

  /** Numbers the next events after `seq` (never backwards): a new leader goes on from the
   * newest event the controllers share, so ids keep growing across a failover. */
  continueFrom(seq: number): void {
    if (seq > this.seq) this.seq = seq;
  }

  /** The seq of the newest event (0 before the first). */
  lastSeq(): number {
    return this.seq;
  }

  subscriberCount(): number {
    return this.handlers.size;
  }

  private deliver(handler: BusHandler, event: AnyBusEvent): void {
    try {
      const out: unknown = handler(event);
      // An async subscriber's rejection must not become an unhandled rejection.
      if (out instanceof Promise) out.catch((err: unknown) => this.safeReport(err, event));
    } catch (err) {
      this.safeReport(err, event);
    }
  }

  private safeReport(err: unknown, event: AnyBusEvent): void {
    try {
      this.onError(err, event);
    } catch {
      // The error reporter failing too must not break publish either.
    }
  }
}

function reportToConsole(err: unknown, event: AnyBusEvent): void {
  const message = err instanceof Error ? err.message : String(err);
  console.error(`event bus: a subscriber failed on ${event.type} #${event.seq}: ${message}`);
}
