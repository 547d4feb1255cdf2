// The manager runs every registered loop: list + watch the store, turn changes into queue keys,
// and drive observe → plan → apply for each key, translating results into requeues.
// Level-triggered: a key says "look at this object again", never what changed.
import { setMaxListeners } from 'node:events';
import { ConflictError, storeUnavailable, TerminalError } from '../errors.js';
import { systemClock, type Clock } from '../model/clock.js';
import { asActor } from '../store/audit.js';
import type { Store, StoreEvent } from '../store/types.js';
import { realTimers, type BackoffOptions, type Timers } from './backoff.js';
import { WorkQueue, type IdleOptions, type QueueStats } from './queue.js';
import {
  checkDependencies,
  describeLoops,
  keysForDoc,
  loopKey,
  loopsFor,
  parseKey,
  type AnyReconciler,
  type LoopDescription,
} from './routing.js';
import type { Logger, Reconciler, ReconcileContext, Result } from './types.js';

export interface ManagerOptions {
  store: Store;
  /** Most keys reconciled at once, across all loops. */
  concurrency: number;
  /** Every id of every loop is enqueued this often, to heal anything a watch missed. */
  resyncMs: number;
  log: Logger;
  random?: () => number;
  clock?: Clock;
  timers?: Timers;
  backoff?: Partial<BackoffOptions>;
  /** Told how each reconcile ended and how long it took (metrics); nothing by default. */
  observer?: ReconcileObserver;
}

/** How a reconcile ended: its result, or the sort of error it threw (`stopped`: aborted by stop()). */
export type ReconcileOutcome = 'done' | 'requeue' | 'blocked' | 'gone' | 'error' | 'terminal' | 'conflict' | 'stopped';

/** One small seam for whoever counts reconciles (src/metrics): the runtime imports no metrics library. */
export interface ReconcileObserver {
  reconciled(loop: string, seconds: number, outcome: ReconcileOutcome): void;
}

export interface ManagerStats {
  reconciles: number;
  errors: number;
  terminalErrors: number;
  conflicts: number;
  /** Sum of reconcile durations by the injected clock. */
  busyMs: number;
  queue: QueueStats;
}

export class Manager {
  private readonly loops = new Map<string, AnyReconciler>();
  private readonly queue: WorkQueue;
  private readonly abort = new AbortController();
  private readonly ctx: ReconcileContext = { signal: this.abort.signal };
  private readonly clock: Clock;
  private readonly timers: Timers;
  /** Relists in progress; idle() and stop() wait for them. */
  private readonly lists = new Set<Promise<void>>();
  private unwatch: (() => void) | undefined;
  private cancelResync: (() => void) | undefined;
  private started = false;
  private stopped = false;
  private enqueued = 0;
  private counters = { reconciles: 0, errors: 0, terminalErrors: 0, conflicts: 0, busyMs: 0 };

  constructor(private readonly opts: ManagerOptions) {
    // Every reconcile in flight listens on the one stop signal; more than ten is normal.
    setMaxListeners(0, this.abort.signal);
    this.clock = opts.clock ?? systemClock;
    this.timers = opts.timers ?? realTimers;
    this.queue = new WorkQueue({
      concurrency: opts.concurrency,
      timers: this.timers,
      ...(opts.random ? { random: opts.random } : {}),
      ...(opts.backoff ? { backoff: opts.backoff } : {}),
      // reconcile() catches everything; reaching this is a bug in the manager itself.
      onError: (key, err) => opts.log('error', 'work queue handler failed', { key, error: String(err) }),
    });
  }

  register<O, P>(loop: Reconciler<O, P>): void {
    if (this.started) throw new Error(`cannot register loop "${loop.name}" after start()`);
    if (!loop.name || loop.name.includes('/')) throw new Error(`invalid loop name "${loop.name}"`);
    if (this.loops.has(loop.name)) throw new Error(`loop "${loop.name}" is already registered`);
    this.loops.set(loop.name, loop);
  }

  /** Lists every loop's kind, enqueues each id, then watches from the revision before the list
   * (so nothing written during the list is missed; duplicates are de-duplicated by the queue). */
  async start(): Promise<void> {
    if (this.started) throw new Error('Manager already started');
    checkDependencies(this.loops.values());
    this.started = true;
    this.queue.start((key) => this.reconcile(key));
    const revision = this.opts.store.revision();
    await this.relist();
    if (this.stopped) return;
    this.unwatch = this.opts.store.watch(revision, (event) => this.onEvent(event));
    this.scheduleResync();
    this.opts.log('info', 'manager started', { loops: [...this.loops.keys()], revision });
  }

  /** Unwatches, aborts in-flight reconciles' signal, drops queued keys, waits for in-flight. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.unwatch?.();
    this.cancelResync?.();
    this.abort.abort(new Error('manager stopping'));
    await this.queue.shutdown();
    await Promise.allSettled([...this.lists]);
  }

  enqueue(loopName: string, id: string): void {
    if (!this.loops.has(loopName)) throw new Error(`unknown loop "${loopName}"`);
    this.add(loopKey(loopName, id));
  }

  describe(): LoopDescription[] {
    return describeLoops(this.loops.values());
  }

  /** Loops woken by a change to a document of `kind`. */
  loopsFor(kind: string): string[] {
    return loopsFor(this.loops.values(), kind);
  }

  stats(): ManagerStats {
    return { ...this.counters, queue: this.queue.stats() };
  }

  /** Started and not stopped: the loops are running (GET /readyz). */
  running(): boolean {
    return this.started && !this.stopped;
  }

  /** Keys waiting per loop (every registered loop, 0 when none waits): read when metrics are
   * scraped, by one pass over the waiting keys. */
  queueDepths(): Map<string, number> {
    const depths = new Map<string, number>([...this.loops.keys()].map((name) => [name, 0]));
    for (const key of this.queue.waitingKeys()) {
      const loop = key.slice(0, key.indexOf('/'));
      depths.set(loop, (depths.get(loop) ?? 0) + 1);
    }
    return depths;
  }

  /** For tests and benchmarks: resolves once relists, queued and running work have settled
   * and nothing new was enqueued meanwhile. Delayed keys count only with includeDelayed. */
  async idle(opts: IdleOptions = {}): Promise<void> {
    for (;;) {
      const before = this.enqueued;
      await tick();
      await Promise.allSettled([...this.lists]);
      await this.queue.idle(opts);
      await tick();
      if (this.enqueued === before && this.lists.size === 0) return;
    }
  }

  private add(key: string): void {
    this.enqueued++;
    this.queue.add(key);
  }

  // Called by the store; must never throw back into it.
  private onEvent(event: StoreEvent): void {
    if (this.stopped) return;
    try {
      if (event.type === 'relist') {
        this.opts.log('warn', 'watch history lost; relisting', { revision: event.revision });
        void this.relist();
        return;
      }
      const onMapError = (loop: string, err: unknown): void =>
        this.opts.log('error', 'watch mapping failed', { loop, kind: event.doc.kind, error: message(err) });
      for (const key of keysForDoc(this.loops.values(), event.doc, onMapError, event.specChanged)) this.add(key);
    } catch (err) {
      this.opts.log('error', 'store event handling failed', { error: message(err) });
    }
  }

  /** Enqueues every id of every loop. A failed list is logged; the next resync tries again. */
  private relist(): Promise<void> {
    const run = (async () => {
      for (const loop of this.loops.values()) {
        try {
          const docs = await this.opts.store.list(loop.kind);
          for (const doc of docs) this.add(loopKey(loop.name, doc.id));
        } catch (err) {
          this.opts.log('error', 'list failed', { loop: loop.name, kind: loop.kind, error: message(err) });
        }
      }
    })();
    this.lists.add(run);
    void run.finally(() => this.lists.delete(run));
    return run;
  }

  private scheduleResync(): void {
    if (this.stopped || this.opts.resyncMs <= 0) return;
    this.cancelResync = this.timers.schedule(() => {
      void this.relist().finally(() => this.scheduleResync());
    }, this.opts.resyncMs);
  }

  private async reconcile(key: string): Promise<void> {
    const parsed = parseKey(key);
    const loop = parsed && this.loops.get(parsed.loop);
    if (!parsed || !loop) {
      this.opts.log('error', 'dropping key of no loop', { key });
      return;
    }
    this.counters.reconciles++;
    const started = this.clock.now();
    // The observer's duration is wall time whatever clock the manager is given (tests inject one).
    const t0 = this.opts.observer ? performance.now() : 0;
    let outcome: ReconcileOutcome = 'done';
    try {
      // What the loop writes is its doing: the audit trail names it.
      await asActor({ type: 'system', name: parsed.loop }, async () => {
        const observed = await loop.observe(parsed.id, this.ctx);
        if (observed === undefined) {
          this.queue.forget(key);
          outcome = 'gone';
          return;
        }
        const result = await loop.apply(observed, loop.plan(observed), this.ctx);
        outcome = this.onResult(key, result);
      });
    } catch (err) {
      outcome = this.onError(key, err);
    } finally {
      this.counters.busyMs += this.clock.now() - started;
      this.opts.observer?.reconciled(parsed.loop, (performance.now() - t0) / 1000, outcome);
    }
  }

  /** `result` undefined: a loop that returned nothing (a bug), reported as an unknown result. */
  private onResult(key: string, result: Result | undefined): ReconcileOutcome {
    switch (result?.type) {
      case 'done':
        this.queue.forget(key);
        return 'done';
      case 'requeue':
        this.queue.forget(key);
        this.queue.addAfter(key, result.afterMs);
        return 'requeue';
      case 'blocked':
        // Waiting on a gate is not a failure: the backoff starts over once it opens.
        this.queue.forget(key);
        this.opts.log('debug', 'blocked', { key, reason: result.reason, message: result.message });
        this.queue.addAfter(key, result.retryAfterMs);
        return 'blocked';
      case undefined:
      default:
        return this.onError(key, new Error(`reconciler returned an unknown result: ${JSON.stringify(result)}`));
    }
  }

  private onError(key: string, err: unknown): ReconcileOutcome {
    if (this.stopped) return 'stopped'; // aborted work fails by design while stopping
    if (err instanceof TerminalError) {
      this.counters.terminalErrors++;
      this.opts.log('error', 'reconcile failed terminally; waiting for a change', { key, error: err.message });
      this.queue.forget(key);
      return 'terminal';
    }
    if (err instanceof ConflictError) {
      // Someone wrote the object since we read it: look again, quietly.
      this.counters.conflicts++;
      this.opts.log('debug', 'conflict; requeueing', { key, error: err.message });
      this.queue.addRateLimited(key);
      return 'conflict';
    }
    this.counters.errors++;
    const failures = this.queue.numRequeues(key) + 1;
    // The store away for a moment (an etcd election) is the weather, not a fault of this object:
    // a warning, still counted and backed off like any failure.
    const level = storeUnavailable(err) ? 'warn' : 'error';
    this.opts.log(level, 'reconcile failed; backing off', { key, failures, error: message(err) });
    this.queue.addRateLimited(key);
    return 'error';
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));
