// Event lines in the process log: failures at warn/error, the event's id and time on each line.
import test from 'ava';
import { eventLogFields, eventLogLevel } from '../../src/main/event-log.js';
import { createLogger } from '../../src/log.js';
import type { AnyBusEvent } from '../../src/tasks/bus.js';

const ev = (type: string, payload: unknown): AnyBusEvent => ({ seq: 7, at: '2026-11-25T00:00:00.000Z', type, payload });

test('event log: a failed run is an error, a canceled one a warning, others info; a refused file and a node in error warn', (t) => {
  const run = (state: string) => eventLogLevel(ev('task.state.changed', { runId: 'r', taskName: 'x', state }));
  t.deepEqual(['pending', 'running', 'completed', 'failed', 'canceled'].map(run), ['info', 'info', 'info', 'error', 'warn']);
  t.is(eventLogLevel(ev('specs.failed', { file: 'a.yaml', message: 'bad' })), 'warn');
  t.is(eventLogLevel(ev('node.state.changed', { nodeId: 'n', status: 'error' })), 'warn');
  t.is(eventLogLevel(ev('node.state.changed', { nodeId: 'n', status: 'active' })), 'info');
  t.is(eventLogLevel(ev('image.download.progress', { imageId: 'i' })), 'debug');
});

test('event log: each line carries the event id and time beside the payload, to find one from the other', (t) => {
  t.deepEqual(eventLogFields(ev('task.state.changed', { runId: 'r', state: 'failed', error: 'boom' })), {
    eventId: 7,
    eventAt: '2026-11-25T00:00:00.000Z',
    runId: 'r',
    state: 'failed',
    error: 'boom',
  });
});

test("event log: a payload's own message is the detail, so the line still says which event it is", (t) => {
  const lines: string[] = [];
  const log = createLogger('debug', (l) => void lines.push(l));
  const e = ev('node.state.changed', { nodeId: 'n', status: 'offline', reason: 'NoPowerControl', message: 'declare a BMC' });
  log(eventLogLevel(e), e.type, eventLogFields(e));
  t.like(JSON.parse(lines[0]!) as object, {
    level: 'info',
    message: 'node.state.changed',
    detail: 'declare a BMC',
    reason: 'NoPowerControl',
    eventId: 7,
  });
});

test('event log: a question waiting for an answer and a credential conflict warn: an operator must act', (t) => {
  t.is(eventLogLevel(ev('task.question.asked', { runId: 'r', taskName: 'disk.wipe.confirm', questionId: 'q', prompt: 'wipe?' })), 'warn');
  t.is(eventLogLevel(ev('task.question.answered', { runId: 'r', taskName: 'disk.wipe.confirm', questionId: 'q', answer: 'no' })), 'info');
  t.is(eventLogLevel(ev('node.credential.conflict', { nodeId: 'n', hostname: 'h1', message: 'reused' })), 'warn');
});

test("event log: a run caused by a request says so on its line, with the target's names", (t) => {
  const fields = eventLogFields(
    ev('task.state.changed', {
      runId: 'r',
      state: 'failed',
      requestId: 'req-1',
      target: { kind: 'Disk', id: 'd', name: 'h1/S1', devicePath: '/dev/sdb', serial: 'S1' },
    }),
  );
  t.like(fields, { eventId: 7, requestId: 'req-1', target: { devicePath: '/dev/sdb', serial: 'S1' } });
});
