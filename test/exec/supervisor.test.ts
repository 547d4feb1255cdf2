// The supervisor of long-running processes: pid, output lines, exit report, SIGTERM then SIGKILL.
import test from 'ava';
import { NodeProcessSupervisor } from '../../src/exec/supervisor.js';
import { alive } from '../helpers/process.js';

const sup = new NodeProcessSupervisor();

test('supervisor reports the output lines and the exit of a process that ends on its own', async (t) => {
  const lines: string[] = [];
  const p = sup.spawn('sh', ['-c', 'echo started; echo oops >&2; exit 3'], { onLine: (s, l) => lines.push(`${s}:${l}`) });
  t.true(p.pid > 0);
  t.deepEqual(await p.exited, { code: 3, signal: null });
  t.deepEqual(lines.sort(), ['stderr:oops', 'stdout:started']);
});

test('supervisor stops with SIGTERM and the process is gone', async (t) => {
  const p = sup.spawn('sleep', ['30']);
  t.true(alive(p.pid));
  t.deepEqual(await p.stop(5_000), { code: null, signal: 'SIGTERM' });
  t.false(alive(p.pid));
});

test('supervisor kills with SIGKILL what ignores SIGTERM past the grace', async (t) => {
  let onReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (onReady = resolve));
  // Stopped only once its trap is set, or SIGTERM would end it before the trap exists.
  const p = sup.spawn('sh', ['-c', 'trap "" TERM; echo ready; while :; do sleep 0.05; done'], {
    onLine: (_s, l) => l === 'ready' && onReady(),
  });
  await ready;
  t.deepEqual(await p.stop(100), { code: null, signal: 'SIGKILL' });
  t.false(alive(p.pid));
});

test('supervisor reports a command that cannot start, without throwing', async (t) => {
  const p = sup.spawn('/nonexistent/qnet-no-such-binary', []);
  const exit = await p.exited;
  t.is(exit.code, null);
  t.regex(exit.error ?? '', /ENOENT/);
  t.deepEqual(await p.stop(100), exit);
});
