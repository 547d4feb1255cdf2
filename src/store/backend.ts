// The key-value seam under the document store. It is shaped like etcd's v3 API (one global
// revision, compare-and-swap on a key's modRevision, watch from a revision) so a distributed
// backend can replace the embedded one without the layers above noticing.

export interface KeyValue<V = unknown> {
  key: string;
  value: V;
  /** Revision of the write that created the key. */
  createRevision: number;
  /** Revision of the last write to the key; the document's resourceVersion. */
  modRevision: number;
}

export interface WatchEvent<V = unknown> {
  type: 'put' | 'delete';
  key: string;
  /** For a delete: the value the key held before. */
  value: V;
  revision: number;
  /** The key's createRevision (equal to `revision` when a put created the key). */
  createRevision: number;
  /** For a put over an existing key, delivered as it happens: the value it replaced (etcd's
   * prev_kv). Lets watchers tell what changed without keeping their own copy. Events a watcher
   * catches up on from the history carry none; `createRevision` still tells a create apart. */
  prevValue?: V;
}

/** Passed to a watcher instead of events when the revision it asked for is no longer kept:
 * it must list again and watch from the listed revision. */
export interface RelistSignal {
  type: 'relist';
  revision: number;
}

export type WatchHandler<V = unknown> = (event: WatchEvent<V> | RelistSignal) => void;

export interface Precondition {
  /** The write happens only if the key's modRevision equals this; 0 means "must not exist".
   * undefined means unconditional. */
  modRevision?: number;
}

/** One write of a transaction. A `del` with `ifExists` is skipped when the key is gone. */
export type TxnOp<V = unknown> =
  { op: 'put'; key: string; value: V; pre?: Precondition } | { op: 'del'; key: string; pre?: Precondition; ifExists?: true };

export interface Backend<V = unknown> {
  open(): Promise<void>;
  close(): Promise<void>;
  /** The newest revision (0 for an empty store). */
  revision(): number;
  get(key: string): Promise<KeyValue<V> | undefined>;
  /** Every key starting with prefix, in key order, with the revision the list was taken at. */
  list(prefix: string): Promise<{ items: KeyValue<V>[]; revision: number }>;
  /** Resolves once the write is durable, with the new revision; a failed precondition rejects
   * with ConflictError and writes nothing. */
  put(key: string, value: V, pre?: Precondition): Promise<number>;
  delete(key: string, pre?: Precondition): Promise<number>;
  /** Several writes of distinct keys as one (etcd's Txn): every precondition is checked first,
   * then either nothing is written (a failed one rejects) or all are, with consecutive
   * revisions, in one journal batch, committed and delivered to watchers together. Resolves
   * with each op's revision (0 for a skipped delete) once all are durable. */
  txn(ops: TxnOp<V>[]): Promise<number[]>;
  /** Delivers every change with revision > fromRevision, in order, then live changes.
   * Returns a function that stops the watch. */
  watch(fromRevision: number, handler: WatchHandler<V>): () => void;
}
