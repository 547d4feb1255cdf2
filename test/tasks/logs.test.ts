import test from 'ava';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InputError } from '../../src/errors.js';
import { FileLogStore } from '../../src/tasks/file-logs.js';
import { MemoryLogStore, type LogStore } from '../../src/tasks/logs.js';
import type { LogLine } from '../../src/tasks/types.js';

const line = (message: string): LogLine => ({ timestamp: '2026-01-01T00:00:00.000Z', level: 'info', message });

async function tempDir(t: { teardown(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'quarry-logs-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const variants: Array<[string, (dir: string, maxLines?: number) => LogStore]> = [
  ['MemoryLogStore', (_d, maxLines) => new MemoryLogStore({ maxLines })],
  ['FileLogStore', (dir, maxLines) => new FileLogStore({ dir: join(dir, 'logs'), maxLines })],
];

for (const [name, make] of variants) {
  test(`${name} reads back every line appended before the read, in order`, async (t) => {
    const logs = make(await tempDir(t));
    for (let i = 0; i < 50; i++) logs.append('run-1', line(`l${i}`));
    logs.append('run-2', line('other'));
    const lines = await logs.read('run-1');
    t.deepEqual(
      lines.map((l) => l.message),
      Array.from({ length: 50 }, (_, i) => `l${i}`),
    );
    t.deepEqual(await logs.read('run-2'), [line('other')]);
    await logs.close();
  });

  test(`${name} returns no lines for an unknown run`, async (t) => {
    const logs = make(await tempDir(t));
    t.deepEqual(await logs.read('nothing'), []);
  });

  test(`${name} bounds a run's log and notes the truncation once`, async (t) => {
    const logs = make(await tempDir(t), 5);
    for (let i = 0; i < 8; i++) logs.append('r', line(`l${i}`));
    const lines = await logs.read('r');
    t.is(lines.length, 6);
    t.is(lines[4]?.message, 'l4');
    t.deepEqual(lines[5], {
      timestamp: '2026-01-01T00:00:00.000Z',
      level: 'warn',
      message: 'log truncated: more than 5 lines, the rest was dropped',
    });
  });

  test(`${name} refuses a run id that could escape the log directory`, async (t) => {
    const logs = make(await tempDir(t));
    t.throws(() => logs.append('../etc/passwd', line('x')), {
      instanceOf: InputError,
      message: 'invalid run id for a log: "../etc/passwd"',
    });
    await t.throwsAsync(logs.read('a/b'), { instanceOf: InputError });
  });
}

test('FileLogStore writes one JSON line per log line', async (t) => {
  const dir = await tempDir(t);
  const logs = new FileLogStore({ dir });
  logs.append('r1', line('hello'));
  await logs.flush();
  t.is(await readFile(join(dir, 'r1.jsonl'), 'utf8'), JSON.stringify(line('hello')) + '\n');
});

test('FileLogStore keeps counting a log written before a restart and skips a torn line', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'r.jsonl'), [line('a'), line('b')].map((l) => JSON.stringify(l)).join('\n') + '\n{"torn');
  const logs = new FileLogStore({ dir, maxLines: 3 });
  logs.append('r', line('c'));
  logs.append('r', line('d'));
  const messages = (await logs.read('r')).map((l) => l.message);
  t.is(messages.length, 4);
  t.deepEqual(messages.slice(0, 3), ['a', 'b', 'c']);
  t.regex(messages[3] ?? '', /^log truncated/);
});

test('FileLogStore reports a failed write and keeps working for other runs', async (t) => {
  const dir = await tempDir(t);
  await writeFile(join(dir, 'blocked'), 'a file where the directory should be');
  const errors: string[] = [];
  const logs = new FileLogStore({ dir: join(dir, 'blocked'), onError: (_e, runId) => errors.push(runId) });
  logs.append('r', line('x'));
  await logs.flush();
  t.deepEqual(errors, ['r']);
});

test('FileLogStore files are 0600 in a 0700 directory, whatever the umask', async (t) => {
  const dir = join(await tempDir(t), 'runs');
  const logs = new FileLogStore({ dir });
  const id = '6f1c2e3a-1b2c-4d5e-8f90-123456789abc';
  logs.append(id, line('hello'));
  await logs.flush();
  t.is((await stat(dir)).mode & 0o777, 0o700);
  t.is((await stat(join(dir, `${id}.jsonl`))).mode & 0o777, 0o600);
});
