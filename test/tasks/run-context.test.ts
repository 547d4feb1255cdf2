import test from 'ava';
import { CommandError } from '../../src/errors.js';
import { loggingRunner } from '../../src/tasks/run-context.js';
import type { LogLevel } from '../../src/tasks/types.js';
import { FakeRunner } from '../helpers/fake-runner.js';

test('loggingRunner logs the masked command and its lines and still passes them to the caller', async (t) => {
  const runner = new FakeRunner().expect('radosgw-admin', ['key', { secret: 'abc' }], { stdout: 'ok abc\n', stderr: 'note\n' });
  const logged: string[] = [];
  const seen: string[] = [];
  const wrapped = loggingRunner(runner, (level: LogLevel, m) => logged.push(`${level} ${m}`), new AbortController().signal);
  await wrapped.run('radosgw-admin', ['key', { secret: 'abc' }], { timeoutMs: 1000, onLine: (s, l) => seen.push(`${s} ${l}`) });
  t.deepEqual(logged, ['info $ radosgw-admin key ***', 'info ok ***', 'warn note']);
  t.deepEqual(seen, ['stdout ok ***', 'stderr note']);
});

test('loggingRunner aborts a command on the run signal or the caller signal', async (t) => {
  const runner = new FakeRunner().always('sleep', ['9'], { delayMs: 60_000 });
  const run = new AbortController();
  const caller = new AbortController();
  const wrapped = loggingRunner(runner, () => undefined, run.signal);
  const first = wrapped.run('sleep', ['9'], { timeoutMs: 120_000, signal: caller.signal });
  caller.abort();
  await t.throwsAsync(first, { instanceOf: CommandError, message: 'sleep 9 aborted (killed by SIGTERM)' });
  const second = wrapped.run('sleep', ['9'], { timeoutMs: 120_000 });
  run.abort();
  await t.throwsAsync(second, { instanceOf: CommandError, message: 'sleep 9 aborted (killed by SIGTERM)' });
});
