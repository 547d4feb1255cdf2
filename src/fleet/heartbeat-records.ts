// The leader's memory of the agents (the Fleet), kept in the store cheaply so that the next
// leader knows at its election which nodes are alive and what they have (#18 part 3). Kubernetes
// moved node heartbeats out of the Node object into small Lease objects for this cost; the same
// here, with the leader writing for every node:
//
// - a heartbeat record (NodeHeartbeat) per node, renewed not on every report but when the one
//   stored is older than RENEW_FRACTION of the heartbeat timeout (the kubelet renews its Lease
//   every quarter of its duration, but there each node writes its own; here one leader writes
//   them all, and a report every 5 s would renew at every report);
// - the agent's last report (NodeInventory), written only when it changed (or its source
//   address did), so a fleet that only heartbeats writes no inventory at all;
// - both in batches: what fell due is written every FLUSH_EVERY_MS in transactions of up to
//   STATUS_BATCH_MAX documents (10,000 nodes at a 5 s period: ~1,000 renewals a second, ~9
//   transactions), through the leader's fenced store, so a deposed leader writes none.
//
// A record lags its node's last report by at most the renewal interval plus a flush, so a node
// that reported just before a failover is still fresh when the new leader loads it.
import { ConflictError, NotFoundError } from '../errors.js';
import type { Clock } from '../model/clock.js';
import type { AnyDoc } from '../model/document.js';
import { FleetKind, type FleetRecordSpec, type NodeHeartbeatStatus, type NodeInventoryStatus } from '../model/fleet-kinds.js';
import { Kind } from '../model/kinds.js';
import { STATUS_BATCH_MAX, type StatusBatchWrite, type Store } from '../store/types.js';
import type { Fleet, FleetListener } from './fleet.js';
import type { AgentReport, Observation } from './types.js';

/** A heartbeat record is renewed once older than this fraction of the heartbeat timeout. Half:
 * a live node's record is then at most half a timeout (plus a flush and the failover) old when a
 * new leader loads it, so it is still fresh; a quarter (Kubernetes') would renew at every 5 s
 * report of a 15 s timeout, and save nothing. */
export const RENEW_FRACTION = 0.5;

/** How often what fell due is written. */
export const FLUSH_EVERY_MS = 1_000;

export interface HeartbeatRecordsOptions {
  /** The leader's (fenced) store. */
  store: Store;
  fleet: Fleet;
  clock: Clock;
  heartbeatTimeoutMs: number;
  /** A flush that failed (it is tried again at the next one). */
  onError?: (err: unknown) => void;
  flushEveryMs?: number;
}

/** A record as last written or loaded, without its status: the document is the next write's
 * base (its resourceVersion the CAS), and an inventory's status is the agent's whole report,
 * which the Fleet holds already (10,000 copies of it were 270,000 objects for every major
 * collection to mark). What decides whether the record is due is kept beside it. */
interface Kept {
  base: AnyDoc;
  /** A heartbeat record's renewTime, epoch ms. */
  renewedAt: number;
  /** An inventory's address. */
  address: string | null;
}

function kept(doc: AnyDoc): Kept {
  const status = (doc.status ?? {}) as Partial<NodeHeartbeatStatus & NodeInventoryStatus>;
  return {
    base: { ...doc, status: null },
    renewedAt: status.renewTime ? Date.parse(status.renewTime) : Number.NEGATIVE_INFINITY,
    address: status.address ?? null,
  };
}

export class HeartbeatRecords implements FleetListener {
  private readonly heartbeats = new Map<string, Kept>();
  private readonly inventories = new Map<string, Kept>();
  /** Nodes whose heartbeat record, or inventory, is due to be written. */
  private readonly dueHeartbeat = new Set<string>();
  private readonly dueInventory = new Set<string>();
  private readonly dueDelete = new Set<string>();
  private readonly renewEveryMs: number;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private writes = 0;

  constructor(private readonly opts: HeartbeatRecordsOptions) {
    this.renewEveryMs = Math.floor(opts.heartbeatTimeoutMs * RENEW_FRACTION);
  }

  /** Documents written since the start (for tests and the bench: writes per report). */
  written(): number {
    return this.writes;
  }

  /** What the Fleet heard: due writes are noted, written at the next flush. */
  reported(nodeId: string, o: Observation, changed: boolean): void {
    if (!this.timer || o.lastReportAt === null) return;
    const renewed = this.heartbeats.get(nodeId)?.renewedAt ?? Number.NEGATIVE_INFINITY;
    if (o.lastReportAt - renewed >= this.renewEveryMs) this.dueHeartbeat.add(nodeId);
    const inv = this.inventories.get(nodeId);
    if (changed || !inv || inv.address !== (o.address ?? null)) this.dueInventory.add(nodeId);
  }

  /** The node is gone (the node loop forgot it): so are its records. */
  forget(nodeId: string): void {
    this.dueHeartbeat.delete(nodeId);
    this.dueInventory.delete(nodeId);
    if (this.heartbeats.has(nodeId) || this.inventories.has(nodeId)) this.dueDelete.add(nodeId);
  }

  /**
   * At the election, before the loops start: the records into the Fleet, so the first reconciles
   * see which nodes were heard from and what they have. Records of nodes no longer stored are
   * deleted. Then writes start. Answers how many nodes were loaded.
   */
  async start(): Promise<number> {
    const { store } = this.opts;
    const [nodes, heartbeats, inventories] = await Promise.all([
      store.list(Kind.Node),
      store.list<FleetRecordSpec, NodeHeartbeatStatus>(FleetKind.NodeHeartbeat),
      store.list<FleetRecordSpec, NodeInventoryStatus>(FleetKind.NodeInventory),
    ]);
    const known = new Set(nodes.map((n) => n.id));
    const reports = new Map(inventories.map((d) => [d.id, d.status] as const));
    for (const d of heartbeats) this.keep(this.heartbeats, d, known);
    for (const d of inventories) this.keep(this.inventories, d, known);
    let loaded = 0;
    for (const [nodeId, hb] of this.heartbeats) {
      if (hb.renewedAt === Number.NEGATIVE_INFINITY) continue;
      const inv = reports.get(nodeId);
      const restored = this.opts.fleet.restore(nodeId, {
        lastReportAt: hb.renewedAt,
        report: (inv?.report as AgentReport | undefined) ?? null,
        address: inv?.address ?? null,
      });
      if (restored) loaded++;
    }
    this.timer = setInterval(() => void this.flush(), this.opts.flushEveryMs ?? FLUSH_EVERY_MS);
    this.timer.unref();
    return loaded;
  }

  /** Stops writing; a last flush of what fell due, when `flush`. */
  async stop(flush = false): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (flush && this.timer) await this.flush();
    this.timer = null;
    await this.flushing;
  }

  /** Writes what fell due; one flush at a time. */
  flush(): Promise<void> {
    return (this.flushing ??= this.flushAll().finally(() => (this.flushing = null)));
  }

  private keep(into: Map<string, Kept>, d: AnyDoc, known: Set<string>): void {
    if (known.has(d.id)) into.set(d.id, kept(d));
    else this.dueDelete.add(d.id);
  }

  private async flushAll(): Promise<void> {
    try {
      for (const id of [...this.dueDelete]) await this.remove(id);
      for (;;) {
        const batch = this.nextBatch();
        if (batch.length === 0) return;
        await this.writeBatch(batch);
      }
    } catch (err) {
      this.opts.onError?.(err);
    }
  }

  /** Up to STATUS_BATCH_MAX due writes, taken off the due sets. */
  private nextBatch(): Array<{ nodeId: string; kind: FleetKind }> {
    const out: Array<{ nodeId: string; kind: FleetKind }> = [];
    for (const [due, kind] of [
      [this.dueHeartbeat, FleetKind.NodeHeartbeat],
      [this.dueInventory, FleetKind.NodeInventory],
    ] as const) {
      for (const nodeId of due) {
        if (out.length >= STATUS_BATCH_MAX) return out;
        due.delete(nodeId);
        out.push({ nodeId, kind });
      }
    }
    return out;
  }

  private async writeBatch(batch: Array<{ nodeId: string; kind: FleetKind }>): Promise<void> {
    const writes: StatusBatchWrite[] = [];
    const taken: typeof batch = [];
    for (const b of batch) {
      const status = this.statusOf(b.nodeId, b.kind);
      if (!status) continue;
      const base = this.records(b.kind).get(b.nodeId)?.base;
      writes.push(base ? { base, status } : { create: { kind: b.kind, id: b.nodeId, name: b.nodeId, spec: { nodeId: b.nodeId }, status } });
      taken.push(b);
    }
    try {
      const docs = await this.opts.store.writeStatuses(writes);
      docs.forEach((d, i) => this.records(taken[i]!.kind).set(d.id, kept(d)));
      this.writes += docs.length;
    } catch (err) {
      // Written again at the next flush, from what the store holds now when one was refused.
      for (const b of taken) (b.kind === FleetKind.NodeHeartbeat ? this.dueHeartbeat : this.dueInventory).add(b.nodeId);
      if (err instanceof ConflictError && err.code === 'CONFLICT') await this.reread(taken);
      throw err;
    }
  }

  /** The record's status from the Fleet's memory now; null when it has nothing to say. */
  private statusOf(nodeId: string, kind: FleetKind): NodeHeartbeatStatus | NodeInventoryStatus | null {
    const o = this.opts.fleet.observe(nodeId);
    if (o.lastReportAt === null) return null;
    if (kind === FleetKind.NodeHeartbeat) return { renewTime: new Date(o.lastReportAt).toISOString() };
    if (!o.report) return null;
    return { report: o.report, address: o.address ?? null, reportedAt: new Date(o.lastReportAt).toISOString() };
  }

  private records(kind: FleetKind): Map<string, Kept> {
    return kind === FleetKind.NodeHeartbeat ? this.heartbeats : this.inventories;
  }

  private async reread(batch: Array<{ nodeId: string; kind: FleetKind }>): Promise<void> {
    for (const b of batch) {
      const doc = await this.opts.store.get(b.kind, b.nodeId);
      if (doc) this.records(b.kind).set(b.nodeId, kept(doc));
      else this.records(b.kind).delete(b.nodeId);
    }
  }

  private async remove(nodeId: string): Promise<void> {
    for (const kind of [FleetKind.NodeHeartbeat, FleetKind.NodeInventory]) {
      await this.opts.store.delete(kind, nodeId).catch((err: unknown) => {
        if (!(err instanceof NotFoundError)) throw err;
      });
      this.records(kind).delete(nodeId);
    }
    this.dueDelete.delete(nodeId);
  }
}
