// One EventSource on /events for the whole page. The browser reconnects by itself (with
// Last-Event-ID) after a dropped connection; a refused one (401: the access token expired while
// the stream was down) closes it for good, so the page refreshes the session and opens a new
// stream from the last id it saw (?lastEventId=). Each event wakes the views it concerns,
// debounced, so a burst of events is one re-read.
import { viewsAffectedBy, type ViewName } from './logic.js';
import type { LiveEvent } from './types.js';

export type Connection = 'connecting' | 'live' | 'down';

export interface LiveOptions {
  /** Refreshes the session; false when it is over. */
  refresh(): Promise<boolean>;
  onEvent(e: LiveEvent): void;
  onState(s: Connection): void;
  /** Called once per debounce window with every view the events in it concerned. */
  onStale(views: Set<ViewName>): void;
  debounceMs?: number;
}

export class Live {
  private source: EventSource | null = null;
  private lastId: string | null = null;
  private stale = new Set<ViewName>();
  private flush: ReturnType<typeof setTimeout> | undefined;
  private retry: ReturnType<typeof setTimeout> | undefined;
  private closed = false;

  constructor(private readonly opts: LiveOptions) {}

  open(): void {
    this.closed = false;
    const url = this.lastId ? `/events?lastEventId=${encodeURIComponent(this.lastId)}` : '/events';
    const es = new EventSource(url);
    this.source = es;
    this.opts.onState('connecting');
    es.onopen = () => this.opts.onState('live');
    es.onmessage = (m: MessageEvent<string>) => this.message(m);
    es.onerror = () => {
      if (es.readyState !== EventSource.CLOSED) {
        this.opts.onState('connecting'); // the browser tries again by itself
        return;
      }
      this.opts.onState('down');
      es.close();
      this.reopen(1_000);
    };
  }

  /** After a refused connection: a fresh access token, then a new stream; Quarry unreachable,
   * again later. A session that is over closes the page's Live (the login form shows). */
  private reopen(delayMs: number): void {
    if (this.closed) return;
    this.retry = setTimeout(() => {
      void this.opts.refresh().then((ok) => {
        if (this.closed) return;
        if (ok) this.open();
        else this.reopen(Math.min(delayMs * 2, 30_000));
      });
    }, delayMs);
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.retry);
    clearTimeout(this.flush);
    this.source?.close();
    this.source = null;
  }

  private message(m: MessageEvent<string>): void {
    if (m.lastEventId) this.lastId = m.lastEventId;
    let e: LiveEvent;
    try {
      e = { id: m.lastEventId, ...(JSON.parse(m.data) as Omit<LiveEvent, 'id'>) };
    } catch {
      return;
    }
    this.opts.onEvent(e);
    for (const v of viewsAffectedBy(e.type)) this.stale.add(v);
    if (this.flush === undefined) {
      this.flush = setTimeout(() => {
        this.flush = undefined;
        const views = this.stale;
        this.stale = new Set();
        this.opts.onStale(views);
      }, this.opts.debounceMs ?? 300);
    }
  }
}
