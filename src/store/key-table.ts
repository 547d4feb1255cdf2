// The key-values of one store in memory, with a per-kind key order so a list of one kind neither
// scans every key nor sorts on every call. Shared by the embedded and memory backends' core
// (core.ts) and the etcd backend's read cache (etcd-cache.ts).
import type { KeyValue } from './backend.js';
import { KeyIndex } from './key-index.js';

export class KeyTable<V> {
  private readonly items = new Map<string, KeyValue<V>>();
  /** Keys per kind in order: list("Disk/") at 40k disks must not scan and sort 50k keys. */
  private readonly index = new KeyIndex();

  get size(): number {
    return this.items.size;
  }

  get(key: string): KeyValue<V> | undefined {
    return this.items.get(key);
  }

  set(kv: KeyValue<V>): void {
    if (!this.items.has(kv.key)) this.index.add(kv.key);
    this.items.set(kv.key, kv);
  }

  delete(key: string): void {
    if (this.items.delete(key)) this.index.remove(key);
  }

  /** Every key starting with prefix, in key order. */
  list(prefix: string): KeyValue<V>[] {
    const keys = this.index.withPrefix(prefix);
    if (keys) return keys.map((k) => this.items.get(k) as KeyValue<V>);
    const out: KeyValue<V>[] = [];
    for (const [key, kv] of this.items) if (key.startsWith(prefix)) out.push(kv);
    return out.sort(byKey);
  }

  values(): IterableIterator<KeyValue<V>> {
    return this.items.values();
  }
}

/** Key order, as etcd's (bytes) for the ASCII keys of documents. */
export const byKey = <V>(a: KeyValue<V>, b: KeyValue<V>): number => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0);
