// Questions: a run asks an operator before a destructive step and holds until answered. The
// question lives in the run's status (so it survives in the store and shows in the API); the
// promise the step waits on lives here. While a question is open the run's deadline pauses.
import { ConflictError, InputError, NotFoundError } from '../errors.js';
import { isFinished, Kind, type Question, type TaskRunSpec, type TaskRunStatus } from '../model/kinds.js';
import { runRefs, type ActiveRun, type RunEngine } from './engine.js';
import type { PendingQuestion } from './types.js';

export class QuestionDesk {
  constructor(private readonly engine: RunEngine) {}

  /** Resolves with the chosen option; rejects when the run ends first. */
  async ask(run: ActiveRun, prompt: string, options: string[]): Promise<string> {
    checkOptions(options);
    const { id: runId, spec, status } = run.doc;
    if (status.state !== 'running') throw new ConflictError(`run ${runId} is ${status.state}; it cannot ask`);
    if (run.question) throw new ConflictError(`run ${runId} already waits for an answer`);
    const { clock, ids, bus } = this.engine.deps;
    const question: Question = { id: ids(), prompt, options: [...options], createdAt: clock.iso(), answer: null };
    const answered = new Promise<string>((resolve, reject) => {
      run.question = { id: question.id, resolve, reject };
    });
    // The caller may stop waiting (its run was canceled); that must not be an unhandled rejection.
    answered.catch(() => undefined);
    run.deadline?.pause();
    this.engine.log(runId, 'warn', `question: ${prompt} [${options.join(' / ')}]`);
    await this.engine.transition(run, { question });
    // The prompt is Quarry's own words about what will be destroyed: never a secret.
    bus.publish('task.question.asked', {
      runId,
      taskName: spec.taskName,
      questionId: question.id,
      prompt,
      options: [...options],
      ...runRefs(run.doc),
    });
    return answered;
  }

  async answer(questionId: string, answer: string, by?: string, requestId?: string | null): Promise<void> {
    const run = this.holderOf(questionId);
    if (!run) return this.refuseClosed(questionId);
    const question = run.doc.status.question as Question;
    if (question.answer !== null) throw new ConflictError(`question ${questionId} is already answered`);
    if (!question.options.includes(answer)) {
      const message = `answer must be one of: ${question.options.join(', ')}`;
      throw new InputError(message, [{ path: '/answer', message }]);
    }
    const open = run.question;
    run.question = null;
    run.deadline?.resume();
    this.engine.log(run.doc.id, 'info', `answered: ${answer}`);
    try {
      const who = by === undefined ? {} : { answeredBy: by };
      await this.engine.transition(run, { question: { ...question, answer, ...who, answeredAt: this.engine.deps.clock.iso() } });
      const { id: runId, spec } = run.doc;
      this.engine.deps.bus.publish('task.question.answered', {
        runId,
        taskName: spec.taskName,
        questionId,
        answer,
        prompt: question.prompt,
        ...who,
        ...runRefs(run.doc),
        ...(requestId ? { answerRequestId: requestId } : {}),
      });
    } finally {
      // Even when the write failed: a run held forever is worse than a status one step behind.
      open?.resolve(answer);
    }
  }

  /** Open questions of the runs this process holds, oldest first. */
  pending(): PendingQuestion[] {
    const out: PendingQuestion[] = [];
    for (const run of this.engine.active.values()) {
      const q = run.doc.status.question;
      if (!q || q.answer !== null || !run.question || isFinished(run.doc.status.state)) continue;
      const { id, prompt, options, createdAt } = q;
      out.push({ id, runId: run.doc.id, taskName: run.doc.spec.taskName, prompt, options: [...options], createdAt });
    }
    return out.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  /** The held, unfinished run whose current question has this id. */
  private holderOf(questionId: string): ActiveRun | undefined {
    for (const run of this.engine.active.values()) {
      if (run.doc.status.question?.id === questionId && !isFinished(run.doc.status.state)) return run;
    }
    return undefined;
  }

  /** Not held: either answered or closed in a finished run (a rare path, so a scan), or unknown. */
  private async refuseClosed(questionId: string): Promise<never> {
    const runs = await this.engine.deps.store.list<TaskRunSpec, TaskRunStatus>(Kind.TaskRun);
    const run = runs.find((r) => r.status.question?.id === questionId);
    if (!run) throw new NotFoundError(`question ${questionId} not found`);
    if (run.status.question?.answer != null) throw new ConflictError(`question ${questionId} is already answered`);
    throw new ConflictError(`question ${questionId} is closed: run ${run.id} is ${run.status.state}`);
  }
}

function checkOptions(options: string[]): void {
  const ok = Array.isArray(options) && options.length > 0 && options.every((o) => typeof o === 'string' && o.length > 0);
  if (!ok || new Set(options).size !== options.length) {
    throw new InputError('a question needs distinct, non-empty options', [{ path: '/options', message: 'distinct non-empty strings' }]);
  }
}
