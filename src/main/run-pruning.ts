// The run history's retention, on a timer: once shortly after start (a history left over a
// long downtime shrinks at once), then every RUN_PRUNE_EVERY_MS.
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { TaskService } from '../tasks/service.js';

const FIRST_PRUNE_MS = 10_000;

export interface RunPruning {
  /** Stops the timer and waits for a pruning under way. */
  stop(): Promise<void>;
}

export function startRunPruning(tasks: TaskService, config: Config, log: Logger): RunPruning {
  const policy = {
    maxAgeMs: config.runRetentionDays * 24 * 3_600_000,
    maxRuns: config.runRetentionMaxRuns,
    keepPerStep: config.runRetentionKeepPerStep,
  };
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  let timer: NodeJS.Timeout;
  const prune = (): void => {
    running = tasks
      .prune(policy)
      .then(({ deleted, kept }) => {
        if (deleted > 0) log('info', 'task-run history pruned', { deleted, kept, ...policy });
      })
      .catch((err: unknown) => log('error', 'task-run history pruning failed', { error: String(err) }))
      .finally(() => {
        if (stopped) return;
        timer = setTimeout(prune, config.runPruneEveryMs);
        timer.unref();
      });
  };
  timer = setTimeout(prune, Math.min(FIRST_PRUNE_MS, config.runPruneEveryMs));
  timer.unref();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
