// How many nodes are in each phase and how many OSDs in each state, kept up to date from the
// store's watch so that a scrape at 10,000 nodes / 40,000 disks reads a few counters instead of
// listing 50,000 documents. Holds one short string per node and per disk with an OSD.
import { Kind, type NodeStatusFields, type DiskStatusFields } from '../model/kinds.js';
import type { AnyDoc } from '../model/document.js';
import type { Store, StoreEvent } from '../store/types.js';

/** A node that has no phase yet (just created). */
export const NO_PHASE = 'unknown';

class Tally {
  private readonly of = new Map<string, string>();
  readonly counts = new Map<string, number>();

  set(id: string, value: string | undefined): void {
    const was = this.of.get(id);
    if (was === value) return;
    if (was !== undefined) this.counts.set(was, (this.counts.get(was) ?? 1) - 1);
    if (value === undefined) this.of.delete(id);
    else {
      this.of.set(id, value);
      this.counts.set(value, (this.counts.get(value) ?? 0) + 1);
    }
  }

  clear(): void {
    this.of.clear();
    this.counts.clear();
  }
}

const nodePhase = (d: AnyDoc): string => (d.status as NodeStatusFields | null)?.phase ?? NO_PHASE;
const osdState = (d: AnyDoc): string | undefined => (d.status as DiskStatusFields | null)?.osd?.phase;

export class PhaseCounts {
  private readonly nodes = new Tally();
  private readonly osds = new Tally();
  private started: Promise<void> | undefined;
  private stopWatch: (() => void) | undefined;

  constructor(private readonly store: Store) {}

  /** Nodes per phase and OSDs per state, as of every write acknowledged so far. */
  async read(): Promise<{ nodes: ReadonlyMap<string, number>; osds: ReadonlyMap<string, number> }> {
    // Started on the first scrape: a Quarry nobody scrapes never follows the store for this.
    await (this.started ??= this.start().catch((err: unknown) => {
      this.stop();
      throw err;
    }));
    return { nodes: this.nodes.counts, osds: this.osds.counts };
  }

  stop(): void {
    this.stopWatch?.();
    this.stopWatch = undefined;
    this.started = undefined;
    this.nodes.clear();
    this.osds.clear();
  }

  // The lists are taken at a revision and the watch replays everything after it, in order.
  private async start(): Promise<void> {
    const rev = this.store.revision();
    const [nodes, disks] = await Promise.all([this.store.list(Kind.Node), this.store.list(Kind.Disk)]);
    for (const n of nodes) this.nodes.set(n.id, nodePhase(n));
    for (const d of disks) this.osds.set(d.id, osdState(d));
    this.stopWatch = this.store.watch(rev, (e) => this.onEvent(e));
  }

  private onEvent(e: StoreEvent): void {
    // Too far behind for the store's history: start over at the next scrape.
    if (e.type === 'relist') {
      this.stop();
      return;
    }
    if (e.doc.kind === Kind.Node) this.nodes.set(e.doc.id, e.type === 'deleted' ? undefined : nodePhase(e.doc));
    else if (e.doc.kind === Kind.Disk) this.osds.set(e.doc.id, e.type === 'deleted' ? undefined : osdState(e.doc));
  }
}
