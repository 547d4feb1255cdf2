// Task runs: the only way Quarry acts on the world. A run is tied to (object, generation),
// has logs, a deadline, can be canceled, and can hold on a question. Master-level runs carry
// their script and run here; node-level runs wait for their node's agent (AgentQueue).
import { ConflictError, InputError, NotFoundError } from '../errors.js';
import { isFinished, Kind, type TaskRunSpec, type TaskRunStatus } from '../model/kinds.js';
import { AgentQueue } from './agent-queue.js';
import { RunEngine, type ActiveRun, type TaskServiceDeps } from './engine.js';
import { QuestionDesk } from './questions.js';
import { errorMessage, jsonResult } from './results.js';
import type { RetentionPolicy } from './retention.js';
import { makeRunContext } from './run-context.js';
import type { LogLevel, LogLine, PendingQuestion, RunTarget, Script, StartRequest, TaskRun } from './types.js';

export type { TaskServiceDeps } from './engine.js';

const INTERRUPTED_RUNNING = 'interrupted: Quarry restarted while this run was running';
const INTERRUPTED_PENDING = 'interrupted: Quarry restarted before this run started';

const NO_RUN: Promise<TaskRun | undefined> = Promise.resolve(undefined);

export class TaskService {
  /** The agents' side: claim, logs, finish, cancellation, questions. */
  readonly agents: AgentQueue;
  private readonly engine: RunEngine;
  private readonly questions: QuestionDesk;

  constructor(private readonly deps: TaskServiceDeps) {
    this.engine = new RunEngine(deps);
    this.questions = new QuestionDesk(this.engine);
    this.agents = new AgentQueue(this.engine, this.questions);
  }

  /** Records a pending run and returns it. A master-level run starts at once in the
   * background; a node-level one waits for its node's agent. */
  async start(req: StartRequest): Promise<TaskRun> {
    if (!req.script === !req.node) {
      throw new InputError('a run needs either a script (master-level) or a node (node-level)', [
        { path: '/node', message: 'exactly one of script, node' },
      ]);
    }
    if (this.engine.isClosed) throw new ConflictError('the task service is closed');
    await this.engine.ensureLoaded();
    const doc = (await this.deps.store.create({
      kind: Kind.TaskRun,
      id: this.deps.ids(),
      name: req.taskName,
      spec: this.specOf(req),
      status: { state: 'pending', startedAt: null, completedAt: null, error: null, question: null, result: null } satisfies TaskRunStatus,
    })) as unknown as TaskRun;
    const run = this.engine.register(doc);
    this.engine.publishState(doc);
    if (req.script) void this.execute(run, req.script);
    else this.engine.queueForNode(run);
    return doc;
  }

  /** A line the master adds to a run's log (why it was started: the node loop names the
   * disruption lease that admitted a restart and Ceph's ok-to-stop answer). */
  note(runId: string, level: LogLevel, message: string): void {
    this.engine.log(runId, level, message);
  }

  /** Throws NotFoundError. */
  async get(id: string): Promise<TaskRun> {
    const run = await this.engine.find(id);
    if (!run) throw new NotFoundError(`task run ${id} not found`);
    return run;
  }

  /** Newest first. */
  async recent(limit = 100): Promise<TaskRun[]> {
    await this.engine.ensureLoaded();
    const runs = await Promise.all(this.engine.index.recent(limit).map((id) => this.engine.find(id)));
    return runs.filter((r): r is TaskRun => r !== undefined);
  }

  async logs(id: string): Promise<LogLine[]> {
    await this.get(id);
    return this.deps.logs.read(id);
  }

  /** pending or running → canceled; a running script's signal is aborted (its commands are
   * killed). A finished run is a ConflictError. */
  async cancel(id: string): Promise<TaskRun> {
    await this.engine.ensureLoaded();
    const run = this.engine.active.get(id);
    if (!run) return this.cancelUnheld(id);
    const ended = this.engine.end(run, 'canceled', {});
    if (!ended) throw new ConflictError(`task run ${id} is already ${run.doc.status.state}`);
    return ended;
  }

  pendingQuestions(): Promise<PendingQuestion[]> {
    return Promise.resolve(this.questions.pending());
  }

  /** InputError for an answer that is not an option, NotFoundError for an unknown question,
   * ConflictError for one already answered or closed. */
  /** `requestId`: the HTTP request that answers (its task.question.answered event names it). */
  answer(questionId: string, answer: string, by?: string, requestId?: string | null): Promise<void> {
    return this.questions.answer(questionId, answer, by, requestId);
  }

  /** The newest run for a target (of one task, when named): reconcilers decide from it
   * whether to start a run, wait for one, or retry. Not async: loops ask several times per
   * reconcile and mostly hear "none", which is answered with one shared promise. */
  latestFor(targetKind: string, targetId: string, taskName?: string): Promise<TaskRun | undefined> {
    if (!this.engine.loaded) return this.engine.ensureLoaded().then(() => this.latestFor(targetKind, targetId, taskName));
    const id = this.engine.index.latestFor(targetKind, targetId, taskName);
    if (id === undefined) return NO_RUN;
    const held = this.engine.active.get(id)?.doc;
    return held ? Promise.resolve(held) : this.engine.find(id);
  }

  /** Resolves with the run once it has finished and its final status is stored. A run this
   * process does not hold (left running before a restart) is answered as stored. */
  async whenFinished(id: string): Promise<TaskRun> {
    await this.engine.ensureLoaded();
    const run = this.engine.active.get(id);
    return run ? run.done : this.get(id);
  }

  /** At start-up: master-level runs left running or pending by the previous process fail as
   * interrupted (their code is gone). Node-level runs stay: pending ones for their agents to
   * claim, running ones (adopted when loaded) for their agents to report, failed as
   * interrupted once their agent claims without them, or at their deadline. Answers the
   * distinct targets, for the caller to requeue. */
  async recover(): Promise<RunTarget[]> {
    await this.engine.reload();
    const runs = await this.deps.store.list<TaskRunSpec, TaskRunStatus>(Kind.TaskRun);
    const targets = new Map<string, RunTarget>();
    for (const run of runs) {
      if (this.engine.active.has(run.id)) continue;
      const why = interruption(run);
      if (!why) continue;
      await this.engine.endOrphan(run, 'failed', why);
      const { targetKind: kind, targetId: id } = run.spec;
      targets.set(`${kind}\u0000${id}`, { kind, id });
    }
    return [...targets.values()];
  }

  /** Deletes the finished runs and logs the retention policy lets go (see retention.ts). */
  prune(policy: RetentionPolicy): Promise<{ deleted: number; kept: number }> {
    return this.engine.prune(policy);
  }

  /** Stops timers and waiting claims; runs still held stay as stored, for recover(). */
  async close(): Promise<void> {
    this.engine.close();
    await this.deps.logs.flush();
  }

  private specOf(req: StartRequest): TaskRunSpec {
    return {
      taskName: req.taskName,
      targetKind: req.target.kind,
      targetId: req.target.id,
      targetName: req.target.name ?? null,
      ...(req.target.names && Object.keys(req.target.names).length ? { targetNames: req.target.names } : {}),
      ...(req.target.requestId ? { requestId: req.target.requestId } : {}),
      generation: req.target.generation,
      nodeId: req.node?.id ?? null,
      nodeHostname: req.node?.hostname ?? null,
      args: req.args ?? {},
      timeoutMs: req.timeoutMs ?? this.deps.defaultTimeoutMs,
      attempt: req.attempt ?? 1,
    };
  }

  private async execute(run: ActiveRun, script: Script): Promise<void> {
    try {
      const begun = this.engine.begin(run);
      if (!begun) return; // canceled before it started
      await begun;
      const id = run.doc.id;
      const log = (level: LogLine['level'], message: string): void => this.engine.log(id, level, message);
      const ctx = makeRunContext({
        runId: id,
        args: run.doc.spec.args,
        signal: run.ac.signal,
        runner: this.deps.runner,
        log,
        ask: (prompt, options) => this.questions.ask(run, prompt, options),
      });
      const outcome = await script(ctx).then(
        (result) => ({ ok: true as const, result: jsonResult(result) }),
        (err: unknown) => ({ ok: false as const, error: errorMessage(err) }),
      );
      // After a cancel or a timeout this changes nothing.
      await (outcome.ok
        ? this.engine.end(run, 'completed', { result: outcome.result })
        : this.engine.end(run, 'failed', { error: outcome.error }));
    } catch (err) {
      // A result that is not JSON, or a failed write: the run must not stay running forever.
      await this.engine.end(run, 'failed', { error: errorMessage(err) })?.catch((e: unknown) => this.engine.report(e, run.doc.id));
    }
  }

  private async cancelUnheld(id: string): Promise<TaskRun> {
    const run = await this.get(id);
    if (isFinished(run.status.state)) throw new ConflictError(`task run ${id} is already ${run.status.state}`);
    // Left running by a previous process that recover() has not seen yet.
    return this.engine.endOrphan(run, 'canceled', null);
  }
}

function interruption(run: TaskRun): string | null {
  if (run.status.state === 'running' && run.spec.nodeId === null) return INTERRUPTED_RUNNING;
  if (run.status.state === 'pending' && run.spec.nodeId === null) return INTERRUPTED_PENDING;
  return null;
}
