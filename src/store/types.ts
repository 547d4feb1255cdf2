// The document store the rest of Quarry uses: versioned objects over a Backend.
import type { AnyDoc, Doc, Source } from '../model/document.js';

export interface CreateInput<S> {
  kind: string;
  /** A UUID v4 is generated when absent. */
  id?: string;
  name: string;
  spec: S;
  status?: unknown;
  labels?: Record<string, string>;
  source?: Source | null;
}

export interface SpecWriteOptions {
  /** Required for CAS: the write is refused with ConflictError when the object has moved on. */
  resourceVersion: number;
  name?: string;
  labels?: Record<string, string>;
  source?: Source | null;
}

export interface StatusWriteOptions {
  /** When given, CAS on it; when absent, the status is written over whatever spec is current. */
  resourceVersion?: number;
}

/** One write of Store.writeStatuses: a document created (it must not exist yet), or the status of
 * `base` replaced (CAS on its resourceVersion; its spec, name and labels stay). */
export type StatusBatchWrite = { create: CreateInput<unknown> } | { base: AnyDoc; status: unknown };

/** etcd refuses a transaction of more operations than its --max-txn-ops (128 by default); the
 * leader's fence adds one. */
export const STATUS_BATCH_MAX = 120;

export type StoreEvent =
  /** specChanged is false only when the spec is known to be unchanged: an event replayed from
   * the history to a resuming watcher does not know, and says true. */
  { type: 'added' | 'modified' | 'deleted'; doc: AnyDoc; revision: number; specChanged: boolean } | { type: 'relist'; revision: number };

export interface Store {
  open(): Promise<void>;
  close(): Promise<void>;
  revision(): number;
  get<S = unknown, T = unknown>(kind: string, id: string): Promise<Doc<S, T> | undefined>;
  /** Throws NotFoundError. */
  mustGet<S = unknown, T = unknown>(kind: string, id: string): Promise<Doc<S, T>>;
  list<S = unknown, T = unknown>(kind: string): Promise<Doc<S, T>[]>;
  create<S>(input: CreateInput<S>): Promise<Doc<S>>;
  /** Replaces the spec (generation +1 when it differs); a no-op returns the doc unchanged. */
  updateSpec<S>(kind: string, id: string, spec: S, opts: SpecWriteOptions): Promise<Doc<S>>;
  /** Read-modify-write with CAS, retried on conflict: `mutate` returns the new spec or
   * undefined for "no change". */
  mutateSpec<S>(kind: string, id: string, mutate: (doc: Doc<S>) => S | undefined): Promise<Doc<S>>;
  /** A status equal to the stored one writes nothing and wakes no watcher. */
  updateStatus(kind: string, id: string, status: unknown, opts?: StatusWriteOptions): Promise<AnyDoc>;
  delete(kind: string, id: string, opts?: { resourceVersion?: number }): Promise<void>;
  /** Up to STATUS_BATCH_MAX writes of unaudited kinds as ONE backend transaction, with no read:
   * for a writer that keeps what it wrote (the nodes' heartbeat records: thousands a minute, a
   * few transactions a second). All or nothing: a conflict rejects the batch (ConflictError)
   * and writes none. Resolves with the documents as written, in order. */
  writeStatuses(writes: StatusBatchWrite[]): Promise<AnyDoc[]>;
  /** Every change after fromRevision, in order; `relist` when that history is gone. */
  watch(fromRevision: number, handler: (event: StoreEvent) => void): () => void;
}
