// LOG_LEVEL: the lowest level written; pino under src/log.ts writes one JSON object a line.
import test from 'ava';
import { loadConfig } from '../../src/config.js';
import { InputError } from '../../src/errors.js';
import { createLogger, LEVELS, type Level } from '../../src/log.js';

const written = (min: Level): Array<Record<string, unknown>> => {
  const lines: string[] = [];
  const log = createLogger(min, (l) => void lines.push(l));
  for (const level of LEVELS) log(level, `at ${level}`, { n: 1 });
  return lines.map((l) => JSON.parse(l) as Record<string, unknown>);
};

test('log level filtering writes the given level and those above, each a JSON line with time, level and message', (t) => {
  t.deepEqual(
    written('warn').map((l) => l.level),
    ['warn', 'error'],
  );
  t.deepEqual(
    written('debug').map((l) => l.message),
    ['at debug', 'at info', 'at warn', 'at error'],
  );
  t.deepEqual(
    written('error').map((l) => l.level),
    ['error'],
  );
  const [line] = written('info');
  t.like(line, { level: 'info', message: 'at info', n: 1 });
  t.regex(String(line?.time), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
});

test('log level from LOG_LEVEL: info by default, each level accepted, anything else refused naming the choices', (t) => {
  t.is(loadConfig({}).logLevel, 'info');
  for (const level of LEVELS) t.is(loadConfig({ LOG_LEVEL: level }).logLevel, level);
  for (const bad of ['INFO', 'trace', 'verbose', ' info'])
    t.throws(() => loadConfig({ LOG_LEVEL: bad }), {
      instanceOf: InputError,
      message: /^LOG_LEVEL must be one of debug, info, warn, error/,
    });
});

test('log lines mask secrets at every depth with pino writing them', (t) => {
  const lines: string[] = [];
  createLogger('debug', (l) => void lines.push(l))('info', 'login', {
    user: 'u',
    password: 'pw-123',
    nested: { authorization: 'Bearer qry_abc' },
  });
  t.false(lines[0]!.includes('pw-123'));
  t.false(lines[0]!.includes('qry_abc'));
  t.like(JSON.parse(lines[0]!) as object, { user: 'u', password: '***', nested: { authorization: '***' } });
});
