// The state machine under TaskService and AgentQueue: the runs that are still pending or
// running, kept in memory, and the one path by which their status changes.
//
// A change is decided synchronously on the in-memory copy (so a cancel racing a completion
// sees a finished run and backs off), then written to the store in order per run, and only
// after the write is the event published: a subscriber that reads the store sees the state
// it was told about.
import { ConflictError, NotFoundError } from '../errors.js';
import type { Clock, IdGen } from '../model/clock.js';
import { isFinished, Kind, type RunState, type TaskRunSpec, type TaskRunStatus } from '../model/kinds.js';
import type { Runner } from '../exec/runner.js';
import type { ObjectNames } from '../model/document.js';
import type { Store } from '../store/types.js';
import type { EventBus } from './bus.js';
import { Deadline } from './deadline.js';
import type { LogStore } from './logs.js';
import { NodeQueues } from './node-queues.js';
import { prunable, type RetentionPolicy } from './retention.js';
import { byCreation, RunIndex } from './run-index.js';
import type { LogLevel, TaskRun } from './types.js';

export interface TaskServiceDeps {
  store: Store;
  bus: EventBus;
  logs: LogStore;
  /** What master-level scripts run commands with (through a logging wrapper). */
  runner: Runner;
  clock: Clock;
  ids: IdGen;
  defaultTimeoutMs: number;
  /** Told about a failed background write; defaults to the console. */
  onError?: (err: unknown, runId: string) => void;
}

export interface OpenQuestion {
  id: string;
  resolve(answer: string): void;
  reject(err: Error): void;
}

export interface ActiveRun {
  doc: TaskRun;
  /** Aborted when the run ends early: a master script's signal, an agent's cue to stop. */
  ac: AbortController;
  deadline: Deadline | null;
  question: OpenQuestion | null;
  /** This run's status writes, chained so they reach the store in order. */
  writes: Promise<unknown>;
  done: Promise<TaskRun>;
  settle(doc: TaskRun): void;
  /** Begun by another process (a dead leader, or before a restart), held here (load). */
  adopted?: boolean;
  /** Registered from the store by load(), not started by this process. */
  fromStore?: boolean;
}

const PRUNE_SLICE = 256;

export type EndState = typeof RunState.completed | typeof RunState.failed | typeof RunState.canceled;

export class RunEngine {
  readonly active = new Map<string, ActiveRun>();
  readonly index = new RunIndex();
  readonly queues = new NodeQueues();
  private loading: Promise<void> | null = null;
  /** The indexes are built: lookups can answer without waiting. */
  loaded = false;
  private closed = false;

  constructor(readonly deps: TaskServiceDeps) {}

  /** Builds the indexes from the store once, on first use. */
  ensureLoaded(): Promise<void> {
    this.loading ??= this.load()
      .then(() => void (this.loaded = true))
      .catch((err: unknown) => {
        this.loading = null;
        throw err;
      });
    return this.loading;
  }

  /** Loads again, for a controller that has just been elected: what it loaded as a follower
   * (pending runs, runs held) is as old as that, and the dead leader went on without telling it.
   * Runs this process started itself stay as they are. */
  async reload(): Promise<void> {
    if (!this.loaded) return this.ensureLoaded();
    for (const run of [...this.active.values()]) {
      if (!run.fromStore) continue;
      // A run held as adopted stays held (an agent's result may be on its way to it) unless
      // the store says it ended meanwhile; a pending one is queued again from the store.
      const stored = run.adopted ? await this.deps.store.get<TaskRunSpec, TaskRunStatus>(Kind.TaskRun, run.doc.id) : undefined;
      if (stored?.status.state === 'running') continue;
      run.deadline?.clear();
      if (run.doc.spec.nodeId !== null) this.queues.remove(run.doc.spec.nodeId, run.doc.id);
      this.active.delete(run.doc.id);
    }
    await this.load();
  }

  /** The held run, adopting a node-level one the store says is running that this process does
   * not hold yet: its agent's result may arrive before this leader has loaded its runs. */
  holdRunning(doc: TaskRun): ActiveRun | undefined {
    const held = this.active.get(doc.id);
    if (held) return held;
    if (doc.status.state !== 'running' || doc.spec.nodeId === null || this.closed) return undefined;
    this.adopt(doc);
    return this.active.get(doc.id);
  }

  private async load(): Promise<void> {
    const runs = byCreation(await this.deps.store.list<TaskRunSpec, TaskRunStatus>(Kind.TaskRun));
    for (const run of runs) {
      this.index.add(run);
      if (run.spec.nodeId === null || this.active.has(run.id)) continue;
      // A node-level run waiting for its agent survives a restart: the agent still can claim it.
      if (run.status.state === 'pending') this.queueForNode(this.register(run, true));
      // One its agent claimed from the previous leader (or before a restart) may still be under
      // way on the node: failing it here and starting it again would carry the step out twice.
      // It is adopted, under what is left of its deadline, for the agent's result to reach;
      // the agent's next claim without it says it was lost (releaseAdopted).
      if (run.status.state === 'running') this.adopt(run);
    }
  }

  /** Holds a run left running by another process until its agent reports or its deadline. */
  private adopt(doc: TaskRun): void {
    const run = this.register(doc, true);
    run.adopted = true;
    const started = doc.status.startedAt ? Date.parse(doc.status.startedAt) : this.deps.clock.now();
    const left = Math.max(0, started + doc.spec.timeoutMs - this.deps.clock.now());
    run.deadline = new Deadline(left, () => void this.expire(run, `timed out after ${doc.spec.timeoutMs} ms`));
    this.log(doc.id, 'info', 'held by a new leader or a restarted Quarry: waiting for its agent to report');
  }

  /** The node's agent claims while carrying only `carrying`: adopted runs of that node it does
   * not carry never reached it, or died with its boot, and are failed now as interrupted. */
  releaseAdopted(nodeId: string, carrying: ReadonlySet<string>, why: string): void {
    for (const run of this.active.values()) {
      if (!run.adopted || run.doc.spec.nodeId !== nodeId || carrying.has(run.doc.id)) continue;
      void this.end(run, 'failed', { error: why })?.catch(() => undefined);
    }
  }

  register(doc: TaskRun, fromStore = false): ActiveRun {
    let settle: (d: TaskRun) => void = () => undefined;
    const done = new Promise<TaskRun>((resolve) => (settle = resolve));
    const run: ActiveRun = { doc, ac: new AbortController(), deadline: null, question: null, writes: Promise.resolve(), done, settle };
    if (fromStore) run.fromStore = true;
    this.active.set(doc.id, run);
    this.index.add(doc);
    return run;
  }

  /** Queues a pending node-level run; it fails if no agent claims it within its timeout. */
  queueForNode(run: ActiveRun): void {
    const { nodeId, nodeHostname, timeoutMs } = run.doc.spec;
    if (nodeId === null) return;
    this.queues.push(nodeId, run.doc.id);
    const why = `timed out after ${timeoutMs} ms: node ${nodeHostname ?? nodeId} did not claim it`;
    run.deadline = new Deadline(timeoutMs, () => void this.expire(run, why));
  }

  /** pending → running; the run's own deadline starts now. Null when it is no longer pending. */
  begin(run: ActiveRun): Promise<TaskRun> | null {
    if (run.doc.status.state !== 'pending' || this.closed) return null;
    const ms = run.doc.spec.timeoutMs;
    run.deadline?.clear();
    run.deadline = new Deadline(ms, () => void this.expire(run, `timed out after ${ms} ms`));
    this.log(run.doc.id, 'info', `started ${run.doc.spec.taskName} (attempt ${run.doc.spec.attempt})`);
    return this.transition(run, { state: 'running', startedAt: this.deps.clock.iso() });
  }

  /** Ends a run once. Later calls (a cancel racing a completion) change nothing: null. */
  end(
    run: ActiveRun,
    state: EndState,
    fields: { error?: string | null; result?: Record<string, unknown> | null } = {},
  ): Promise<TaskRun> | null {
    const from = run.doc.status.state;
    if (isFinished(from) || this.closed) return null;
    const { id, spec } = run.doc;
    run.deadline?.clear();
    run.deadline = null;
    if (from === 'pending' && spec.nodeId !== null) this.queues.remove(spec.nodeId, id);
    if (state !== 'completed') run.ac.abort(new Error(fields.error ?? `run ${state}`));
    const open = run.question;
    run.question = null;
    open?.reject(new ConflictError(`run ${id} was ${state} before the question was answered`));
    this.log(id, state === 'completed' ? 'info' : 'error', fields.error ? `${state}: ${fields.error}` : state);
    const write = this.transition(run, {
      state,
      completedAt: this.deps.clock.iso(),
      error: fields.error ?? null,
      result: fields.result ?? null,
    });
    void write
      .then(
        (doc) => run.settle(doc),
        () => run.settle(run.doc),
      )
      .finally(() => this.active.delete(id));
    return write;
  }

  /** Applies a status change now, writes it after this run's earlier writes, then publishes. */
  transition(run: ActiveRun, patch: Partial<TaskRunStatus>): Promise<TaskRun> {
    const before = run.doc.status.state;
    const status: TaskRunStatus = { ...run.doc.status, ...patch };
    run.doc = { ...run.doc, status };
    const write = run.writes.then(async () => {
      const written = (await this.deps.store.updateStatus(Kind.TaskRun, run.doc.id, status)) as TaskRun;
      run.doc = { ...run.doc, metadata: written.metadata };
      if (status.state !== before) this.publishState(written);
      return written;
    });
    run.writes = write.catch((err: unknown) => this.report(err, run.doc.id));
    return write;
  }

  publishState(run: TaskRun): void {
    const { spec, status } = run;
    this.deps.bus.publish('task.state.changed', {
      runId: run.id,
      taskName: spec.taskName,
      state: status.state,
      attempt: spec.attempt,
      ...runRefs(run),
      ...(status.error ? { error: status.error } : {}),
    });
  }

  /** Ends a run this process does not hold (left by a crash), straight in the store. */
  async endOrphan(run: TaskRun, state: EndState, error: string | null): Promise<TaskRun> {
    const status: TaskRunStatus = { ...run.status, state, completedAt: this.deps.clock.iso(), error };
    const written = (await this.deps.store.updateStatus(Kind.TaskRun, run.id, status)) as TaskRun;
    this.log(run.id, 'error', error ? `${state}: ${error}` : state);
    this.publishState(written);
    return written;
  }

  log(runId: string, level: LogLevel, message: string, timestamp = this.deps.clock.iso()): void {
    const line = { timestamp, level, message };
    try {
      this.deps.logs.append(runId, line);
    } catch (err) {
      this.report(err, runId);
    }
    const held = this.active.get(runId)?.doc;
    this.deps.bus.publish('task.log', { runId, line, ...(held ? { taskName: held.spec.taskName, ...runRefs(held) } : {}) });
  }

  /** Deletes the finished runs `policy` lets go, with their logs, oldest first. */
  async prune(policy: RetentionPolicy): Promise<{ deleted: number; kept: number }> {
    await this.ensureLoaded();
    const runs = byCreation(await this.deps.store.list<TaskRunSpec, TaskRunStatus>(Kind.TaskRun)).filter((r) => !this.active.has(r.id));
    const alive = new Map<string, boolean>();
    for (const { spec } of runs) {
      const key = `${spec.targetKind}\u0000${spec.targetId}`;
      if (!alive.has(key)) alive.set(key, (await this.deps.store.get(spec.targetKind, spec.targetId)) !== undefined);
    }
    const ids = prunable(runs, policy, this.deps.clock.now(), (kind, id) => alive.get(`${kind}\u0000${id}`) === true);
    const gone = new Set<string>();
    // In slices: each slice's deletes share the store's durable writes, and a slice at a time
    // leaves room for the loops' own writes.
    for (let i = 0; i < ids.length && !this.closed; i += PRUNE_SLICE) {
      const slice = ids.slice(i, i + PRUNE_SLICE);
      await Promise.all(slice.map((id) => this.forget(id)));
      for (const id of slice) gone.add(id);
    }
    this.index.remove(gone);
    return { deleted: gone.size, kept: this.index.size };
  }

  private async forget(id: string): Promise<void> {
    try {
      await this.deps.store.delete(Kind.TaskRun, id);
    } catch (err) {
      if (!(err instanceof NotFoundError)) throw err;
    }
    await this.deps.logs.remove(id);
  }

  /** The freshest copy: memory for a held run, else the store. */
  async find(id: string): Promise<TaskRun | undefined> {
    return this.active.get(id)?.doc ?? (await this.deps.store.get<TaskRunSpec, TaskRunStatus>(Kind.TaskRun, id));
  }

  /** Stops timers and releases waiters; held runs stay as they are in the store. */
  close(): void {
    this.closed = true;
    for (const run of this.active.values()) {
      run.deadline?.clear();
      run.ac.abort(new Error('task service closed'));
      run.question?.reject(new ConflictError('task service closed'));
      run.question = null;
    }
    this.queues.wakeAll();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  report(err: unknown, runId: string): void {
    if (this.deps.onError) {
      this.deps.onError(err, runId);
      return;
    }
    console.error(`task run ${runId}: ${err instanceof Error ? err.message : String(err)}`);
  }

  private async expire(run: ActiveRun, why: string): Promise<void> {
    await this.end(run, 'failed', { error: why })?.catch(() => undefined);
  }
}

/** What every event about a run says besides its id: its target by id and names, its node by
 * id and hostname, and the HTTP request that caused it (when one did). */
export function runRefs(run: TaskRun): {
  target: { kind: string; id: string; name: string | null } & ObjectNames;
  node: { id: string; hostname: string | null } | null;
  requestId?: string;
} {
  const { spec } = run;
  return {
    target: { kind: spec.targetKind, id: spec.targetId, name: spec.targetName ?? null, ...spec.targetNames },
    node: spec.nodeId ? { id: spec.nodeId, hostname: spec.nodeHostname } : null,
    ...(spec.requestId ? { requestId: spec.requestId } : {}),
  };
}
