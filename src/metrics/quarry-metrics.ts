// Quarry's Prometheus metrics (docs/operations.md has the table). One Registry per Quarry, not
// prom-client's global one: tests run several Quarrys in one process. Most series are computed
// when scraped (queue depths, nodes by phase, OSDs by state, Ceph's health, SSE clients) or
// follow the event bus (task runs); the three that need a hook get one small observer each:
// HTTP requests (src/http/request-metrics.ts), reconciles (ManagerOptions.observer) and store
// writes (src/store/observed.ts). Nothing outside this folder imports prom-client.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { CephKind, CLUSTER_ID, type ClusterStatus } from '../model/ceph-kinds.js';
import { isFinished, NodeStatus, OSD_PHASES, RunState } from '../model/kinds.js';
import type { ReconcileObserver, ReconcileOutcome } from '../runtime/manager.js';
import type { StoreWrite, StoreWriteObserver } from '../store/observed.js';
import type { Store } from '../store/types.js';
import type { AnyBusEvent, EventBus } from '../tasks/bus.js';
import { NO_PHASE, PhaseCounts } from './phase-counts.js';

export const CEPH_HEALTH = ['HEALTH_OK', 'HEALTH_WARN', 'HEALTH_ERR', 'UNKNOWN'] as const;

/** Seconds: from a cached GET (sub-millisecond) to a slow render or a long-poll (30 s). */
const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
/** Seconds: a reconcile that finds nothing to do (~100 µs) to one waiting on Ceph. */
const RECONCILE_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Seconds: an acknowledged write is an fsync of the journal (~0.2 ms). */
const STORE_BUCKETS = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

// The process metrics are the process's, whichever Quarry scrapes them: collected into one
// registry per process (prom-client's collectors watch GC and the event loop for as long as the
// process lives), which each Quarry's registry is merged with.
let processMetrics: Registry | undefined;
function processRegistry(): Registry {
  if (!processMetrics) {
    processMetrics = new Registry();
    collectDefaultMetrics({ register: processMetrics });
  }
  return processMetrics;
}

const ERROR_OUTCOMES = new Set<ReconcileOutcome>(['error', 'terminal']);

/** What the scrape-time series read; each is given once its part of Quarry exists. */
export interface MetricsSources {
  store?: Store;
  /** Keys waiting per loop (Manager.queueDepths). */
  queueDepths?: () => ReadonlyMap<string, number>;
  /** Open /events streams. */
  sseClients?: () => number;
}

export class QuarryMetrics {
  /** This Quarry's series; `registry` adds the process metrics to them. */
  private readonly own = new Registry();
  readonly registry: Registry;
  private readonly sources: MetricsSources = {};
  private phases: PhaseCounts | undefined;
  /** Runs in state running now, with their step's name (from task.state.changed). */
  private readonly running = new Map<string, string>();
  private readonly loopsSeen = new Set<string>();
  private unsubscribe: (() => void) | undefined;

  private readonly httpRequests: Counter<'method' | 'route' | 'status'>;
  private readonly httpDuration: Histogram<'method' | 'route' | 'status'>;
  private readonly reconcileDuration: Histogram<'loop'>;
  private readonly reconcileErrors: Counter<'loop'>;
  private readonly taskRuns: Counter<'task' | 'state'>;
  private readonly storeWriteDuration: Histogram<'op'>;

  /** Each (method, route, status)'s two series, found once: prom-client hashes a label object
   * on every call otherwise, twice per request. Bounded: routes and statuses are few. */
  private readonly requestSeries = new Map<string, { count: () => void; time: (seconds: number) => void }>();

  /** For the HTTP app (HttpDeps.observer). */
  readonly requests = {
    requestDone: (method: string, route: string, status: number, seconds: number): void => {
      const key = `${method} ${status} ${route}`;
      let series = this.requestSeries.get(key);
      if (!series) {
        const labels = { method, route, status: String(status) };
        const counter = this.httpRequests.labels(labels);
        const histogram = this.httpDuration.labels(labels);
        series = { count: () => counter.inc(), time: (s) => histogram.observe(s) };
        this.requestSeries.set(key, series);
      }
      series.count();
      series.time(seconds);
    },
  };

  /** For the manager (ManagerOptions.observer). */
  readonly reconciles: ReconcileObserver = {
    reconciled: (loop, seconds, outcome) => {
      if (outcome === 'stopped') return;
      this.reconcileDuration.observe({ loop }, seconds);
      if (ERROR_OUTCOMES.has(outcome)) this.reconcileErrors.inc({ loop });
    },
  };

  /** For the store (observeWrites). */
  readonly storeWrites: StoreWriteObserver = {
    written: (op: StoreWrite, seconds: number) => this.storeWriteDuration.observe({ op }, seconds),
  };

  constructor() {
    const registers = [this.own];
    this.httpRequests = new Counter({
      name: 'quarry_http_requests_total',
      help: 'HTTP requests answered, by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      registers,
    });
    this.httpDuration = new Histogram({
      name: 'quarry_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by method, route template and status',
      labelNames: ['method', 'route', 'status'],
      buckets: HTTP_BUCKETS,
      registers,
    });
    this.reconcileDuration = new Histogram({
      name: 'quarry_reconcile_duration_seconds',
      help: 'Time of one observe, plan and apply, by loop',
      labelNames: ['loop'],
      buckets: RECONCILE_BUCKETS,
      registers,
    });
    this.reconcileErrors = new Counter({
      name: 'quarry_reconcile_errors_total',
      help: 'Reconciles that failed (retried with backoff, or terminally), by loop',
      labelNames: ['loop'],
      registers,
      // Every loop has an error series from the first scrape on, at 0 until one fails.
      collect: () => {
        for (const loop of this.sources.queueDepths?.().keys() ?? []) {
          if (this.loopsSeen.has(loop)) continue;
          this.loopsSeen.add(loop);
          this.reconcileErrors.inc({ loop }, 0);
        }
      },
    });
    this.taskRuns = new Counter({
      name: 'quarry_task_runs_total',
      help: 'Task runs that ended, by step name and final state',
      labelNames: ['task', 'state'],
      registers,
    });
    this.storeWriteDuration = new Histogram({
      name: 'quarry_store_write_duration_seconds',
      help: 'Time of a store write until acknowledged (durable) or refused, by operation',
      labelNames: ['op'],
      buckets: STORE_BUCKETS,
      registers,
    });
    // The gauges' collect() gets the gauge as `this`; these reach the rest.
    const read = {
      queueDepths: () => this.sources.queueDepths?.() ?? new Map<string, number>(),
      sseClients: () => this.sources.sseClients?.() ?? 0,
      store: () => this.sources.store,
      phases: () => this.phaseCounts(),
      running: () => this.running.values(),
    };
    new Gauge({
      name: 'quarry_reconcile_queue_depth',
      help: 'Keys waiting to be reconciled, by loop',
      labelNames: ['loop'],
      registers,
      collect() {
        this.reset();
        for (const [loop, n] of read.queueDepths()) this.set({ loop }, n);
      },
    });
    new Gauge({
      name: 'quarry_task_runs_running',
      help: 'Task runs running now, by step name',
      labelNames: ['task'],
      registers,
      collect() {
        this.reset();
        const counts = new Map<string, number>();
        for (const task of read.running()) counts.set(task, (counts.get(task) ?? 0) + 1);
        for (const [task, n] of counts) this.set({ task }, n);
      },
    });
    new Gauge({
      name: 'quarry_nodes',
      help: 'Nodes by phase',
      labelNames: ['phase'],
      registers,
      async collect() {
        const counts = await read.phases();
        this.reset();
        if (!counts) return;
        for (const phase of [...Object.values(NodeStatus), NO_PHASE]) this.set({ phase }, counts.nodes.get(phase) ?? 0);
      },
    });
    new Gauge({
      name: 'quarry_osds',
      help: 'OSDs (disks with an OSD) by state',
      labelNames: ['state'],
      registers,
      async collect() {
        const counts = await read.phases();
        this.reset();
        if (!counts) return;
        for (const state of OSD_PHASES) this.set({ state }, counts.osds.get(state) ?? 0);
      },
    });
    new Gauge({
      name: 'quarry_ceph_health',
      help: "Ceph's health: 1 for the current status, 0 for the others (UNKNOWN until Ceph has answered)",
      labelNames: ['status'],
      registers,
      async collect() {
        const store = read.store();
        const cluster = store ? await store.get<unknown, ClusterStatus>(CephKind.Cluster, CLUSTER_ID) : undefined;
        const health = cluster?.status.metrics?.health;
        const current = CEPH_HEALTH.find((h) => h === health) ?? 'UNKNOWN';
        for (const status of CEPH_HEALTH) this.set({ status }, status === current ? 1 : 0);
      },
    });
    new Gauge({
      name: 'quarry_sse_clients',
      help: 'Open /events streams',
      registers,
      collect() {
        this.set(read.sseClients());
      },
    });
    this.registry = Registry.merge([processRegistry(), this.own]);
  }

  /** The scrape-time series' sources, as each part of Quarry comes up. */
  provide(sources: MetricsSources): void {
    Object.assign(this.sources, sources);
    if (sources.store) {
      this.phases?.stop();
      this.phases = new PhaseCounts(sources.store);
    }
  }

  /** Counts task runs from the bus from now on. */
  followBus(bus: EventBus): void {
    this.unsubscribe?.();
    this.unsubscribe = bus.subscribe((e) => this.onEvent(e));
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The text Prometheus reads. */
  scrape(): Promise<string> {
    return this.registry.metrics();
  }

  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.phases?.stop();
    this.running.clear();
  }

  private async phaseCounts() {
    return this.phases ? this.phases.read() : undefined;
  }

  private onEvent(e: AnyBusEvent): void {
    if (e.type !== 'task.state.changed') return;
    const { runId, taskName, state } = e.payload as { runId: string; taskName: string; state: RunState };
    if (state === RunState.running) this.running.set(runId, taskName);
    else this.running.delete(runId);
    if (isFinished(state)) this.taskRuns.inc({ task: taskName, state });
  }
}
