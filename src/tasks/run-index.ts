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

/** Oldest first; runs created in the same millisecond keep the order they were listed in. */
export const byCreation = (runs: TaskRun[]): TaskRun[] =>
  runs
    .map((run, i) => ({ run, i }))
    .sort((a, b) => a.run.metadata.createdAt.localeCompare(b.run.metadata.createdAt) || a.i - b.i)
    .map((x) => x.run);
