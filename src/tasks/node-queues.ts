// Pending node-level runs per node, oldest first, and the agents long-polling for them. Kept
// in memory so a claim never lists the store (the lab runs thousands of runs).

export class NodeQueues {
  private readonly pending = new Map<string, string[]>();
  private readonly waiters = new Map<string, Set<() => void>>();

  /** Queues a run behind the node's older ones and wakes the node's waiting agents. */
  push(nodeId: string, runId: string): void {
    const queue = this.pending.get(nodeId) ?? [];
    queue.push(runId);
    this.pending.set(nodeId, queue);
    // All of them: one wins the run, the others go back to waiting.
    for (const wake of [...(this.waiters.get(nodeId) ?? [])]) wake();
  }

  /** The node's oldest pending run, removed from the queue. */
  take(nodeId: string): string | undefined {
    const queue = this.pending.get(nodeId);
    const runId = queue?.shift();
    if (queue?.length === 0) this.pending.delete(nodeId);
    return runId;
  }

  remove(nodeId: string, runId: string): void {
    const queue = this.pending.get(nodeId);
    if (!queue) return;
    const rest = queue.filter((id) => id !== runId);
    if (rest.length > 0) this.pending.set(nodeId, rest);
    else this.pending.delete(nodeId);
  }

  size(nodeId: string): number {
    return this.pending.get(nodeId)?.length ?? 0;
  }

  /** Resolves at the next push for the node, or when `stop` aborts. */
  wait(nodeId: string, stop: AbortSignal): Promise<void> {
    if (stop.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const set = this.waiters.get(nodeId) ?? new Set<() => void>();
      this.waiters.set(nodeId, set);
      const done = (): void => {
        set.delete(done);
        if (set.size === 0) this.waiters.delete(nodeId);
        stop.removeEventListener('abort', done);
        resolve();
      };
      set.add(done);
      stop.addEventListener('abort', done, { once: true });
    });
  }

  /** Releases every waiting agent (shutdown). */
  wakeAll(): void {
    for (const set of [...this.waiters.values()]) for (const wake of [...set]) wake();
  }
}
