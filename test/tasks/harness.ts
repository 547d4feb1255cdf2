// A TaskService over a real in-memory store, with the bus, logs and ids tests look at.
import type { ExecutionContext } from 'ava';
import { ManualClock } from '../../src/model/clock.js';
import type { Runner } from '../../src/exec/runner.js';
import { createMemoryStore } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import { EventBus, isEvent, type AnyBusEvent } from '../../src/tasks/bus.js';
import { MemoryLogStore } from '../../src/tasks/logs.js';
import { TaskService } from '../../src/tasks/service.js';
import type { StartRequest } from '../../src/tasks/types.js';
import { FakeRunner } from '../helpers/fake-runner.js';

export const NODE_A = { id: 'aaaaaaaa-0000-4000-8000-000000000001', hostname: 'node-a' };
export const NODE_B = { id: 'bbbbbbbb-0000-4000-8000-000000000002', hostname: 'node-b' };

export interface Harness {
  store: Store;
  bus: EventBus;
  logs: MemoryLogStore;
  runner: Runner;
  clock: ManualClock;
  service: TaskService;
  events: AnyBusEvent[];
  /** The task.state.changed states of one run, in the order published. */
  states(runId: string): string[];
  /** Resolves with the first event (already published or future) that matches. */
  event(match: (e: AnyBusEvent) => boolean): Promise<AnyBusEvent>;
}

export function idGen(prefix = 'c'): () => string {
  let n = 0;
  return () => `${prefix.padEnd(8, '0')}-0000-4000-8000-${String(++n).padStart(12, '0')}`;
}

export async function harness(
  t: ExecutionContext,
  opts: { runner?: Runner; store?: Store; defaultTimeoutMs?: number; ids?: () => string } = {},
): Promise<Harness> {
  const store = opts.store ?? (await createMemoryStore());
  const bus = new EventBus();
  const logs = new MemoryLogStore();
  const runner = opts.runner ?? new FakeRunner();
  const clock = new ManualClock();
  const events: AnyBusEvent[] = [];
  bus.subscribe((e) => events.push(e));
  const ids = opts.ids ?? idGen();
  const service = new TaskService({ store, bus, logs, runner, clock, ids, defaultTimeoutMs: opts.defaultTimeoutMs ?? 60_000 });
  t.teardown(() => service.close());
  const states = (runId: string): string[] =>
    events.flatMap((e) => (isEvent(e, 'task.state.changed') && e.payload.runId === runId ? [e.payload.state] : []));
  const event = (match: (e: AnyBusEvent) => boolean): Promise<AnyBusEvent> => {
    const seen = events.find(match);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve) => {
      const off = bus.subscribe((e) => {
        if (!match(e)) return;
        off();
        resolve(e);
      });
    });
  };
  return { store, bus, logs, runner, clock, service, events, states, event };
}

export const target = { kind: 'Disk', id: 'dddddddd-0000-4000-8000-000000000009', generation: 2 };

export const nodeRun = (over: Partial<StartRequest> = {}): StartRequest => ({
  taskName: 'disk.wipe',
  target,
  node: NODE_A,
  ...over,
});

export const questionAsked = (runId: string) => (e: AnyBusEvent) => isEvent(e, 'task.question.asked') && e.payload.runId === runId;

export { alive } from '../helpers/process.js';
