// Task runs, their logs, cancel, and the questions that hold destructive runs. Reads are open
// to every user; cancelling a run or answering a question changes the world, so admins only.
// All of them are the leader's (`leader`): the run engine's active runs (fresher than the store
// while a run lives), its run index, the question desk's waiting steps and the log files under
// its STATE_DIR exist only in the controller that runs the tasks.
import type { TaskService } from '../../tasks/service.js';
import type { TaskRun } from '../../tasks/types.js';
import { requestIdOf } from '../request-id.js';
import { route, type AnyRoute } from '../route.js';
import { object, statusSchema, uuidSchema } from '../schemas.js';

const nullableString = { type: ['string', 'null'] };
const runSchema = object(
  {
    id: uuidSchema,
    taskName: { type: 'string' },
    state: { enum: ['pending', 'running', 'completed', 'failed', 'canceled'] },
    nodeId: { type: ['string', 'null'], format: 'uuid' },
    nodeHostname: nullableString,
    targetId: { type: 'string' },
    createdAt: { type: 'string', format: 'date-time' },
    startedAt: nullableString,
    completedAt: nullableString,
    error: nullableString,
  },
  ['id', 'taskName', 'state', 'nodeId', 'nodeHostname', 'targetId', 'createdAt', 'startedAt', 'completedAt', 'error'],
);
const logLineSchema = object(
  { timestamp: { type: 'string', format: 'date-time' }, level: { enum: ['debug', 'info', 'warn', 'error'] }, message: { type: 'string' } },
  ['timestamp', 'level', 'message'],
);
const questionSchema = object(
  {
    id: uuidSchema,
    runId: uuidSchema,
    taskName: { type: 'string' },
    prompt: { type: 'string' },
    options: { type: 'array', items: { type: 'string' } },
    createdAt: { type: 'string', format: 'date-time' },
  },
  ['id', 'runId', 'taskName', 'prompt', 'options', 'createdAt'],
);

export function toRunView(run: TaskRun) {
  return {
    id: run.id,
    taskName: run.spec.taskName,
    state: run.status.state,
    nodeId: run.spec.nodeId,
    nodeHostname: run.spec.nodeHostname,
    targetId: run.spec.targetId,
    createdAt: run.metadata.createdAt,
    startedAt: run.status.startedAt,
    completedAt: run.status.completedAt,
    error: run.status.error,
  };
}

type RunParams = { runId: string };
const runParams = object({ runId: uuidSchema }, ['runId']);

export function taskRoutes(tasks: TaskService): AnyRoute[] {
  return [
    route<unknown, { limit?: number }>({
      method: 'GET',
      path: '/task/runs/recent',
      leader: true,
      summary: 'The most recent task runs, newest first',
      tags: ['tasks'],
      query: object({ limit: { type: 'integer', minimum: 1, maximum: 1000, default: 100 } }),
      response: { description: 'task runs', schema: { type: 'array', items: runSchema } },
      handler: async ({ query }) => (await tasks.recent(query.limit ?? 100)).map(toRunView),
    }),
    route<unknown, unknown, RunParams>({
      method: 'GET',
      path: '/task/run/{runId}',
      leader: true,
      summary: 'One task run',
      tags: ['tasks'],
      params: runParams,
      response: { description: 'the run', schema: runSchema },
      errors: [404],
      handler: async ({ params }) => toRunView(await tasks.get(params.runId)),
    }),
    route<unknown, unknown, RunParams>({
      method: 'GET',
      path: '/task/run/{runId}/logs',
      leader: true,
      summary: "A run's log lines, oldest first",
      tags: ['tasks'],
      params: runParams,
      response: { description: 'log lines', schema: { type: 'array', items: logLineSchema } },
      errors: [404],
      handler: async ({ params }) => tasks.logs(params.runId),
    }),
    route<unknown, unknown, RunParams>({
      method: 'POST',
      path: '/task/run/{runId}/cancel',
      leader: true,
      summary: 'Cancel a pending or running run (a running command is aborted)',
      tags: ['tasks'],
      admin: true,
      params: runParams,
      response: { description: 'canceled', schema: statusSchema('canceled') },
      errors: [404, 409],
      handler: async ({ params }) => {
        await tasks.cancel(params.runId);
        return { status: 'canceled' };
      },
    }),
    route({
      method: 'GET',
      path: '/task/questions/pending',
      leader: true,
      summary: 'Questions that hold runs until an operator answers',
      tags: ['tasks'],
      response: { description: 'open questions', schema: { type: 'array', items: questionSchema } },
      handler: () => tasks.pendingQuestions(),
    }),
    route<{ answer: string }, unknown, { questionId: string }>({
      method: 'POST',
      path: '/task/question/{questionId}/answer',
      leader: true,
      summary: 'Answer a question with one of its options',
      tags: ['tasks'],
      admin: true,
      params: object({ questionId: uuidSchema }, ['questionId']),
      body: object({ answer: { type: 'string', minLength: 1, maxLength: 256 } }, ['answer']),
      response: { description: 'answered', schema: statusSchema('answered') },
      errors: [404, 409],
      handler: async ({ params, body, principal, ctx }) => {
        await tasks.answer(params.questionId, body.answer, principal?.user.username, requestIdOf(ctx));
        return { status: 'answered' };
      },
    }),
  ];
}
