// What crosses the wire to etcd and back: values as JSON of their encoded (secrets sealed) form,
// etcd's key-values in the Backend's shape, and etcd's failures as Quarry's errors. Messages
// name the operation and the key, never a value: a value may hold a secret.
import { Range, type IKeyValue } from 'etcd3';
import { ServiceUnavailableError, STORE_UNAVAILABLE } from '../errors.js';
import { transient } from './etcd-retry.js';
import type { KeyValue } from './backend.js';
import type { ValueCodec } from './codec.js';

/** A store key of Quarry's bookkeeping (the election's `~leader`), not a document's. */
export const reservedKey = (key: string): boolean => key.startsWith('~');

/** The read cache's marker, written after its watch reconnects (etcd-cache.ts). */
export const SYNC_KEY = '~sync';

/** Where the watched keys end and the keys under an unwatched prefix start, after the prefix:
 * past every document key (a kind's name first, ASCII) and every bookkeeping key (`~` and a
 * letter), so that the watched keys are one range, [prefix, prefix + '~~'), and one watch
 * covers them in revision order. */
const WATCHED_END = '~~';
const UNWATCHED_AREA = `${WATCHED_END}/`;

export class EtcdValues<V> {
  private readonly at: number;

  constructor(
    private readonly prefix: string,
    private readonly codec: ValueCodec<V> | undefined,
    /** Store key prefixes no watch covers (openEtcdStores: UNWATCHED_KINDS' `Kind/`). */
    private readonly unwatchedPrefixes: readonly string[] = [],
  ) {
    this.at = Buffer.byteLength(prefix);
  }

  key(key: string): string {
    return this.unwatched(key) ? this.prefix + UNWATCHED_AREA + key : this.prefix + key;
  }

  /** Whether `key` is kept outside the watched range: never in the read cache, in no event. */
  unwatched(key: string): boolean {
    return this.unwatchedPrefixes.some((p) => key.startsWith(p));
  }

  /** Whether a list of `prefix` includes unwatched keys (`Node` does `NodeHeartbeat/`). */
  reachesUnwatched(prefix: string): boolean {
    return this.unwatchedPrefixes.some((p) => p.startsWith(prefix) || prefix.startsWith(p));
  }

  /** The etcd range every watch covers: all keys under the prefix but the unwatched ones. */
  watched(): Range {
    if (this.unwatchedPrefixes.length === 0) return Range.prefix(this.prefix);
    return new Range(this.prefix, this.prefix + WATCHED_END);
  }

  /** The etcd ranges a list of `prefix` reads: its watched keys (for '' the whole watched
   * range, which stops before the unwatched area) and, when it reaches them, its unwatched ones. */
  ranges(prefix: string): Range[] {
    const out: Range[] = [];
    if (!this.unwatched(prefix)) out.push(prefix === '' ? this.watched() : Range.prefix(this.key(prefix)));
    if (this.reachesUnwatched(prefix)) out.push(Range.prefix(this.prefix + UNWATCHED_AREA + prefix));
    return out;
  }

  /** Keys of Quarry's own bookkeeping beside the documents (the election key, `~leader`): no
   * document watcher sees them. */
  reserved(raw: Buffer): boolean {
    return raw[this.at] === 0x7e && raw[this.at + 1] !== 0x7e;
  }

  /** The store's key of an etcd key under the prefix. */
  unkey(raw: Buffer): string {
    const key = raw.toString('utf8').slice(this.prefix.length);
    return key.startsWith(UNWATCHED_AREA) ? key.slice(UNWATCHED_AREA.length) : key;
  }

  encode(key: string, value: V): string {
    // JSON.stringify returns undefined (its type says string) for undefined, a function, a symbol.
    const json = JSON.stringify(this.codec ? this.codec.encode(key, value) : value) as string | undefined;
    if (json === undefined) throw new TypeError(`${key}: value is not JSON`);
    return json;
  }

  decode(key: string, raw: Buffer): V {
    let stored: unknown;
    try {
      stored = JSON.parse(raw.toString('utf8'));
    } catch {
      // Not JSON.parse's message: it quotes the text, which may be a secret.
      throw new Error(`${key}: the value in etcd is not JSON (${raw.length} bytes); was it written by something else than Quarry?`);
    }
    return this.codec ? this.codec.decode(key, stored).value : (stored as V);
  }

  kv(raw: IKeyValue): KeyValue<V> {
    const key = this.unkey(raw.key);
    return { key, value: this.decode(key, raw.value), createRevision: Number(raw.create_revision), modRevision: Number(raw.mod_revision) };
  }

  /** Only the revisions: what a failed compare is judged by, without decoding (or decrypting)
   * a value nobody asked for. */
  revisions(raw: IKeyValue | undefined): KeyValue<V> | undefined {
    if (!raw) return undefined;
    return {
      key: this.unkey(raw.key),
      value: undefined as V,
      createRevision: Number(raw.create_revision),
      modRevision: Number(raw.mod_revision),
    };
  }
}

/** etcd unreachable (no member answers, no leader, a deadline passed) becomes a 503 that says to
 * try again: loops back off and retry, the API answers STORE_UNAVAILABLE. Other errors are bugs or
 * misconfiguration and go up as they are. */
export function mapEtcdError(err: unknown, what: string): unknown {
  if (!(err instanceof Error)) return err;
  if (!transient(err)) return err;
  const mapped = new ServiceUnavailableError(`the store (etcd) is unavailable: ${what} failed (${err.message})`, STORE_UNAVAILABLE);
  return Object.assign(mapped, { cause: err, retryable: true });
}
