import test from 'ava';
import { EventBus, isEvent, type AnyBusEvent } from '../../src/tasks/bus.js';

test('EventBus delivers events with a monotonic seq', (t) => {
  const bus = new EventBus();
  const seen: AnyBusEvent[] = [];
  bus.subscribe((e) => seen.push(e));
  bus.publish('task.state.changed', { runId: 'r', taskName: 'disk.wipe', state: 'running' });
  bus.publish('node.state.changed', { nodeId: 'n', status: 'active' });
  bus.publish('custom.thing', { anything: 1 });
  t.deepEqual(
    seen.map((e) => [e.seq, e.type]),
    [
      [1, 'task.state.changed'],
      [2, 'node.state.changed'],
      [3, 'custom.thing'],
    ],
  );
  t.is(bus.lastSeq(), 3);
});

test('EventBus unsubscribe stops delivery', (t) => {
  const bus = new EventBus();
  let count = 0;
  const off = bus.subscribe(() => count++);
  bus.publish('x', null);
  off();
  bus.publish('x', null);
  t.is(count, 1);
  t.is(bus.subscriberCount(), 0);
});

test('EventBus keeps delivering when a subscriber throws', (t) => {
  const errors: string[] = [];
  const bus = new EventBus({ onError: (err, e) => errors.push(`${(err as Error).message}@${e.seq}`) });
  const seen: number[] = [];
  bus.subscribe(() => {
    throw new Error('boom');
  });
  bus.subscribe((e) => seen.push(e.seq));
  t.notThrows(() => bus.publish('x', 1));
  t.deepEqual(seen, [1]);
  t.deepEqual(errors, ['boom@1']);
});

test('EventBus reports a rejecting async subscriber without an unhandled rejection', async (t) => {
  const errors: string[] = [];
  const bus = new EventBus({ onError: (err) => errors.push((err as Error).message) });
  bus.subscribe(async () => {
    throw new Error('later');
  });
  bus.publish('x', 1);
  await new Promise((r) => setImmediate(r));
  t.deepEqual(errors, ['later']);
});

test('EventBus survives a throwing error reporter', (t) => {
  const bus = new EventBus({
    onError: () => {
      throw new Error('reporter');
    },
  });
  bus.subscribe(() => {
    throw new Error('boom');
  });
  t.notThrows(() => bus.publish('x', 1));
});

test('EventBus tolerates subscribing during delivery', (t) => {
  const bus = new EventBus();
  const seen: string[] = [];
  bus.subscribe(() => {
    bus.subscribe(() => seen.push('late'));
    seen.push('first');
  });
  bus.publish('x', 1);
  t.deepEqual(seen, ['first']);
});

test('EventBus isEvent narrows a known event type', (t) => {
  const bus = new EventBus();
  const event = bus.publish('task.state.changed', { runId: 'r', taskName: 't', state: 'failed' });
  t.true(isEvent(event, 'task.state.changed') && event.payload.state === 'failed');
  t.false(isEvent(event, 'node.state.changed'));
});
