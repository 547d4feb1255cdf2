import { alive } from '../helpers/process.js';
import test from 'ava';
import { writeFileSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandError } from '../../src/errors.js';
import { ZxRunner } from '../../src/exec/zx-runner.js';
import type { RunOptions } from '../../src/exec/runner.js';

const runner = new ZxRunner({ killGraceMs: 300 });
const T = 10_000;

/** Runs `sh -c script` that prints its own pid first, and returns that pid with the outcome.
 * `stopOn`, when given, aborts the command at the first stdout line it matches: a stop that waits
 * for the script to be ready, where a short deadline would race a slow start on a loaded machine. */
async function runWithPid(
  script: string,
  opts: Partial<RunOptions>,
  stopOn?: RegExp,
): Promise<{ pid: number; error: unknown; lines: string[] }> {
  let pid = 0;
  const lines: string[] = [];
  const ac = new AbortController();
  const error = await runner
    .run('sh', ['-c', `echo $$; ${script}`], {
      timeoutMs: T,
      ...(stopOn ? { signal: ac.signal } : {}),
      ...opts,
      onLine: (stream, line) => {
        if (stream !== 'stdout') return;
        if (pid === 0) pid = Number(line);
        else lines.push(line);
        if (stopOn?.test(line)) ac.abort();
      },
    })
    .then(
      () => null,
      (err: unknown) => err,
    );
  return { pid, error, lines };
}

test('ZxRunner captures stdout and stderr of a successful command', async (t) => {
  const out = await runner.run('sh', ['-c', 'echo out; echo err >&2'], { timeoutMs: T });
  t.deepEqual(out, { stdout: 'out\n', stderr: 'err\n', exitCode: 0 });
});

test('ZxRunner rejects a non-zero exit with CommandError carrying code and stderr', async (t) => {
  const err = await t.throwsAsync(runner.run('sh', ['-c', 'echo broken >&2; exit 3'], { timeoutMs: T }), {
    instanceOf: CommandError,
  });
  t.is(err.exitCode, 3);
  t.is(err.stderr, 'broken\n');
  t.is(err.signal, null);
  t.is(err.message, 'sh -c "echo broken >&2; exit 3" exited with 3: broken');
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
  // The command waits for the test to have seen its first line: lines held until the exit
  // would leave it waiting until its deadline.
  const dir = await mkdtemp(join(tmpdir(), 'quarry-exec-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const seen = join(dir, 'seen');
  const out = await runner.run('sh', ['-c', 'echo early; while [ ! -e "$1" ]; do sleep 0.02; done; echo late', 'sh', seen], {
    timeoutMs: T,
    onLine: (_s, line) => {
      if (line === 'early') writeFileSync(seen, '');
    },
  });
  t.is(out.stdout, 'early\nlate\n');
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
  // The deadline is the only stop here, so it must leave a loaded machine time to start sh and
  // print the pid; a shorter one killed the shell before its echo now and then.
  const { pid, error } = await runWithPid('sleep 30', { timeoutMs: 2_000 });
  t.true(error instanceof CommandError);
  const err = error as CommandError;
  t.is(err.signal, 'SIGTERM');
  t.is(err.exitCode, null);
  t.regex(err.message, /^sh -c "echo \$\$; sleep 30" timed out after 2000 ms \(killed by SIGTERM\)$/);
  t.true(pid > 0);
  t.false(alive(pid));
});

test('ZxRunner sends SIGKILL when a command ignores SIGTERM', async (t) => {
  // Stopped once its trap is set: a SIGTERM before the trap would end it by SIGTERM.
  const { pid, error } = await runWithPid("trap '' TERM; echo ready; sleep 30", {}, /^ready$/);
  t.true(error instanceof CommandError);
  t.is((error as CommandError).signal, 'SIGKILL');
  t.false(alive(pid));
});

// The runner reports a stopped command only once its whole group is gone, so these check at
// the error, not some time after it: "killed" is a promise the error makes.
test('ZxRunner kills the whole process group, not just the command', async (t) => {
  // The child does not hold the output pipes, so the command's own end does not wait for it.
  const { lines, error } = await runWithPid('sleep 30 >/dev/null 2>&1 & echo child $!; wait', {}, /^child /);
  t.true(error instanceof CommandError);
  const child = Number(lines[0]?.slice('child '.length));
  t.true(child > 0);
  t.false(alive(child));
});

test('ZxRunner reports a stopped command only once a child that ignores SIGTERM is killed too', async (t) => {
  // The shell ends at SIGTERM; its child ignores it and holds no pipe: only the group's SIGKILL,
  // after the grace, ends it. The shell names its child once the child's trap is set.
  const dir = await mkdtemp(join(tmpdir(), 'quarry-exec-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const ready = join(dir, 'ready');
  const { lines, error } = await runWithPid(
    `sh -c "trap '' TERM; : >${ready}; exec sleep 30" >/dev/null 2>&1 & while [ ! -e ${ready} ]; do sleep 0.02; done; echo child $!; wait`,
    {},
    /^child /,
  );
  t.true(error instanceof CommandError);
  const child = Number(lines[0]?.slice('child '.length));
  t.true(child > 0);
  t.false(alive(child));
});

test('ZxRunner aborts a running command through its signal', async (t) => {
  const { pid, error } = await runWithPid('sleep 30', {}, /^\d+$/);
  t.true(error instanceof CommandError);
  t.is((error as CommandError).message, 'sh -c "echo $$; sleep 30" aborted (killed by SIGTERM)');
  t.false(alive(pid));
});

test('ZxRunner refuses to start with an aborted signal', async (t) => {
  const ac = new AbortController();
  ac.abort();
  const err = await t.throwsAsync(runner.run('sleep', ['30'], { timeoutMs: T, signal: ac.signal }), { instanceOf: CommandError });
  t.is(err.message, 'sleep 30 aborted before it started');
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
  t.is(err.message, 'sh -c "echo \\"key=$1\\"; echo \\"bad key $1\\" >&2; exit 2" sh *** exited with 2: bad key ***');
  t.is(err.stderr, 'bad key ***\n');
  t.is(err.command.includes('s3cr3t'), false);
  t.deepEqual(lines.sort(), ['bad key ***', 'key=***']);
});

test('ZxRunner reports a missing command as exit 127', async (t) => {
  const err = await t.throwsAsync(runner.run('quarry-no-such-command', [], { timeoutMs: T }), { instanceOf: CommandError });
  t.is(err.exitCode, 127);
});
