// The leader's writes, fenced (#18 part 4). Every write of the controller that runs the loops
// carries a compare on the election key's revision (etcd's own pattern for leader election):
// once the leader's lease has gone and another controller holds the key, the compare fails and
// nothing is written — however late the deposed leader's request reaches etcd. Reads and
// watches pass through: only acting on the world needs the leadership.
import { ConflictError } from '../errors.js';
import { deleteByTxn, putByTxn, type Backend, type KeyValue, type Precondition, type TxnOp, type WatchHandler } from './backend.js';

/** What proves the leadership: the election key and the revision our campaign wrote it at. */
export interface Fence {
  key: string;
  modRevision: number;
}

/** A write refused because this controller does not (or no longer) lead. A ConflictError (409,
 * a loop requeues quietly), with a code of its own so nothing retries it as a plain conflict. */
export class FencedError extends ConflictError {
  constructor(message: string) {
    super(message, 'FENCED');
  }
}

export class FencedBackend<V> implements Backend<V> {
  readonly commitsInOrder?: boolean;

  /** `fence`: the current proof of leadership, null while this controller does not lead. */
  constructor(
    private readonly inner: Backend<V>,
    private readonly fence: () => Fence | null,
  ) {
    if (inner.commitsInOrder !== undefined) this.commitsInOrder = inner.commitsInOrder;
  }

  /** The backend is shared with the unfenced store, which opens and closes it. */
  open(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  revision(): number {
    return this.inner.revision();
  }

  get(key: string, minRevision?: number): Promise<KeyValue<V> | undefined> {
    return this.inner.get(key, minRevision);
  }

  list(prefix: string): Promise<{ items: KeyValue<V>[]; revision: number }> {
    return this.inner.list(prefix);
  }

  watch(fromRevision: number, handler: WatchHandler<V>): () => void {
    return this.inner.watch(fromRevision, handler);
  }

  put(key: string, value: V, pre?: Precondition): Promise<number> {
    return putByTxn(this, key, value, pre);
  }

  delete(key: string, pre?: Precondition): Promise<number> {
    return deleteByTxn(this, key, pre);
  }

  async txn(ops: TxnOp<V>[]): Promise<number[]> {
    const fence = this.fence();
    if (!fence)
      throw new FencedError(
        'this controller does not lead, or has not had its lease confirmed within its TTL: its loops may not write now',
      );
    try {
      const revs = await this.inner.txn([...ops, { op: 'check', key: fence.key, pre: { modRevision: fence.modRevision } }]);
      return revs.slice(0, ops.length);
    } catch (err) {
      // A conflict may be the fence's or an object's: the election key tells which.
      if (err instanceof ConflictError && (await this.deposed(fence)))
        throw new FencedError(
          `this controller no longer leads (the election key moved past revision ${fence.modRevision}): the write was not made`,
        );
      throw err;
    }
  }

  private async deposed(fence: Fence): Promise<boolean> {
    const kv = await this.inner.get(fence.key).catch(() => undefined);
    return kv?.modRevision !== fence.modRevision;
  }
}
