// How an event reads in the process log: at the level its news deserves (a failed run is an
// error, a refused file or a node in error a warning), with the event's id and time, so a log
// line and the event an operator saw on /events are found from each other.
import type { Level } from '../log.js';
import type { AnyBusEvent } from '../tasks/bus.js';

/** Events that are progress, not news: left to debug. */
const CHATTY = new Set(['image.download.progress']);

export function eventLogLevel(e: AnyBusEvent): Level {
  if (CHATTY.has(e.type)) return 'debug';
  const p = (e.payload ?? {}) as Record<string, unknown>;
  switch (e.type) {
    case 'task.state.changed':
      return p.state === 'failed' ? 'error' : p.state === 'canceled' ? 'warn' : 'info';
    case 'node.state.changed':
      return p.status === 'error' ? 'warn' : 'info';
    // A refused file, a fenced node, a run held until someone answers, an agent locked out:
    // an operator must look.
    case 'specs.failed':
    case 'node.fenced':
    case 'task.question.asked':
    case 'node.credential.conflict':
      return 'warn';
    case 'specs.pending':
      return p.severity === 'warning' ? 'warn' : 'info';
    default:
      return 'info';
  }
}

/** The log line's fields: the event's id and time, then its payload. A payload's own `message`
 * (a node's, a refused file's) becomes `detail`: the line's message stays the event's type. */
export function eventLogFields(e: AnyBusEvent): Record<string, unknown> {
  const p = e.payload && typeof e.payload === 'object' ? (e.payload as Record<string, unknown>) : { payload: e.payload };
  const { message, ...rest } = p;
  return { eventId: e.seq, eventAt: e.at, ...rest, ...(message === undefined ? {} : { detail: message }) };
}
