// Retrying etcd calls: ours rather than the etcd3 client's, so a write knows when it was sent
// twice and can tell its own earlier, committed attempt from another writer's conflict.
import type { IKeyValue, IOptions } from 'etcd3';
import type { TxnOp } from './backend.js';

/** Attempts of a call that fails as unavailable: waits 100, 200, 400, 800 ms between them. */
export const RETRIES = 5;

/** The client's own retry policy, turned off: call() retries, knowing what it sent. */
export const noRetry = {
  execute: async <T>(fn: (context: { signal: AbortSignal }) => PromiseLike<T> | T): Promise<T> =>
    fn({ signal: new AbortController().signal }),
} as unknown as NonNullable<NonNullable<IOptions['faultHandling']>['global']>;

/**
 * A call that failed as unavailable is tried again (call()), and the first attempt may have been
 * committed before its answer was lost: the retry's compare then fails against our own write.
 * Asked only after such a retry. Recognised by etcd holding exactly the bytes we sent for
 * every put, with a precondition among them, all at one revision (one transaction), and no key
 * we deleted left: then the transaction is ours, committed at that revision.
 */
export function ourEarlierAttempt<V>(
  ops: TxnOp<V>[],
  sent: (string | undefined)[],
  current: (IKeyValue | undefined)[],
): number | undefined {
  let revision: string | undefined;
  let checked = false;
  for (const [i, o] of ops.entries()) {
    const kv = current[i];
    if (o.op === 'check') continue;
    if (o.op === 'del') {
      if (kv) return undefined;
      continue;
    }
    if (!kv || kv.value.toString('utf8') !== sent[i] || (revision !== undefined && kv.mod_revision !== revision)) return undefined;
    revision = kv.mod_revision;
    if (o.pre?.modRevision !== undefined) checked = true;
  }
  return checked && revision !== undefined ? Number(revision) : undefined;
}
