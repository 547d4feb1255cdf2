// The one status writer every loop uses. Each loop owns named fields of a kind's status
// (docs/status-ownership.md) and writes only those: read the stored status, put this loop's
// fields in (an absent one is removed), compare-and-swap on the version read, again on a
// conflict. A write that changes nothing is skipped, or a loop would wake itself forever.
// Writing a field the loop did not declare is a programming error and throws.
import { isDeepStrictEqual } from 'node:util';
import { ConflictError } from '../../errors.js';
import type { Store } from '../../store/types.js';

/** Who writes what: `fields` are status keys, or `parent.key` for one entry of a nested map
 * (`ceph.mon`), or 'all' for a loop that owns the whole status of its kind.
 * test/reconcilers/status-ownership.test.ts checks that no two loops declare one. */
export interface StatusOwner {
  loop: string;
  kind: string;
  fields: readonly string[] | 'all';
}

/** Conflicts retried before the writer gives up and throws (the loop then backs off). */
export const WRITE_RETRIES = 8;

export interface WriteOptions {
  /** CAS on this version only (no retry): the caller planned from that exact document and
   * would rather look again (a ConflictError) than write over a newer one. */
  resourceVersion?: number;
  retries?: number;
}

export type WriteOutcome = 'written' | 'unchanged' | 'gone';

type Status = Record<string, unknown>;

/** A copy of `o` with `key` set to `value`, or without `key` when `value` is undefined. */
function withField(o: Status, key: string, value: unknown): Status {
  if (value !== undefined) return { ...o, [key]: value };
  const { [key]: _removed, ...rest } = o;
  return rest;
}

/** The stored status with the owner's fields taken from `part` (absent there: removed). */
export function patchOwned<S extends object>(owner: StatusOwner, cur: S, part: Partial<S>): S {
  if (owner.fields === 'all') return part as S;
  let next: Status = { ...(cur as Status) };
  const src = part as Status;
  for (const field of owner.fields) {
    const [top, sub] = field.split('.', 2) as [string, string | undefined];
    if (sub === undefined) {
      next = withField(next, top, src[top]);
      continue;
    }
    const from = (src[top] ?? {}) as Status;
    // Nothing to remove from a map that is not there: no empty map appears.
    if (from[sub] === undefined && next[top] === undefined) continue;
    next[top] = withField((next[top] ?? {}) as Status, sub, from[sub]);
  }
  return next as S;
}

/** The fields `next` changes that `owner` did not declare (empty: the write is in scope). */
export function foreignChanges(owner: StatusOwner, cur: object, next: object): string[] {
  const fields = owner.fields;
  if (fields === 'all') return [];
  const a = cur as Status;
  const b = next as Status;
  const bad: string[] = [];
  for (const key of new Set([...Object.keys(a), ...Object.keys(b)])) {
    if (fields.includes(key) || isDeepStrictEqual(a[key], b[key])) continue;
    const subs = fields.filter((f) => f.startsWith(`${key}.`)).map((f) => f.slice(key.length + 1));
    if (subs.length === 0) {
      bad.push(key);
      continue;
    }
    const ma = (a[key] ?? {}) as Status;
    const mb = (b[key] ?? {}) as Status;
    for (const k of new Set([...Object.keys(ma), ...Object.keys(mb)])) {
      if (!subs.includes(k) && !isDeepStrictEqual(ma[k], mb[k])) bad.push(`${key}.${k}`);
    }
  }
  return bad;
}

/**
 * Read, change, CAS, again on conflict (up to `retries` times, then the ConflictError goes to
 * the caller). `change` gets the stored status and returns the whole next one; it may run once
 * per attempt. Returns what happened: 'gone' when the object no longer exists.
 */
export async function writeStatus<S extends object>(
  store: Store,
  owner: StatusOwner,
  id: string,
  change: (cur: S) => S,
  opts: WriteOptions = {},
): Promise<WriteOutcome> {
  const retries = opts.resourceVersion !== undefined ? 0 : (opts.retries ?? WRITE_RETRIES);
  for (let i = 0; ; i++) {
    const doc = await store.get<unknown, S>(owner.kind, id);
    if (!doc) return 'gone';
    const next = change(doc.status);
    if (isDeepStrictEqual(next, doc.status)) return 'unchanged';
    const foreign = foreignChanges(owner, doc.status, next);
    if (foreign.length > 0)
      throw new Error(`the ${owner.loop} loop may not write ${owner.kind} status ${foreign.join(', ')} (docs/status-ownership.md)`);
    try {
      await store.updateStatus(owner.kind, id, next, { resourceVersion: opts.resourceVersion ?? doc.metadata.resourceVersion });
      return 'written';
    } catch (err) {
      if (!(err instanceof ConflictError) || i >= retries) throw err;
    }
  }
}

/** The owner's fields of `part` written over the stored status (patchOwned + writeStatus). */
export function writeOwned<S extends object>(
  store: Store,
  owner: StatusOwner,
  id: string,
  part: Partial<S>,
  opts: WriteOptions = {},
): Promise<WriteOutcome> {
  return writeStatus<S>(store, owner, id, (cur) => patchOwned(owner, cur, part), opts);
}
