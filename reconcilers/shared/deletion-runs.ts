// The effectful half of a data-bearing deletion's question (reconcilers/shared/deletion.ts):
// the run that asks, and who answered it, read back from the run's question.
import { NotFoundError } from '../../src/errors.js';
import type { AnyDoc } from '../../src/model/document.js';
import { runTarget } from '../../src/model/object-names.js';
import type { Script, StartRequest, TaskRun } from '../../src/tasks/types.js';
import { DELETE_OPTIONS, type DeletionObserved } from './deletion.js';
import { runInfo } from './runs.js';

/** The question run as the plan sees it, with who answered and when. */
export function answered(run: TaskRun | undefined): DeletionObserved['confirmRun'] {
  const info = runInfo(run);
  if (!info || !run) return null;
  const q = run.status.question;
  return {
    ...info,
    ...(q?.answeredBy === undefined ? {} : { answeredBy: q.answeredBy }),
    ...(q?.answeredAt === undefined ? {} : { answeredAt: q.answeredAt }),
  };
}

/** Composes the question when the run starts (with what Ceph says then), asks it, and keeps
 * the answer as the run's result for the plan. */
export function askScript(prompt: (ctx: Parameters<Script>[0]) => Promise<string>, what: string): Script {
  return async (ctx) => {
    const answer = await ctx.ask(await prompt(ctx), [...DELETE_OPTIONS]);
    ctx.log(
      answer === 'yes' ? 'warn' : 'info',
      answer === 'yes' ? `the operator agreed to delete ${what}` : `the operator declined to delete ${what}; it is kept`,
    );
    return { answer };
  };
}

/** A deletion's question or deletion run: on the object, keyed by the generation that asked
 * for the deletion (a later one asks again). */
export function deletionRequest(doc: AnyDoc, taskName: string, attempt: number, timeoutMs: number, script: Script): StartRequest {
  const { generation } = doc.metadata;
  return { taskName, target: runTarget(doc), attempt, timeoutMs, args: { generation }, script };
}

/** Deleting the object once its deletion ran: one already gone is done. */
export const ignoreGone = (err: unknown): void => {
  if (!(err instanceof NotFoundError)) throw err;
};
