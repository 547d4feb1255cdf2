// The node-level side of task runs, as agents see it: long-poll claims, logs, the result,
// and cancellation. Every call names the node; a node touches only its own runs.
import { ConflictError, InputError, NotFoundError } from '../errors.js';
import type { ActiveRun, RunEngine } from './engine.js';
import type { QuestionDesk } from './questions.js';
import type { AgentResult, LogLine, TaskRun } from './types.js';
import { jsonResult } from './results.js';

/** A run adopted from a previous leader that its agent, claiming, says it does not carry. */
const INTERRUPTED_LOST = 'interrupted: its agent does not carry it (lost with a leader or a boot)';

export class AgentQueue {
  constructor(
    private readonly engine: RunEngine,
    private readonly questions: QuestionDesk,
  ) {}

  /** The node's oldest pending run, now running; or, when there is none, the first one
   * started within waitMs; else null. An abort of `signal` answers null at once. `carrying`:
   * the runs the agent is carrying out as it claims (an agent that says it is done with
   * everything else); a run left running by a previous leader that it does not carry is failed
   * as interrupted, so its loop may start it again. Without it such runs wait for their
   * deadline. */
  async claim(nodeId: string, waitMs: number, signal?: AbortSignal, carrying?: readonly string[]): Promise<TaskRun | null> {
    if (!Number.isFinite(waitMs) || waitMs < 0)
      throw new InputError('waitMs must be a number ≥ 0', [{ path: '/waitMs', message: 'must be ≥ 0' }]);
    await this.engine.ensureLoaded();
    if (carrying) this.engine.releaseAdopted(nodeId, new Set(carrying), INTERRUPTED_LOST);
    // Not AbortSignal.timeout: its timer is unref'd, and a lone long-poll must keep the process up.
    const expiry = new AbortController();
    const timer = setTimeout(() => expiry.abort(), waitMs);
    const stop = signal ? AbortSignal.any([signal, expiry.signal]) : expiry.signal;
    try {
      return await this.claimUntil(nodeId, stop, waitMs === 0, signal);
    } finally {
      clearTimeout(timer);
    }
  }

  private async claimUntil(nodeId: string, stop: AbortSignal, once: boolean, caller?: AbortSignal): Promise<TaskRun | null> {
    for (;;) {
      // A caller that has gone (an HTTP client that hung up) must not be handed a run it
      // would never see; an expired wait may still take one that was just queued.
      if (this.engine.isClosed || caller?.aborted) return null;
      const runId = this.engine.queues.take(nodeId);
      if (runId !== undefined) {
        // A run that ended while queued (canceled, timed out) is skipped.
        const run = this.engine.active.get(runId);
        const begun = run && this.engine.begin(run);
        if (begun) return begun;
        continue;
      }
      if (once || stop.aborted) return null;
      await this.engine.queues.wait(nodeId, stop);
    }
  }

  /** Lines from the agent, which masks its own secrets. Late lines of a finished run are kept. */
  async appendLogs(nodeId: string, runId: string, lines: LogLine[]): Promise<void> {
    // Loaded first: a run left running by a dead leader is adopted, so its lines are taken.
    await this.engine.ensureLoaded();
    await this.owned(nodeId, runId);
    for (const line of lines) this.engine.log(runId, line.level, line.message, line.timestamp);
  }

  /** Resolves once the final status is stored. */
  async finish(nodeId: string, runId: string, result: AgentResult): Promise<void> {
    // Loaded first: a run left running by a dead leader is adopted, so its result is taken.
    await this.engine.ensureLoaded();
    const run = this.running(await this.owned(nodeId, runId), runId);
    const ended = result.ok
      ? this.engine.end(run, 'completed', { result: jsonResult(result.result) })
      : this.engine.end(run, 'failed', { error: result.error?.trim() || 'failed on the node' });
    if (!ended) throw new ConflictError(`task run ${runId} is ${run.doc.status.state}`);
    await ended;
  }

  /** True once the run was canceled or failed (timed out) under the agent: it should stop. */
  async isCanceled(nodeId: string, runId: string): Promise<boolean> {
    const run = await this.owned(nodeId, runId);
    const state = 'doc' in run ? run.doc.status.state : run.status.state;
    return state === 'canceled' || state === 'failed';
  }

  /** The run's state for its node's agent. Another node's run is NotFoundError, as a missing
   * one is: an agent learns nothing about runs that are not its own. */
  async state(nodeId: string, runId: string): Promise<{ state: TaskRun['status']['state']; canceled: boolean }> {
    const held = this.engine.active.get(runId);
    const doc = held?.doc ?? (await this.engine.find(runId));
    if (!doc || doc.spec.nodeId !== nodeId) throw new NotFoundError(`task run ${runId} not found`);
    const state = doc.status.state;
    return { state, canceled: state === 'canceled' || state === 'failed' };
  }

  /** Aborts when the run is canceled or times out: for agents that live in this process. */
  async cancelSignal(nodeId: string, runId: string): Promise<AbortSignal> {
    const run = await this.owned(nodeId, runId);
    if ('doc' in run) return run.ac.signal;
    return AbortSignal.abort(new Error(`run ${runId} is ${run.status.state}`));
  }

  /** A question from the node's step; resolves with the operator's answer. */
  async ask(nodeId: string, runId: string, prompt: string, options: string[]): Promise<string> {
    const run = this.running(await this.owned(nodeId, runId), runId);
    return this.questions.ask(run, prompt, options);
  }

  /** The held run, or the stored one when it has finished; refused for another node's run. */
  private async owned(nodeId: string, runId: string): Promise<ActiveRun | TaskRun> {
    const held = this.engine.active.get(runId);
    const doc = held?.doc ?? (await this.engine.find(runId));
    if (!doc) throw new NotFoundError(`task run ${runId} not found`);
    if (doc.spec.nodeId !== nodeId) throw new ConflictError(`task run ${runId} does not belong to node ${nodeId}`);
    return held ?? this.engine.holdRunning(doc) ?? doc;
  }

  private running(run: ActiveRun | TaskRun, runId: string): ActiveRun {
    if (!('doc' in run) || run.doc.status.state !== 'running') {
      const state = 'doc' in run ? run.doc.status.state : run.status.state;
      throw new ConflictError(`task run ${runId} is ${state}, not running on its node`);
    }
    return run;
  }
}
