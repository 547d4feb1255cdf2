// A Store that tells an observer how long each write took, and knows whether it is still open
// (GET /readyz). A wrapper rather than hooks inside the store: the backends stay free of any
// metrics library, and a test's memory store is timed the same way as the embedded one.
import type { Store } from './types.js';

export type StoreWrite = 'create' | 'spec' | 'status' | 'delete' | 'status-batch';

export interface StoreWriteObserver {
  /** A write settled (acknowledged or refused) after `seconds`. */
  written(op: StoreWrite, seconds: number): void;
}

export interface ObservedStore extends Store {
  /** False once close() has been called. */
  isOpen(): boolean;
}

export function observeWrites(store: Store, observer: StoreWriteObserver): ObservedStore {
  let open = true;
  // The store's own promise is returned: timing adds no await to the writer's path.
  const timed = <T>(op: StoreWrite, write: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    const p = write();
    const done = () => observer.written(op, (performance.now() - t0) / 1000);
    p.then(done, done);
    return p;
  };
  return {
    isOpen: () => open,
    open: async () => {
      await store.open();
      open = true;
    },
    close: () => {
      open = false;
      return store.close();
    },
    revision: () => store.revision(),
    get: (kind, id) => store.get(kind, id),
    mustGet: (kind, id) => store.mustGet(kind, id),
    list: (kind) => store.list(kind),
    watch: (from, handler) => store.watch(from, handler),
    create: (input) => timed('create', () => store.create(input)),
    updateSpec: (kind, id, spec, opts) => timed('spec', () => store.updateSpec(kind, id, spec, opts)),
    mutateSpec: (kind, id, mutate) => timed('spec', () => store.mutateSpec(kind, id, mutate)),
    updateStatus: (kind, id, status, opts) => timed('status', () => store.updateStatus(kind, id, status, opts)),
    delete: (kind, id, opts) => timed('delete', () => store.delete(kind, id, opts)),
    writeStatuses: (writes) => timed('status-batch', () => store.writeStatuses(writes)),
  };
}
