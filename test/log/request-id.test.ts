import test from 'ava';
import { acceptRequestId, createLogger, currentRequestId, inRequest, outsideRequest, withRequestIds, type Logger } from '../../src/log.js';

test('request id sanitising keeps a sane client id as sent', (t) => {
  for (const id of ['a', 'ops-7f3a:retry.2', 'trace/abc+def=', 'user@host_1', 'x'.repeat(128)]) t.is(acceptRequestId(id), id);
  t.is(acceptRequestId(['first-id', 'second']), 'first-id', 'a repeated header: the first');
});

test('request id sanitising refuses what a log line or header could not carry plainly', (t) => {
  for (const bad of [
    '',
    'x'.repeat(129),
    'a b',
    'line\nbreak',
    'tab\tx',
    '<script>',
    'quote"d',
    "it's",
    'semi;colon',
    'ünïcode',
    '%0d%0a',
    undefined,
    null,
    7,
    {},
  ])
    t.is(acceptRequestId(bad), null, JSON.stringify(bad));
});

test('request id scope follows awaits and stops where outsideRequest starts', async (t) => {
  t.is(currentRequestId(), null);
  await inRequest('r-1', async () => {
    await new Promise((resolve) => setImmediate(resolve));
    t.is(currentRequestId(), 'r-1');
    t.is(
      outsideRequest(() => currentRequestId()),
      null,
    );
  });
  t.is(currentRequestId(), null);
});

test('request id logger adds the current id and keeps one a line names itself', (t) => {
  const lines: Array<Record<string, unknown> | undefined> = [];
  const inner: Logger = (_level, _message, fields) => void lines.push(fields);
  const log = withRequestIds(inner);
  log('info', 'outside');
  inRequest('r-2', () => {
    log('warn', 'inside', { a: 1 });
    log('info', 'own', { requestId: 'r-9' });
  });
  t.deepEqual(lines, [undefined, { a: 1, requestId: 'r-2' }, { requestId: 'r-9' }]);
});

test('log redaction masks secrets beside the new names and ids, and keeps those', (t) => {
  const lines: string[] = [];
  const log = createLogger('debug', (l) => lines.push(l));
  inRequest('r-3', () =>
    log('error', 'task.state.changed', {
      eventId: 4,
      target: { kind: 'Disk', name: 'h1/S1', devicePath: '/dev/sdb', serial: 'S1', yamlName: 'osd-disks' },
      node: { id: 'n1', hostname: 'h1', bmc: { password: 'bmc-pw-1' } },
      secretKey: 'sk-1',
      agentSecret: 'as-1',
    }),
  );
  const line = JSON.parse(lines[0]!) as Record<string, unknown>;
  t.like(line, {
    level: 'error',
    requestId: 'r-3',
    eventId: 4,
    target: { devicePath: '/dev/sdb', serial: 'S1', yamlName: 'osd-disks' },
    node: { hostname: 'h1', bmc: { password: '***' } },
    secretKey: '***',
    agentSecret: '***',
  });
  for (const secret of ['bmc-pw-1', 'sk-1', 'as-1']) t.false(lines[0]!.includes(secret), secret);
});
