// The key-value seam under the document store. It is shaped like etcd's v3 API (one global
// revision, compare-and-swap on a key's modRevision, watch from a revision) so a distributed
// backend (etcd.ts) can replace the embedded one without the layers above noticing.
//
// Revisions only grow; they are not dense (etcd's also moves for keys outside our prefix) and
// need not start at 1 or 0. Compare them, never count them.

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
   * catches up on from the history may carry none (memory, embedded; etcd has them);
   * `createRevision` still tells a create apart. */
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

/** One write of a transaction. A `del` with `ifExists` is skipped when the key is gone. A
 * `check` writes nothing: its precondition must hold for the others to be written (the leader's
 * fence, fenced.ts: a deposed leader's writes fail). */
export type TxnOp<V = unknown> =
  | { op: 'put'; key: string; value: V; pre?: Precondition }
  | { op: 'del'; key: string; pre?: Precondition; ifExists?: true }
  | { op: 'check'; key: string; pre: Precondition };

export interface Backend<V = unknown> {
  /** Writes submitted one after another commit in that order, whatever is in flight (memory,
   * embedded: one writer). etcd serves requests in flight in any order, so a caller whose plan
   * depends on an earlier write having landed (the audit trail's bound) must wait for it. */
  readonly commitsInOrder?: boolean;
  open(): Promise<void>;
  close(): Promise<void>;
  /** The newest revision known (0 for an empty embedded store); etcd's: the newest seen. */
  revision(): number;
  /** `minRevision`: a revision the answer must reflect at least (a resourceVersion the caller
   * holds, perhaps from another controller); a backend that answers from a lagging cache (etcd)
   * waits for it or asks etcd. The others are always current and ignore it. */
  get(key: string, minRevision?: number): Promise<KeyValue<V> | undefined>;
  /** Every key starting with prefix, in key order, with the revision the list was taken at. */
  list(prefix: string): Promise<{ items: KeyValue<V>[]; revision: number }>;
  /** Resolves once the write is durable, with the new revision; a failed precondition rejects
   * with ConflictError and writes nothing. */
  put(key: string, value: V, pre?: Precondition): Promise<number>;
  delete(key: string, pre?: Precondition): Promise<number>;
  /** Several writes of distinct keys as one (etcd's Txn): every precondition is checked first,
   * then either nothing is written (a failed one rejects) or all are, committed and delivered
   * to watchers together. The writes share ONE revision (etcd) or take consecutive ones
   * (memory, embedded: one journal batch); callers must accept either, so nothing may assume
   * one event per revision. Resolves with each op's revision (0 for a skipped delete) once all
   * are durable; a `check` answers 0. */
  txn(ops: TxnOp<V>[]): Promise<number[]>;
  /** Delivers every change with revision > fromRevision, in order, then live changes. Events
   * of one transaction may share a revision. Returns a function that stops the watch. */
  watch(fromRevision: number, handler: WatchHandler<V>): () => void;
}

/** A put as a transaction of one: for backends whose every write is a transaction (etcd's Txn,
 * the fenced one's added compare). */
export async function putByTxn<V>(b: Pick<Backend<V>, 'txn'>, key: string, value: V, pre?: Precondition): Promise<number> {
  const [rev] = await b.txn([{ op: 'put', key, value, ...(pre ? { pre } : {}) }]);
  return rev as number;
}

/** A delete as a transaction of one (putByTxn's reason). */
export async function deleteByTxn<V>(b: Pick<Backend<V>, 'txn'>, key: string, pre?: Precondition): Promise<number> {
  const [rev] = await b.txn([{ op: 'del', key, ...(pre ? { pre } : {}) }]);
  return rev as number;
}
