// A keyed work queue in the manner of client-go's workqueue: concurrency is bounded, a key waits
// at most once, a key is never processed twice at once, failures back off per key, and requeues
// can be delayed. The keys that wait are a plain FIFO of strings (after a burst of 50,000
// documents some 90,000 wait at once). p-queue runs the workers and bounds their concurrency:
// a worker takes the oldest waiting key, runs its handler, and takes the next until none waits,
// as client-go's workers do. A p-queue task per key instead (options copy, id, promise,
// closures, bookkeeping, events) was ~2 KB of garbage per reconcile, ~600 MB in the reconcile
// storm of 10,000 nodes going quiet, which grew the heap V8 then kept.
import PQueue from 'p-queue';
import { backoffDelay, defaultBackoff, realTimers, type BackoffOptions, type Timers } from './backoff.js';

export type KeyHandler = (key: string) => Promise<void>;

/** A handler whose reads are all answered from memory (the embedded store, etcd's read cache)
 * settles in microtasks, so workers going from key to key never gave the event loop a turn: the
 * periodic resync of 10,000 nodes' loops held every HTTP request, boot answer and timer for 3 s
 * (5.4 s on etcd under the agents' heartbeats). Every worker of every queue shares one slice of
 * this long; past it, they all wait for the same turn of the event loop (setImmediate: after
 * the timers and the I/O that wait) before their next key. Shared, because one thread runs them
 * all: forty workers each taking a slice of their own would hold a turn for 200 ms. */
const YIELD_AFTER_MS = 5;

let sliceStart = performance.now();
let nextTurn: Promise<void> | null = null;

function overSlice(): boolean {
  return performance.now() - sliceStart >= YIELD_AFTER_MS;
}

function turn(): Promise<void> {
  return (nextTurn ??= new Promise((resolve) =>
    setImmediate(() => {
      nextTurn = null;
      sliceStart = performance.now();
      resolve();
    }),
  ));
}

export interface WorkQueueOptions {
  /** Most keys processed at once. Default 4. */
  concurrency?: number;
  backoff?: Partial<BackoffOptions>;
  random?: () => number;
  timers?: Timers;
  /** A handler that throws is reported here; the queue itself never rethrows. */
  onError?: (key: string, err: unknown) => void;
}

export interface IdleOptions {
  /** Also wait for delayed keys (addAfter, addRateLimited) to come due and be processed.
   * Default false: a key due in five minutes should not hold a test for five minutes. */
  includeDelayed?: boolean;
}

export interface QueueStats {
  /** Queued and not yet started. */
  waiting: number;
  active: number;
  /** Re-added while active; each runs once more after its current run. */
  dirty: number;
  /** Keys with a pending addAfter / addRateLimited timer. */
  delayed: number;
  /** Keys with a nonzero failure count. */
  backingOff: number;
  processed: number;
  handlerErrors: number;
}

interface Delayed {
  at: number;
  cancel: () => void;
}

export class WorkQueue {
  private readonly concurrency: number;
  private readonly backoff: BackoffOptions;
  private readonly random: () => number;
  private readonly timers: Timers;
  private readonly onError: (key: string, err: unknown) => void;
  private handler: KeyHandler | undefined;
  private closed = false;

  private readonly waiting = new Set<string>();
  /** The waiting keys in arrival order, from fifo[head] on. */
  private fifo: string[] = [];
  private head = 0;
  /** Workers started and not yet finished. */
  private running = 0;
  private readonly executor: PQueue;
  private drainWaiters: Array<() => void> = [];
  private readonly active = new Set<string>();
  private readonly dirty = new Set<string>();
  private readonly delayed = new Map<string, Delayed>();
  private readonly failures = new Map<string, number>();
  private idleWaiters: Array<{ includeDelayed: boolean; resolve: () => void }> = [];
  private processed = 0;
  private handlerErrors = 0;

  constructor(opts: WorkQueueOptions = {}) {
    // Nothing runs until start(): keys added during wiring wait for the handler.
    this.concurrency = opts.concurrency ?? 4;
    this.executor = new PQueue({ concurrency: this.concurrency });
    this.backoff = { ...defaultBackoff, ...opts.backoff };
    this.random = opts.random ?? Math.random;
    this.timers = opts.timers ?? realTimers;
    this.onError = opts.onError ?? (() => {});
  }

  start(handler: KeyHandler): void {
    if (this.handler) throw new Error('WorkQueue already started');
    if (this.closed) throw new Error('WorkQueue is shut down');
    this.handler = handler;
    this.pump();
  }

  /** Queues key now, unless it is already waiting; if it is running, it runs once more after. */
  add(key: string): void {
    if (this.closed || this.waiting.has(key)) return;
    if (this.active.has(key)) {
      this.dirty.add(key);
      return;
    }
    this.waiting.add(key);
    this.fifo.push(key);
    this.pump();
  }

  /** Queues key after ms. Of two pending timers for one key the earlier wins; add() does not
   * cancel a timer (the timer's add is simply de-duplicated if the key is still waiting). */
  addAfter(key: string, ms: number): void {
    if (this.closed) return;
    if (ms <= 0) {
      this.add(key);
      return;
    }
    const at = this.timers.now() + ms;
    const existing = this.delayed.get(key);
    if (existing && existing.at <= at) return;
    existing?.cancel();
    const cancel = this.timers.schedule(() => {
      this.delayed.delete(key);
      this.add(key);
      this.settle();
    }, ms);
    this.delayed.set(key, { at, cancel });
  }

  /** Queues key after its backoff delay, and counts one more failure for it. */
  addRateLimited(key: string): void {
    if (this.closed) return;
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    this.addAfter(key, backoffDelay(n, this.backoff, this.random));
  }

  /** Resets key's failure count: its next addRateLimited waits the base delay again. */
  forget(key: string): void {
    this.failures.delete(key);
  }

  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Keys queued and not yet started. */
  len(): number {
    return this.waiting.size;
  }

  /** The keys queued and not yet started (a live view: read it before adding). */
  waitingKeys(): IterableIterator<string> {
    return this.waiting.values();
  }

  stats(): QueueStats {
    return {
      waiting: this.waiting.size,
      active: this.active.size,
      dirty: this.dirty.size,
      delayed: this.delayed.size,
      backingOff: this.failures.size,
      processed: this.processed,
      handlerErrors: this.handlerErrors,
    };
  }

  /** Resolves when nothing is waiting or running (and, if asked, nothing is delayed). */
  idle(opts: IdleOptions = {}): Promise<void> {
    const includeDelayed = opts.includeDelayed ?? false;
    if (this.isIdle(includeDelayed)) return Promise.resolve();
    // Real timers are unref'd, so a caller waiting on delayed work holds the process open itself.
    const keepAlive = includeDelayed ? setInterval(() => {}, 2 ** 30) : undefined;
    return new Promise((resolve) =>
      this.idleWaiters.push({
        includeDelayed,
        resolve: () => {
          clearInterval(keepAlive);
          resolve();
        },
      }),
    );
  }

  /** Drops waiting and delayed keys, cancels every timer, and waits for in-flight handlers. */
  async shutdown(): Promise<void> {
    this.closed = true;
    for (const d of this.delayed.values()) d.cancel();
    this.delayed.clear();
    this.fifo = [];
    this.head = 0;
    this.waiting.clear();
    this.dirty.clear();
    if (this.running > 0) await new Promise<void>((resolve) => this.drainWaiters.push(resolve));
    this.settle();
  }

  /** Starts workers while keys wait that no worker will get to soon, up to the bound. */
  private pump(): void {
    while (this.handler && !this.closed && this.running < this.concurrency && this.running < this.fifo.length - this.head) {
      this.running++;
      void this.executor.add(() => this.work());
    }
  }

  /** The oldest waiting key, or undefined when none waits. */
  private take(): string | undefined {
    if (this.closed || this.head >= this.fifo.length) return undefined;
    const key = this.fifo[this.head]!;
    this.fifo[this.head++] = '';
    // Drop the consumed prefix now and then, so the array does not grow without bound.
    if (this.head >= 1024 && this.head * 2 >= this.fifo.length) {
      this.fifo = this.fifo.slice(this.head);
      this.head = 0;
    }
    return key;
  }

  private async work(): Promise<void> {
    try {
      for (let key = this.take(); key !== undefined; key = this.take()) {
        await this.process(key);
        if (overSlice()) await turn();
      }
    } finally {
      this.running--;
      // A key added while this worker was finishing its last one may have found no room.
      this.pump();
      if (this.running === 0 && this.drainWaiters.length > 0) {
        const waiters = this.drainWaiters;
        this.drainWaiters = [];
        for (const resolve of waiters) resolve();
      }
      this.settle();
    }
  }

  private async process(key: string): Promise<void> {
    this.waiting.delete(key);
    this.active.add(key);
    try {
      await this.handler!(key);
      this.processed++;
    } catch (err) {
      this.report(key, err);
    } finally {
      this.active.delete(key);
      if (this.dirty.delete(key)) this.add(key);
      this.settle();
    }
  }

  private report(key: string, err: unknown): void {
    this.handlerErrors++;
    try {
      this.onError(key, err);
    } catch {
      // A broken error reporter must not take the queue down with it.
    }
  }

  private isIdle(includeDelayed: boolean): boolean {
    const busy = this.waiting.size + this.active.size + this.dirty.size;
    return busy === 0 && (!includeDelayed || this.delayed.size === 0);
  }

  private settle(): void {
    if (this.idleWaiters.length === 0) return;
    const still: typeof this.idleWaiters = [];
    for (const w of this.idleWaiters) {
      if (this.isIdle(w.includeDelayed)) w.resolve();
      else still.push(w);
    }
    this.idleWaiters = still;
  }
}
