// GET /nodes/details as a projection kept up to date from the store's watch: each node's detail
// is serialized once and again only after that node or one of its disks changed, so a GET at
// 10k nodes / 40k disks copies cached bytes instead of listing 50k documents and rebuilding
// 10k objects. It holds the node documents (shared with the store), a number per disk, and the
// answer itself, once, as bytes: each node's detail is a range of it.
import { Kind } from '../model/kinds.js';
import type { DiskDoc, NodeDoc } from '../model/operations.js';
import type { Store, StoreEvent } from '../store/types.js';
import { diskCounts, nodeDetailOf } from './views.js';

const PRESENT = 1;
const OSD = 2;

/** Changed nodes are serialized in the background, this many per turn of the event loop, once
 * changes have settled for SETTLE_MS: a GET after a burst (10,000 nodes going active as their
 * agents first report) then copies bytes instead of serializing every node on its request path,
 * which took that GET 76–157 ms in the heartbeats bench. The bytes are still assembled by the
 * GET (a copy of a few ms), so a fleet that changes all the time allocates no 3 MB answer
 * nobody asked for. */
const SLICE = 256;
const SETTLE_MS = 20;

/** The last answer: node ids in key order, and where each one's detail lies in the bytes. */
interface Built {
  body: Buffer;
  order: string[];
  starts: Uint32Array;
  ends: Uint32Array;
}

export class NodeDetails {
  private readonly nodes = new Map<string, NodeDoc>();
  /** The node each disk is on, and per node its disks' PRESENT | OSD bits. */
  private readonly diskNode = new Map<string, string>();
  private readonly disksOfNode = new Map<string, Map<string, number>>();
  /** Nodes whose detail must be serialized again at the next build. */
  private readonly stale = new Set<string>();
  /** Of those, the ones the background has not serialized yet, and what it has. */
  private readonly unprepared = new Set<string>();
  private readonly prepared = new Map<string, string>();
  private refreshing = false;
  /** Moves at reset(), so a background slice scheduled before it does nothing after. */
  private epoch = 0;
  /** Node ids in key order (the order store.list gives); undefined after an add or delete. */
  private order: string[] | undefined;
  /** Sent as it is by every GET until something changes: a string body would be encoded again
   * for each request (3 MB at 10k nodes). */
  private built: Built | undefined;
  private current = false;
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
    if (!this.current || !this.built) {
      this.built = this.build(this.built);
      this.stale.clear();
      this.unprepared.clear();
      this.prepared.clear();
      this.current = true;
    }
    return this.built.body;
  }

  /** Changed nodes the background has not serialized yet (tests wait for 0). */
  pending(): number {
    return this.unprepared.size;
  }

  /** Stops following the store; the next read starts over. */
  reset(): void {
    this.stopWatch?.();
    this.stopWatch = undefined;
    this.started = undefined;
    this.nodes.clear();
    this.diskNode.clear();
    this.disksOfNode.clear();
    this.stale.clear();
    this.unprepared.clear();
    this.prepared.clear();
    this.epoch++;
    this.refreshing = false;
    this.order = undefined;
    this.built = undefined;
    this.current = false;
  }

  // Started on the first read, not at construction, so an app that never serves the route never
  // watches. Lists are taken before the watch starts, from their revision: the watch replays
  // every later change in order, so the projection ends where the store is.
  private async start(): Promise<void> {
    const rev = this.store.revision();
    const [nodes, disks] = await Promise.all([this.store.list<never, never>(Kind.Node), this.store.list<never, never>(Kind.Disk)]);
    for (const n of nodes) this.putNode(n);
    for (const d of disks) this.putDisk(d);
    this.stopWatch = this.store.watch(rev, (e) => this.onEvent(e));
  }

  private onEvent(e: StoreEvent): void {
    // Too far behind for the store's history: drop everything and list again on the next read.
    if (e.type === 'relist') {
      this.reset();
      return;
    }
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
    this.changed(n.id);
  }

  private dropNode(id: string): void {
    this.nodes.delete(id);
    this.order = undefined;
    this.changed(id);
  }

  private putDisk(d: DiskDoc): void {
    const nodeId = d.spec.nodeId;
    const c = diskCounts(d);
    const bits = (c.present ? PRESENT : 0) | (c.osd ? OSD : 0);
    const was = this.diskNode.get(d.id);
    // Most disk writes (conditions, the OSD's state) change neither count: nothing to redo.
    if (was === nodeId && this.disksOfNode.get(nodeId)?.get(d.id) === bits) return;
    if (was !== undefined && was !== nodeId) this.dropDisk(d.id);
    this.diskNode.set(d.id, nodeId);
    let disks = this.disksOfNode.get(nodeId);
    if (!disks) this.disksOfNode.set(nodeId, (disks = new Map<string, number>()));
    disks.set(d.id, bits);
    this.changed(nodeId);
  }

  private dropDisk(id: string): void {
    const nodeId = this.diskNode.get(id);
    if (nodeId === undefined) return;
    this.diskNode.delete(id);
    const disks = this.disksOfNode.get(nodeId);
    disks?.delete(id);
    if (disks?.size === 0) this.disksOfNode.delete(nodeId);
    this.changed(nodeId);
  }

  private changed(nodeId: string): void {
    this.stale.add(nodeId);
    this.prepared.delete(nodeId);
    if (this.nodes.has(nodeId)) this.unprepared.add(nodeId);
    else this.unprepared.delete(nodeId);
    this.current = false;
    if (this.refreshing || this.unprepared.size === 0) return;
    this.refreshing = true;
    const epoch = this.epoch;
    setTimeout(() => this.prepare(epoch), SETTLE_MS).unref();
  }

  /** Serializes a slice of the changed nodes, and schedules the next until none is left. */
  private prepare(epoch: number): void {
    if (epoch !== this.epoch) return;
    let n = 0;
    for (const id of this.unprepared) {
      this.unprepared.delete(id);
      this.prepared.set(id, this.detail(id));
      if (++n >= SLICE) break;
    }
    if (this.unprepared.size === 0) this.refreshing = false;
    else setImmediate(() => this.prepare(epoch)).unref();
  }

  /** The answer with every node in key order: bytes of `prev` where a node's detail did not
   * change, a new serialization where it did. Both orders are sorted, so one walk pairs them. */
  private build(prev: Built | undefined): Built {
    const order = (this.order ??= [...this.nodes.keys()].sort());
    const texts = new Array<string | undefined>(order.length);
    const from = new Int32Array(order.length).fill(-1);
    let size = 2 + Math.max(0, order.length - 1);
    for (let i = 0, j = 0; i < order.length; i++) {
      const id = order[i] as string;
      while (prev && j < prev.order.length && (prev.order[j] as string) < id) j++;
      if (prev && prev.order[j] === id && !this.stale.has(id)) {
        from[i] = j;
        size += (prev.ends[j] as number) - (prev.starts[j] as number);
      } else {
        const text = this.prepared.get(id) ?? this.detail(id);
        texts[i] = text;
        size += Buffer.byteLength(text);
      }
    }
    const body = Buffer.allocUnsafeSlow(size);
    const starts = new Uint32Array(order.length);
    const ends = new Uint32Array(order.length);
    let at = body.write('[', 0, 'latin1');
    for (let i = 0; i < order.length; i++) {
      if (i > 0) at += body.write(',', at, 'latin1');
      starts[i] = at;
      const j = from[i] as number;
      const text = texts[i];
      at += prev && j >= 0 ? prev.body.copy(body, at, prev.starts[j], prev.ends[j]) : body.write(text as string, at, 'utf8');
      ends[i] = at;
    }
    body.write(']', at, 'latin1');
    return { body, order, starts, ends };
  }

  private detail(id: string): string {
    let diskCount = 0;
    let osdCount = 0;
    for (const bits of this.disksOfNode.get(id)?.values() ?? []) {
      if (bits & PRESENT) diskCount++;
      if (bits & PRESENT && bits & OSD) osdCount++;
    }
    return JSON.stringify(nodeDetailOf(this.nodes.get(id) as NodeDoc, diskCount, osdCount));
  }
}
