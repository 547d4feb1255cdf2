// Keys grouped by their first path segment ("Node/", "Disk/"), each group kept in key order, so
// list("Disk/") neither scans every key of the store nor sorts the group on every call. Sorting
// is deferred: writes only note added and removed keys, and the next read merges them in, so a
// burst of creates costs one sort of the new keys instead of one array insertion each.

/** One group's keys in code-unit order (what `<` on strings gives, as list() always returned). */
export class SortedKeys {
  private sorted: string[] = [];
  /** Keys added since the last merge, in no order; never also in `sorted`. */
  private added: string[] = [];
  /** Keys of `sorted` or `added` deleted since the last merge. */
  private readonly removed = new Set<string>();

  /** For a key not currently in the group. */
  add(key: string): void {
    // Deleted and re-created before any read: it is still in sorted or added.
    if (this.removed.delete(key)) return;
    this.added.push(key);
  }

  /** For a key currently in the group. */
  remove(key: string): void {
    this.removed.add(key);
  }

  /** The group's keys in order. Shared: callers must not change the array. */
  keys(): readonly string[] {
    if (this.added.length > 0 || this.removed.size > 0) this.merge();
    return this.sorted;
  }

  private merge(): void {
    const gone = this.removed;
    const a = gone.size ? this.sorted.filter((k) => !gone.has(k)) : this.sorted;
    const b = (gone.size ? this.added.filter((k) => !gone.has(k)) : this.added).sort();
    const out = new Array<string>(a.length + b.length);
    let i = 0;
    let j = 0;
    let o = 0;
    while (i < a.length && j < b.length) out[o++] = (a[i] as string) < (b[j] as string) ? (a[i++] as string) : (b[j++] as string);
    while (i < a.length) out[o++] = a[i++] as string;
    while (j < b.length) out[o++] = b[j++] as string;
    this.sorted = out;
    this.added = [];
    gone.clear();
  }
}

/** The group a key belongs to: everything up to and including its first '/', or '' without one. */
export const groupOf = (key: string): string => key.slice(0, key.indexOf('/') + 1);

export class KeyIndex {
  private readonly groups = new Map<string, SortedKeys>();

  add(key: string): void {
    const g = groupOf(key);
    let keys = this.groups.get(g);
    if (!keys) this.groups.set(g, (keys = new SortedKeys()));
    keys.add(key);
  }

  remove(key: string): void {
    this.groups.get(groupOf(key))?.remove(key);
  }

  /** Keys starting with prefix, in order, when the prefix names a group (contains a '/');
   * undefined otherwise, and the caller scans. */
  withPrefix(prefix: string): readonly string[] | undefined {
    const g = groupOf(prefix);
    if (g === '') return undefined;
    const all = this.groups.get(g)?.keys() ?? [];
    if (prefix.length === g.length) return all;
    // Lower bound of prefix, then the run of keys that start with it.
    let lo = 0;
    let hi = all.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((all[mid] as string) < prefix) lo = mid + 1;
      else hi = mid;
    }
    let end = lo;
    while (end < all.length && (all[end] as string).startsWith(prefix)) end++;
    return all.slice(lo, end);
  }
}
