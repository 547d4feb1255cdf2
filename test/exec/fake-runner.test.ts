import test from 'ava';
import { CommandError } from '../../src/errors.js';
import { FakeRunner } from '../helpers/fake-runner.js';

const T = 5_000;

test('FakeRunner answers a scripted call and records it', async (t) => {
  const fake = new FakeRunner().expect('ceph', ['osd', 'tree'], { stdout: '{"nodes":[]}\n' });
  const out = await fake.run('ceph', ['osd', 'tree'], { timeoutMs: T, input: 'x' });
  t.deepEqual(out, { stdout: '{"nodes":[]}\n', stderr: '', exitCode: 0 });
  t.is(fake.calls.length, 1);
  t.is(fake.calls[0]?.input, 'x');
  t.notThrows(() => fake.verify());
});

test('FakeRunner rejects an unscripted call with a clear error', async (t) => {
  const fake = new FakeRunner().expect('ceph', ['status']);
  await t.throwsAsync(fake.run('ceph', ['osd', 'rm', { secret: 'k' }], { timeoutMs: T }), {
    instanceOf: Error,
    message: 'FakeRunner: unexpected command: ceph osd rm ***',
  });
  t.throws(() => fake.verify(), { message: 'FakeRunner: not called: ceph status; unexpected: ceph osd rm ***' });
});

test('FakeRunner answers each expectation once, and always-expectations forever', async (t) => {
  const fake = new FakeRunner().expect('true').always((cmd) => cmd === 'echo', { stdout: 'hi\n' });
  await fake.run('true', [], { timeoutMs: T });
  await t.throwsAsync(fake.run('true', [], { timeoutMs: T }), { message: 'FakeRunner: unexpected command: true' });
  await fake.run('echo', ['a'], { timeoutMs: T });
  const out = await fake.run('echo', ['b'], { timeoutMs: T });
  t.is(out.stdout, 'hi\n');
});

test('FakeRunner turns a scripted non-zero exit into CommandError and streams lines', async (t) => {
  const lines: string[] = [];
  const fake = new FakeRunner().expect('sh', ['-c', 'x', { secret: 'pw' }], { stdout: 'a\nb\n', stderr: 'bad pw\n', exitCode: 4 });
  const err = await t.throwsAsync(
    fake.run('sh', ['-c', 'x', { secret: 'pw' }], { timeoutMs: T, onLine: (s, l) => lines.push(`${s}:${l}`) }),
    { instanceOf: CommandError },
  );
  t.is(err.message, 'sh -c x *** exited with 4: bad ***');
  t.deepEqual(lines, ['stdout:a', 'stdout:b', 'stderr:bad ***']);
});

test('FakeRunner honours abort during a delay', async (t) => {
  const fake = new FakeRunner().expect('sleep', ['9'], { delayMs: 60_000 });
  const ac = new AbortController();
  const run = fake.run('sleep', ['9'], { timeoutMs: 120_000, signal: ac.signal });
  ac.abort();
  const err = await t.throwsAsync(run, { instanceOf: CommandError });
  t.is(err.message, 'sleep 9 aborted (killed by SIGTERM)');
});

test('FakeRunner honours the deadline during a delay', async (t) => {
  const fake = new FakeRunner().expect('sleep', ['9'], { delayMs: 60_000 });
  const err = await t.throwsAsync(fake.run('sleep', ['9'], { timeoutMs: 20 }), { instanceOf: CommandError });
  t.is(err.message, 'sleep 9 timed out after 20 ms (killed by SIGTERM)');
});

test('FakeRunner computes a reply from the call', async (t) => {
  const fake = new FakeRunner().expect(
    (cmd) => cmd === 'cat',
    (call) => ({ stdout: call.input ?? '' }),
  );
  const out = await fake.run('cat', [], { timeoutMs: T, input: 'echo' });
  t.is(out.stdout, 'echo');
});
