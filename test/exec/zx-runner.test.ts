import { alive } from '../helpers/process.js';
import test from 'ava';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandError } from '../../src/errors.js';
import { ZxRunner } from '../../src/exec/zx-runner.js';
import type { RunOptions } from '../../src/exec/runner.js';

const runner = new ZxRunner({ killGraceMs: 300 });
const T = 10_000;


/** Runs `sh -c script` that prints its own pid first, and returns that pid with the outcome. */
async function runWithPid(script: string, opts: Partial<RunOptions>): Promise<{ pid: number; error: unknown }> {
  let pid = 0;
  const error = await runner
    .run('sh', ['-c', `echo $$; ${script}`], {
      timeoutMs: T,
      ...opts,
      onLine: (stream, line) => {
        if (stream === 'stdout' && pid === 0) pid = Number(line);
      },
    })
    .then(
      () => null,
      (err: unknown) => err,
    );
  return { pid, error };
}

test('ZxRunner captures stdout and stderr of a successful command', async (t) => {
  const out = await runner.run('sh', ['-c', 'echo out; echo err >&2'], { timeoutMs: T });
  t.deepEqual(out, { stdout: 'out\n', stderr: 'err\n', exitCode: 0 });
});

test('ZxRunner rejects a non-zero exit with CommandError carrying code and stderr', async (t) => {
  const err = await t.throwsAsync(runner.run('sh', ['-c', 'echo broken >&2; exit 3'], { timeoutMs: T }), {
    instanceOf: CommandError,
  });
  t.is(err?.exitCode, 3);
  t.is(err?.stderr, 'broken\n');
  t.is(err?.signal, null);
  t.is(err?.message, 'sh -c "echo broken >&2; exit 3" exited with 3: broken');
});

test('ZxRunner streams lines per stream in order and flushes a partial last line', async (t) => {
  const lines: string[] = [];
  await runner.run('sh', ['-c', 'echo a; echo b; echo x >&2; printf tail; printf errtail >&2'], {
    timeoutMs: T,
    onLine: (stream, line) => lines.push(`${stream}:${line}`),
  });
  t.deepEqual(
    lines.filter((l) => l.startsWith('stdout:')),
    ['stdout:a', 'stdout:b', 'stdout:tail'],
  );
  t.deepEqual(
    lines.filter((l) => l.startsWith('stderr:')),
    ['stderr:x', 'stderr:errtail'],
  );
});

test('ZxRunner delivers lines while the command is still running', async (t) => {
  let firstLineBeforeExit = false;
  let exited = false;
  await runner.run('sh', ['-c', 'echo early; sleep 0.3; echo late'], {
    timeoutMs: T,
    onLine: (_s, line) => {
      if (line === 'early') firstLineBeforeExit = !exited;
    },
  });
  exited = true;
  t.true(firstLineBeforeExit);
});

test('ZxRunner passes input to stdin', async (t) => {
  const out = await runner.run('cat', [], { timeoutMs: T, input: 'line one\nline two\n' });
  t.is(out.stdout, 'line one\nline two\n');
});

test('ZxRunner closes stdin when there is no input', async (t) => {
  const out = await runner.run('cat', [], { timeoutMs: T });
  t.is(out.stdout, '');
});

test('ZxRunner passes arguments literally, without shell injection', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'quarry-exec-'));
  const marker = join(dir, 'pwned');
  const args = ['a b', "it's", '"dq"', `$(touch ${marker})`, `\`touch ${marker}\``, '; touch x', 'tab\there', 'new\nline', '', '*'];
  const out = await runner.run('printf', ['%s|', ...args], { timeoutMs: T, cwd: dir });
  t.is(out.stdout, args.map((a) => `${a}|`).join(''));
  await t.throwsAsync(readFile(marker));
  await rm(dir, { recursive: true });
});

test('ZxRunner honours cwd and env', async (t) => {
  const out = await runner.run('sh', ['-c', 'pwd; echo "$QUARRY_TEST"'], { timeoutMs: T, cwd: '/tmp', env: { QUARRY_TEST: 'v' } });
  t.is(out.stdout, '/tmp\nv\n');
});

test('ZxRunner kills a command at its deadline and the process is gone', async (t) => {
  const { pid, error } = await runWithPid('sleep 30', { timeoutMs: 300 });
  t.true(error instanceof CommandError);
  const err = error as CommandError;
  t.is(err.signal, 'SIGTERM');
  t.is(err.exitCode, null);
  t.regex(err.message, /^sh -c "echo \$\$; sleep 30" timed out after 300 ms \(killed by SIGTERM\)$/);
  t.true(pid > 0);
  t.false(alive(pid));
});

test('ZxRunner sends SIGKILL when a command ignores SIGTERM', async (t) => {
  const { pid, error } = await runWithPid("trap '' TERM; sleep 30", { timeoutMs: 200 });
  t.true(error instanceof CommandError);
  t.is((error as CommandError).signal, 'SIGKILL');
  t.false(alive(pid));
});

test('ZxRunner kills the whole process group, not just the command', async (t) => {
  let child = 0;
  const err = await t.throwsAsync(
    runner.run('sh', ['-c', 'sleep 30 & echo $!; wait'], {
      timeoutMs: 300,
      onLine: (_s, line) => {
        child = Number(line);
      },
    }),
    { instanceOf: CommandError },
  );
  t.truthy(err);
  t.true(child > 0);
  t.false(alive(child));
});

test('ZxRunner aborts a running command through its signal', async (t) => {
  const ac = new AbortController();
  setTimeout(() => ac.abort(), 100);
  const { pid, error } = await runWithPid('sleep 30', { signal: ac.signal });
  t.true(error instanceof CommandError);
  t.is((error as CommandError).message, 'sh -c "echo $$; sleep 30" aborted (killed by SIGTERM)');
  t.false(alive(pid));
});

test('ZxRunner refuses to start with an aborted signal', async (t) => {
  const ac = new AbortController();
  ac.abort();
  const err = await t.throwsAsync(runner.run('sleep', ['30'], { timeoutMs: T, signal: ac.signal }), { instanceOf: CommandError });
  t.is(err?.message, 'sleep 30 aborted before it started');
});

test('ZxRunner requires a positive deadline', async (t) => {
  const bad = { timeoutMs: 0 } as RunOptions;
  await t.throwsAsync(runner.run('true', [], bad), {
    instanceOf: TypeError,
    message: 'timeoutMs must be a positive number of milliseconds, got 0',
  });
});

test('ZxRunner masks secrets in the error message, stderr and streamed lines', async (t) => {
  const lines: string[] = [];
  const err = await t.throwsAsync(
    runner.run('sh', ['-c', 'echo "key=$1"; echo "bad key $1" >&2; exit 2', 'sh', { secret: 's3cr3t' }], {
      timeoutMs: T,
      onLine: (_s, line) => lines.push(line),
    }),
    { instanceOf: CommandError },
  );
  t.is(err?.message, 'sh -c "echo \\"key=$1\\"; echo \\"bad key $1\\" >&2; exit 2" sh *** exited with 2: bad key ***');
  t.is(err?.stderr, 'bad key ***\n');
  t.is(err?.command.includes('s3cr3t'), false);
  t.deepEqual(lines.sort(), ['bad key ***', 'key=***']);
});

test('ZxRunner reports a missing command as exit 127', async (t) => {
  const err = await t.throwsAsync(runner.run('quarry-no-such-command', [], { timeoutMs: T }), { instanceOf: CommandError });
  t.is(err?.exitCode, 127);
});
