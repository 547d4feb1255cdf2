// Which runs exist, in creation order, and the newest run per target: what `recent` and
// `latestFor` answer from without listing the store.
import type { TaskRun } from './types.js';

/** The newest run of one target, overall and per task name. */
interface Latest {
  any: string;
  byTask: Map<string, string>;
}

export class RunIndex {
  private readonly order: string[] = [];
  private readonly known = new Set<string>();
  // Nested by kind then id: a lookup builds no key string (loops look up several times per
  // reconcile, 100,000s of times after a burst).
  private readonly latest = new Map<string, Map<string, Latest>>();

  /** Records a run; runs must be added oldest first. */
  add(run: TaskRun): void {
    if (this.known.has(run.id)) return;
    this.known.add(run.id);
    this.order.push(run.id);
    const { targetKind, targetId, taskName } = run.spec;
    let ofKind = this.latest.get(targetKind);
    if (!ofKind) this.latest.set(targetKind, (ofKind = new Map<string, Latest>()));
    const entry = ofKind.get(targetId);
    if (entry) {
      entry.any = run.id;
      entry.byTask.set(taskName, run.id);
    } else {
      ofKind.set(targetId, { any: run.id, byTask: new Map([[taskName, run.id]]) });
    }
  }

  /** Forgets pruned runs. The newest run of a (target, step) is pruned only when its target
   * is gone; an entry that named one falls back to nothing, never to an older run. */
  remove(ids: ReadonlySet<string>): void {
    if (ids.size === 0) return;
    for (const id of ids) this.known.delete(id);
    const kept = this.order.filter((id) => !ids.has(id));
    this.order.length = 0;
    this.order.push(...kept);
    for (const [kind, ofKind] of this.latest) {
      for (const [targetId, entry] of ofKind) {
        for (const [task, id] of entry.byTask) if (ids.has(id)) entry.byTask.delete(task);
        if (entry.byTask.size === 0) ofKind.delete(targetId);
        else if (ids.has(entry.any)) entry.any = newestOf(entry.byTask, this.order);
      }
      if (ofKind.size === 0) this.latest.delete(kind);
    }
  }

  /** Run ids, oldest first (retention walks them). */
  all(): readonly string[] {
    return this.order;
  }

  /** Run ids, newest first. */
  recent(limit: number): string[] {
    const n = Math.max(0, Math.min(limit, this.order.length));
    return this.order.slice(this.order.length - n).reverse();
  }

  latestFor(kind: string, id: string, taskName?: string): string | undefined {
    const entry = this.latest.get(kind)?.get(id);
    return taskName === undefined ? entry?.any : entry?.byTask.get(taskName);
  }

  get size(): number {
    return this.order.length;
  }
}

function newestOf(byTask: Map<string, string>, order: readonly string[]): string {
  const ids = new Set(byTask.values());
  for (let i = order.length - 1; i >= 0; i -= 1) if (ids.has(order[i] as string)) return order[i] as string;
  return byTask.values().next().value as string;
}

/** Oldest first; runs created in the same millisecond keep the order they were listed in. */
export const byCreation = (runs: TaskRun[]): TaskRun[] =>
  runs
    .map((run, i) => ({ run, i }))
    .sort((a, b) => a.run.metadata.createdAt.localeCompare(b.run.metadata.createdAt) || a.i - b.i)
    .map((x) => x.run);
