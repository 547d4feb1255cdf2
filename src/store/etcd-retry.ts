// Retrying etcd calls: ours rather than the etcd3 client's, so a write knows when it was sent
// twice and can tell its own earlier, committed attempt from another writer's conflict.
import { isRecoverableError, type IKeyValue, type IOptions } from 'etcd3';
import type { TxnOp } from './backend.js';

/** How long a call that fails as unavailable is tried again, from its first attempt. Longer than
 * an etcd election: killing the member Raft leads left a 3-member cluster answering nothing
 * for 2.1–2.3 s (etcd's default timing), and a request should wait that out, not fail. */
export const RETRY_FOR_MS = 4_000;

/** The pause before attempt n+1: 100, 200, 400 ms, then every 500 ms. */
export const retryPause = (attempt: number): number => Math.min(50 * 2 ** attempt, 500);

/** A failure worth another attempt, on this or another member: a member gone or electing, a
 * deadline passed. */
export const transient = (err: Error): boolean =>
  isRecoverableError(err) ||
  'isBrokenCircuitError' in err ||
  /BrokenCircuit|DeadlineExceeded|Unavailable|WatchStreamEnded/.test(err.constructor.name) ||
  /no leader|timed out|leader changed|too many requests|UNAVAILABLE|DEADLINE_EXCEEDED/i.test(err.message);

/**
 * Per member, no circuit breaker: each attempt goes to a member drawn at random, and a member
 * that refuses the connection is left at once for another draw (call()). etcd3's default breaker
 * (three failures, then five seconds skipped) opened on every member once an etcd election had
 * failed a few calls on each, and then failed every call at once for five seconds — longer than
 * the election. A breaker of one failure and one second did the same in a shorter way: its
 * half-open member lets one call through and turns the others away.
 */
export const noMemberBreaker = (): NonNullable<NonNullable<IOptions['faultHandling']>['host']> => () => noRetry;

/** The member refused the connection (it is down): try another at once. */
export const refused = (err: Error): boolean => /No connection established|ECONNREFUSED/.test(err.message);

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
