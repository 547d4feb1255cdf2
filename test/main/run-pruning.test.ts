// The run history's pruning timer: the policy comes from the configuration, pruning repeats,
// a failed pruning is logged and the timer goes on, and stop() waits for one under way.
import test from 'ava';
import { loadConfig } from '../../src/config.js';
import { startRunPruning } from '../../src/main/run-pruning.js';
import type { RetentionPolicy } from '../../src/tasks/retention.js';
import type { TaskService } from '../../src/tasks/service.js';
import { waitFor } from '../lab/harness.js';

test('run pruning prunes with the configured policy, again after a failure, and stop waits for the pruning under way', async (t) => {
  const config = loadConfig({
    RUN_RETENTION_DAYS: '7',
    RUN_RETENTION_MAX_RUNS: '100',
    RUN_RETENTION_KEEP_PER_STEP: '2',
    RUN_PRUNE_EVERY_MS: '1000',
  });
  const policies: RetentionPolicy[] = [];
  let release: () => void = () => undefined;
  let finished = 0;
  const tasks = {
    prune(policy: RetentionPolicy) {
      policies.push(policy);
      if (policies.length === 1) return Promise.reject(new Error('store closing'));
      if (policies.length === 2) return Promise.resolve({ deleted: 3, kept: 9 });
      return new Promise<{ deleted: number; kept: number }>((resolve) => {
        release = () => {
          finished += 1;
          resolve({ deleted: 0, kept: 9 });
        };
      });
    },
  } as unknown as TaskService;
  const lines: string[] = [];
  const pruning = startRunPruning(tasks, config, (level, message, fields) => lines.push(`${level} ${message} ${JSON.stringify(fields)}`));
  await waitFor('a third pruning', () => policies.length === 3, 30_000);
  t.deepEqual(policies[0], { maxAgeMs: 7 * 24 * 3_600_000, maxRuns: 100, keepPerStep: 2 });
  t.regex(lines[0] ?? '', /^error task-run history pruning failed .*store closing/);
  t.regex(lines[1] ?? '', /^info task-run history pruned .*"deleted":3,"kept":9/);
  const stopped = pruning.stop();
  let done = false;
  void stopped.then(() => (done = true));
  await new Promise((resolve) => setImmediate(resolve));
  t.false(done, 'stop waits for the pruning under way');
  release();
  await stopped;
  t.is(finished, 1);
  t.is(policies.length, 3);
});
