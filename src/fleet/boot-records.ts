// Boots answered by any controller reach the leader's memory (#18). Every controller answers
// GET /boot/config, followers too, but only the leader's Fleet feeds the node loop: its boot-loop
// detection and the unapproved nodes' last seen. So each boot request a controller answers is
// written into its node's record (NodeBoots, src/model/boot-kinds.ts), and the leader applies
// the records to its Fleet: all of them at its election, before its loops start, then each one
// written while it leads, through the store's watch.
//
// - Writes go through the unfenced store: answering boots is no loop's work, and a follower
//   must write. One write per node at a time; requests heard meanwhile wait and go in the next
//   (a flood of requests for one MAC makes few writes). Each write reads the record, merges and
//   writes with compare-and-swap, since other controllers write the same record.
// - A record is bounded: the newest MAX_BOOTS_KEPT boots, the last seen, the last address.
// - A failed write is logged and dropped: the machine got its script already, and the next
//   request writes again.
// - Records of deleted nodes are deleted by the leader (fenced), when the node's deletion
//   reaches its watch, when a record arrives for a node no longer stored, and at its election.
import { ConflictError, NotFoundError } from '../errors.js';
import { BootKind } from '../model/boot-kinds.js';
import type { AnyDoc } from '../model/document.js';
import { Kind } from '../model/kinds.js';
import type { Store, StoreEvent } from '../store/types.js';
import { bootRecordReader, heardOne, mergeHeard, toStatus, worthWriting, type HeardBoot, type HeardBoots } from './boot-record.js';
import type { BootListener, Fleet } from './fleet.js';

/** A later last seen alone is written once the stored one is older than this fraction of the
 * unapproved nodes' TTL: the leader may then take a machine that stopped asking for gone up to
 * this much early, and never one that still asks. */
export const SEEN_RENEW_FRACTION = 0.1;

/** Tries of one write against other controllers' writes of the same record. */
const WRITE_ATTEMPTS = 5;

export interface BootRecordsOptions {
  /** The controller's unfenced store. */
  store: Store;
  /** The leader's fenced store: only a leader deletes records. */
  leaderStore: Store;
  fleet: Fleet;
  unapprovedTtlMs: number;
  warn: (message: string, fields: Record<string, unknown>) => void;
}

export class BootRecords implements BootListener {
  /** Per node, what was heard and not yet written. */
  private readonly pending = new Map<string, HeardBoots>();
  private readonly writing = new Map<string, Promise<void>>();
  private readonly read = bootRecordReader();
  private readonly seenRenewMs: number;
  private unwatch: (() => void) | null = null;
  private leading = false;

  constructor(private readonly opts: BootRecordsOptions) {
    this.seenRenewMs = Math.floor(opts.unapprovedTtlMs * SEEN_RENEW_FRACTION);
  }

  /** From the Fleet, inside the boot request: noted here, written after (never awaited). */
  heard(nodeId: string, boot: HeardBoot): void {
    const was = this.pending.get(nodeId);
    this.pending.set(nodeId, was ? mergeHeard(was, heardOne(boot)) : heardOne(boot));
    if (!this.writing.has(nodeId)) this.writing.set(nodeId, this.drain(nodeId));
  }

  /** At the election, before the loops start: every record into the Fleet (records of nodes
   * no longer stored are deleted), then the records written from now on. Answers how many
   * nodes' records were taken. */
  async lead(): Promise<number> {
    this.leading = true;
    // Watched from before the lists: a record written meanwhile is applied twice at worst, which
    // changes nothing the second time.
    this.unwatch = this.opts.store.watch(this.opts.store.revision(), (e) => this.onEvent(e));
    return this.load(false);
  }

  stopLeading(): void {
    this.leading = false;
    this.unwatch?.();
    this.unwatch = null;
  }

  /** Stops leading and waits for the writes under way (the store is closed next). */
  async stop(): Promise<void> {
    this.stopLeading();
    await this.settled();
  }

  /** Resolves once every request heard so far is written (or its write failed). */
  async settled(): Promise<void> {
    while (this.writing.size > 0) await Promise.all([...this.writing.values()]);
  }

  private async drain(nodeId: string): Promise<void> {
    try {
      for (let next = this.take(nodeId); next; next = this.take(nodeId)) {
        await this.write(nodeId, next).catch((err: unknown) =>
          this.opts.warn('recording a boot in the store failed: the leader may not hear of it', { nodeId, error: String(err) }),
        );
      }
    } finally {
      this.writing.delete(nodeId);
    }
  }

  private take(nodeId: string): HeardBoots | undefined {
    const next = this.pending.get(nodeId);
    this.pending.delete(nodeId);
    return next;
  }

  private async write(nodeId: string, heard: HeardBoots): Promise<void> {
    const { store } = this.opts;
    for (let attempt = 1; ; attempt++) {
      const doc = await store.get(BootKind.NodeBoots, nodeId);
      const stored = doc ? this.readOrWarn(doc) : null;
      const next = stored ? mergeHeard(stored, heard) : heard;
      if (!worthWriting(stored, next, this.seenRenewMs)) return;
      try {
        // A record that is not one is replaced whole: its spec may be what is wrong.
        if (doc && !stored) await store.delete(BootKind.NodeBoots, nodeId, { resourceVersion: doc.metadata.resourceVersion });
        const status = toStatus(next);
        if (doc && stored) await store.updateStatus(BootKind.NodeBoots, nodeId, status, { resourceVersion: doc.metadata.resourceVersion });
        else await store.create({ kind: BootKind.NodeBoots, id: nodeId, name: nodeId, spec: { nodeId }, status });
        return;
      } catch (err) {
        const moved = (err instanceof ConflictError && err.code === 'CONFLICT') || err instanceof NotFoundError;
        if (!moved || attempt >= WRITE_ATTEMPTS) throw err;
      }
    }
  }

  /** Every record into the Fleet; `wake`: the loops run already (a relist). */
  private async load(wake: boolean): Promise<number> {
    const { store, fleet } = this.opts;
    // Records first: a node is stored before its first record, so each record listed whose node
    // the later list lacks is of a node gone.
    const records = await store.list(BootKind.NodeBoots);
    const known = new Set((await store.list(Kind.Node)).map((n) => n.id));
    let loaded = 0;
    for (const doc of records) {
      if (!this.leading) break;
      if (!known.has(doc.id)) {
        await this.remove(doc.id);
        continue;
      }
      const heard = this.readOrWarn(doc);
      if (!heard) continue;
      fleet.heardBoots(doc.id, heard, wake);
      loaded++;
    }
    return loaded;
  }

  private onEvent(e: StoreEvent): void {
    if (!this.leading) return;
    if (e.type === 'relist') void this.load(true).catch((err: unknown) => this.failed('reading the boot records again', err));
    else if (e.doc.kind === Kind.Node && e.type === 'deleted') void this.remove(e.doc.id);
    else if (e.doc.kind === BootKind.NodeBoots && e.type !== 'deleted') void this.apply(e.doc);
  }

  private async apply(doc: AnyDoc): Promise<void> {
    const heard = this.readOrWarn(doc);
    if (!heard) return;
    let stored: boolean;
    try {
      stored = (await this.opts.store.get(Kind.Node, doc.id)) !== undefined;
    } catch (err) {
      this.failed('reading the node of a boot record', err, doc.id);
      return;
    }
    // A follower's write that landed after the node went (answered as the loop forgot it).
    if (!stored) await this.remove(doc.id);
    else if (this.leading) this.opts.fleet.heardBoots(doc.id, heard);
  }

  private async remove(nodeId: string): Promise<void> {
    if (!this.leading) return;
    await this.opts.leaderStore.delete(BootKind.NodeBoots, nodeId).catch((err: unknown) => {
      if (!(err instanceof NotFoundError)) this.failed('deleting the boot record of a node gone', err, nodeId);
    });
  }

  private readOrWarn(doc: AnyDoc): HeardBoots | null {
    const r = this.read(doc);
    if ('heard' in r) return r.heard;
    this.opts.warn('a boot record that is not one is ignored', { nodeId: doc.id, why: r.invalid });
    return null;
  }

  private failed(what: string, err: unknown, nodeId?: string): void {
    this.opts.warn(`${what} failed`, { ...(nodeId ? { nodeId } : {}), error: String(err) });
  }
}
