// GET /nodes/details as a projection kept up to date from the store's watch: each node's detail
// is serialized once and again only after that node or one of its disks changed, so a GET at
// 10k nodes / 40k disks joins cached strings instead of listing 50k documents and rebuilding
// 10k objects. It holds what the store already holds (node documents, shared, and three fields
// per disk), so it is bounded by the inventory's size.
import { Kind } from '../model/kinds.js';
import type { DiskDoc, NodeDoc } from '../model/operations.js';
import type { Store, StoreEvent } from '../store/types.js';
import { diskCounts, nodeDetailOf } from './views.js';

interface DiskEntry {
  nodeId: string;
  present: boolean;
  osd: boolean;
}

export class NodeDetails {
  private readonly nodes = new Map<string, NodeDoc>();
  private readonly disks = new Map<string, DiskEntry>();
  private readonly disksOfNode = new Map<string, Set<string>>();
  /** Serialized detail per node; a missing entry is a node to serialize again. */
  private readonly json = new Map<string, string>();
  /** Node ids in key order (the order store.list gives); undefined after an add or delete. */
  private order: string[] | undefined;
  /** The whole answer as bytes: sent as it is by every GET until something changes (a string
   * body would be encoded again for each request, 3 MB at 10k nodes). */
  private body: Buffer | undefined;
  private started: Promise<void> | undefined;
  private stopWatch: (() => void) | undefined;

  constructor(private readonly store: Store) {}

  /** The JSON array GET /nodes/details answers, as of every write acknowledged so far. */
  async serialized(): Promise<string> {
    return (await this.bytes()).toString('utf8');
  }

  /** The same, UTF-8 encoded: what the route sends. */
  async bytes(): Promise<Buffer> {
    await (this.started ??= this.start().catch((err: unknown) => {
      this.reset();
      throw err;
    }));
    return (this.body ??= Buffer.from(this.build(), 'utf8'));
  }

  /** Stops following the store; the next read starts over. */
  reset(): void {
    this.stopWatch?.();
    this.stopWatch = undefined;
    this.started = undefined;
    this.nodes.clear();
    this.disks.clear();
    this.disksOfNode.clear();
    this.json.clear();
    this.order = undefined;
    this.body = undefined;
  }

  // Started on the first read, not at construction, so an app that never serves the route never
  // watches. Lists are taken before the watch starts, from their revision: the watch replays
  // every later change in order, so the projection ends where the store is.
  private async start(): Promise<void> {
    const rev = this.store.revision();
    const [nodes, disks] = await Promise.all([this.store.list<never, never>(Kind.Node), this.store.list<never, never>(Kind.Disk)]);
    for (const n of nodes) this.putNode(n as NodeDoc);
    for (const d of disks) this.putDisk(d as DiskDoc);
    this.stopWatch = this.store.watch(rev, (e) => this.onEvent(e));
  }

  private onEvent(e: StoreEvent): void {
    // Too far behind for the store's history: drop everything and list again on the next read.
    if (e.type === 'relist') return this.reset();
    if (e.doc.kind === Kind.Node) {
      if (e.type === 'deleted') this.dropNode(e.doc.id);
      else this.putNode(e.doc as NodeDoc);
    } else if (e.doc.kind === Kind.Disk) {
      if (e.type === 'deleted') this.dropDisk(e.doc.id);
      else this.putDisk(e.doc as DiskDoc);
    }
  }

  private putNode(n: NodeDoc): void {
    if (!this.nodes.has(n.id)) this.order = undefined;
    this.nodes.set(n.id, n);
    this.dirty(n.id);
  }

  private dropNode(id: string): void {
    this.nodes.delete(id);
    this.order = undefined;
    this.dirty(id);
  }

  private putDisk(d: DiskDoc): void {
    this.dropDisk(d.id); // a disk whose nodeId changed leaves its old node
    const entry = { nodeId: d.spec.nodeId, ...diskCounts(d) };
    this.disks.set(d.id, entry);
    let set = this.disksOfNode.get(entry.nodeId);
    if (!set) this.disksOfNode.set(entry.nodeId, (set = new Set()));
    set.add(d.id);
    this.dirty(entry.nodeId);
  }

  private dropDisk(id: string): void {
    const old = this.disks.get(id);
    if (!old) return;
    this.disks.delete(id);
    const set = this.disksOfNode.get(old.nodeId);
    set?.delete(id);
    if (set?.size === 0) this.disksOfNode.delete(old.nodeId);
    this.dirty(old.nodeId);
  }

  private dirty(nodeId: string): void {
    this.json.delete(nodeId);
    this.body = undefined;
  }

  private build(): string {
    // Same order as sorting the keys `Node/<id>`, since all share the prefix.
    this.order ??= [...this.nodes.keys()].sort();
    const parts: string[] = [];
    for (const id of this.order) parts.push(this.detail(id));
    return `[${parts.join(',')}]`;
  }

  private detail(id: string): string {
    let text = this.json.get(id);
    if (text !== undefined) return text;
    let diskCount = 0;
    let osdCount = 0;
    for (const diskId of this.disksOfNode.get(id) ?? []) {
      const d = this.disks.get(diskId) as DiskEntry;
      if (d.present) diskCount++;
      if (d.present && d.osd) osdCount++;
    }
    text = JSON.stringify(nodeDetailOf(this.nodes.get(id) as NodeDoc, diskCount, osdCount));
    this.json.set(id, text);
    return text;
  }
}
