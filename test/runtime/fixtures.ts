// Builders for the manager tests: a real in-memory store, a toy Node loop, and a manager wired
// with manual timers so retries and resyncs happen exactly when a test says.
import { newNodeSpec } from '../../src/fleet/discovery.js';
import { ManualClock } from '../../src/model/clock.js';
import type { Doc } from '../../src/model/document.js';
import type { NodeSpec, NodeStatusFields, TaskRunSpec, TaskRunStatus } from '../../src/model/kinds.js';
import { ManualTimers } from '../../src/runtime/backoff.js';
import { readyCondition, withConditions } from '../../src/runtime/conditions.js';
import { Manager, type ManagerOptions } from '../../src/runtime/manager.js';
import { done, type Reconciler, type Result } from '../../src/runtime/types.js';
import { createMemoryStore } from '../../src/store/index.js';
import type { Store, StoreEvent } from '../../src/store/types.js';

export type NodeDoc = Doc<NodeSpec, NodeStatusFields>;
export type LogLine = [level: string, msg: string, fields?: Record<string, unknown>];

export function nodeSpec(n = 1, over: Partial<NodeSpec> = {}): NodeSpec {
  return { ...newNodeSpec(`52:54:00:00:00:${n.toString(16).padStart(2, '0')}`, `n${n}`), ...over };
}

export async function createNode(store: Store, n = 1, over: Partial<NodeSpec> = {}): Promise<NodeDoc> {
  return store.create({ kind: 'Node', name: `n${n}`, spec: nodeSpec(n, over) });
}

export async function createRun(store: Store, target: { kind: string; id: string }): Promise<Doc<TaskRunSpec>> {
  const spec: TaskRunSpec = {
    taskName: 'node.boot',
    targetKind: target.kind,
    targetId: target.id,
    generation: 1,
    nodeId: null,
    nodeHostname: null,
    args: {},
    timeoutMs: 60_000,
    attempt: 1,
  };
  const status: TaskRunStatus = { state: 'pending', startedAt: null, completedAt: null, error: null, question: null, result: null };
  return store.create({ kind: 'TaskRun', name: 'boot', spec, status });
}

export interface ToyHooks {
  /** Runs before the status write; throw here to make apply fail. */
  beforeApply?: (doc: NodeDoc, attempt: number) => void | Promise<void>;
  /** Overrides the result (default done()). */
  result?: (doc: NodeDoc, attempt: number) => Result;
}

/** A Node loop that writes phase and Ready from spec.power, counting its work per id. */
export function toyNodeLoop(store: Store, clock: ManualClock, hooks: ToyHooks = {}) {
  const counts = new Map<string, number>();
  const loop: Reconciler<NodeDoc, { phase: 'active' | 'offline' }> & { counts: Map<string, number> } = {
    name: 'node',
    kind: 'Node',
    counts,
    async observe(id) {
      counts.set(id, (counts.get(id) ?? 0) + 1);
      return store.get<NodeSpec, NodeStatusFields>('Node', id);
    },
    plan: (doc) => ({ phase: doc.spec.power === 'on' ? 'active' : 'offline' }),
    async apply(doc, plan) {
      const attempt = counts.get(doc.id) ?? 0;
      await hooks.beforeApply?.(doc, attempt);
      const ready = readyCondition(plan.phase === 'active', plan.phase === 'active' ? 'PoweredOn' : 'PoweredOff');
      const status = withConditions({ ...doc.status, phase: plan.phase }, [ready], doc.metadata.generation, clock.iso());
      await store.updateStatus('Node', doc.id, status);
      return hooks.result?.(doc, attempt) ?? done();
    },
  };
  return loop;
}

export interface Harness {
  store: Store;
  clock: ManualClock;
  timers: ManualTimers;
  logs: LogLine[];
  manager: Manager;
}

export async function harness(opts: Partial<ManagerOptions> = {}, store?: Store): Promise<Harness> {
  const s = store ?? (await createMemoryStore());
  const clock = new ManualClock();
  const timers = new ManualTimers();
  const logs: LogLine[] = [];
  const manager = new Manager({
    store: s,
    concurrency: 4,
    resyncMs: 0,
    log: (level, msg, fields) => logs.push([level, msg, fields]),
    random: () => 0,
    clock,
    timers,
    ...opts,
  });
  return { store: s, clock, timers, logs, manager };
}

/** The store with some methods replaced; the rest still run with `this` = the real store. */
export function proxyStore(store: Store, overrides: Partial<Store>): Store {
  return new Proxy(store, {
    get(target, prop) {
      if (Object.hasOwn(overrides, prop)) return overrides[prop as keyof Store];
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

/** A store whose watch the test drives by hand: live changes are not delivered (as if the
 * history was lost), and `emit` hands the manager any event, a relist included. */
export function detachedWatch(store: Store): { store: Store; emit: (event: StoreEvent) => void } {
  const handlers: Array<(event: StoreEvent) => void> = [];
  const watch: Store['watch'] = (_from, handler) => {
    handlers.push(handler);
    return () => void handlers.splice(handlers.indexOf(handler), 1);
  };
  return { store: proxyStore(store, { watch }), emit: (event) => handlers.forEach((h) => h(event)) };
}

export const total = (counts: Map<string, number>): number => [...counts.values()].reduce((a, b) => a + b, 0);
