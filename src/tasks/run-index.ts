// Which runs exist, in creation order, and the newest run per target: what `recent` and
// `latestFor` answer from without listing the store.
import type { TaskRun } from './types.js';

const targetKey = (kind: string, id: string): string => `${kind}\u0000${id}`;
const taskKey = (kind: string, id: string, taskName: string): string => `${kind}\u0000${id}\u0000${taskName}`;

export class RunIndex {
  private readonly order: string[] = [];
  private readonly known = new Set<string>();
  private readonly latest = new Map<string, string>();

  /** Records a run; runs must be added oldest first. */
  add(run: TaskRun): void {
    if (this.known.has(run.id)) return;
    this.known.add(run.id);
    this.order.push(run.id);
    const { targetKind, targetId, taskName } = run.spec;
    this.latest.set(targetKey(targetKind, targetId), run.id);
    this.latest.set(taskKey(targetKind, targetId, taskName), run.id);
  }

  /** Run ids, newest first. */
  recent(limit: number): string[] {
    const n = Math.max(0, Math.min(limit, this.order.length));
    return this.order.slice(this.order.length - n).reverse();
  }

  latestFor(kind: string, id: string, taskName?: string): string | undefined {
    return this.latest.get(taskName === undefined ? targetKey(kind, id) : taskKey(kind, id, taskName));
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
