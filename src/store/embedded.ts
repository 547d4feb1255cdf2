// The shared core made durable: a lowdb snapshot plus an append-only journal.
//
// Write path: a write's precondition is checked when it is submitted, in submission order,
// against the newest state including writes still waiting for fdatasync (the `pending`
// overlay), and it gets its revision then; so of two CAS writes on the same modRevision
// exactly one wins. The committed state (what get/list/watch see) changes only after the
// write's journal record is durable, and watchers run before the writer is resolved. Readers
// therefore never see an unacknowledged write, and an acknowledged one survives a crash.
import { mkdir, open } from 'node:fs/promises';
import { NotFoundError } from '../errors.js';
import type { Backend, KeyValue, Precondition, TxnOp, WatchHandler } from './backend.js';
import type { ValueCodec } from './codec.js';
import { checkPrecondition, checkTxn, KvCore, type CoreOptions, type Mutation } from './core.js';
import {
  DIR_MODE,
  FILE_MODE,
  fsyncPath,
  recordPayload,
  listSegments,
  readLastSegment,
  readSealedSegment,
  segmentPath,
  type Segment,
  type TailRepair,
} from './journal.js';
import { JournalWriter, type ActiveSegment } from './journal-writer.js';
import { lockDir } from './lock.js';
import { readSnapshot, removeSegments, writeSnapshot, type SnapshotItem } from './snapshot.js';

export interface EmbeddedOptions<V = unknown> extends CoreOptions {
  /** Rotate and fold the journal once the active segment reaches this size. Default 64 MiB. */
  compactAfterBytes?: number;
  /** ... or this many records. Default: no limit. */
  compactAfterRecords?: number;
  /** Failed compactions and journal writes; the store keeps its previous files meanwhile. */
  onBackgroundError?: (err: unknown) => void;
  /** What values look like on disk (secret fields sealed: codec.ts); identity when absent. */
  codec?: ValueCodec<V>;
}

export interface RecoveryReport {
  snapshotRevision: number;
  /** Journal records applied on top of the snapshot. */
  replayed: number;
  /** Set when an unacknowledged, torn record was cut off the newest segment. */
  tail?: TailRepair;
  /** Values found with plaintext the codec would have encoded (state written before
   * encryption): the store was rewritten encoded, into a new snapshot, at open. */
  reencoded?: number;
}

export class EmbeddedBackend<V = unknown> implements Backend<V> {
  readonly commitsInOrder = true;
  private readonly core: KvCore<V>;
  /** The newest state of keys with writes not yet durable (undefined = pending delete). */
  private readonly pending = new Map<string, { rev: number; kv: KeyValue<V> | undefined }>();
  private writer: JournalWriter | undefined;
  private nextRev = 0;
  private state: 'new' | 'open' | 'closing' | 'closed' = 'new';
  private unlock: (() => Promise<void>) | undefined;
  /** Values that held plaintext the codec would have encoded, seen while loading. */
  private legacy = 0;
  recovery: RecoveryReport = { snapshotRevision: 0, replayed: 0 };

  constructor(
    private readonly dir: string,
    private readonly opts: EmbeddedOptions<V> = {},
  ) {
    this.core = new KvCore<V>(opts);
  }

  async open(): Promise<void> {
    if (this.state !== 'new') throw new Error(`store is ${this.state === 'open' ? 'already open' : 'closed'}`);
    await mkdir(this.dir, { recursive: true, mode: DIR_MODE });
    this.unlock = await lockDir(this.dir);
    try {
      await this.load();
    } catch (err) {
      await this.unlock();
      throw err;
    }
    this.state = 'open';
  }

  private async load(): Promise<void> {
    const snap = await readSnapshot(this.dir);
    for (const [key, item] of Object.entries(snap.items)) {
      this.core.load(
        { key, value: this.decode(key, item.value), createRevision: item.createRevision, modRevision: item.modRevision },
        snap.revision,
      );
    }
    this.core.setRevision(snap.revision);
    this.recovery = { snapshotRevision: snap.revision, replayed: 0 };
    const segments = await listSegments(this.dir);
    const last = segments.pop();
    for (const seg of segments) this.replay(seg.path, await readSealedSegment(seg.path));
    let active = await this.openActive(last);
    if (this.legacy > 0) {
      active = await this.rewriteEncoded(active, segments);
      segments.length = 0;
    }
    this.nextRev = this.core.revision();
    const bg = this.opts.onBackgroundError ?? ((err: unknown) => process.emitWarning(`store background error: ${String(err)}`));
    this.writer = new JournalWriter(this.dir, active, segments, {
      compactAfterBytes: this.opts.compactAfterBytes ?? 64 * 1024 * 1024,
      compactAfterRecords: this.opts.compactAfterRecords ?? Number.POSITIVE_INFINITY,
      onDurable: (batch) => this.commit(batch as Mutation<V>[]),
      onBackgroundError: bg,
    });
  }

  async close(): Promise<void> {
    if (this.state !== 'open') return;
    this.state = 'closing';
    try {
      await this.writer?.close();
    } finally {
      await this.unlock?.();
      this.core.stopAll();
      this.state = 'closed';
    }
  }

  revision(): number {
    return this.core.revision();
  }

  async get(key: string): Promise<KeyValue<V> | undefined> {
    this.readable();
    return this.core.get(key);
  }

  async list(prefix: string): Promise<{ items: KeyValue<V>[]; revision: number }> {
    this.readable();
    return { items: this.core.list(prefix), revision: this.core.revision() };
  }

  async put(key: string, value: V, pre?: Precondition): Promise<number> {
    const writer = this.writable();
    const current = this.newest(key);
    try {
      checkPrecondition(key, current, pre);
    } catch (err) {
      return writer.refuse(err as Error);
    }
    // JSON.stringify returns undefined (its type says string) for undefined, a function, a symbol.
    const valueJson = JSON.stringify(this.opts.codec ? this.opts.codec.encode(key, value) : value) as string | undefined;
    if (valueJson === undefined) throw new TypeError(`${key}: value is not JSON`);
    const rev = ++this.nextRev;
    const m: Mutation<V> = { rev, op: 'put', key, value, createRevision: current?.createRevision ?? rev };
    this.pending.set(key, { rev, kv: { key, value, createRevision: m.createRevision as number, modRevision: rev } });
    return writer.submit(m, recordPayload(m, valueJson));
  }

  async delete(key: string, pre?: Precondition): Promise<number> {
    const writer = this.writable();
    const current = this.newest(key);
    try {
      checkPrecondition(key, current, pre);
      if (!current) throw new NotFoundError(`${key} not found`);
    } catch (err) {
      return writer.refuse(err as Error);
    }
    const m: Mutation<V> = { rev: ++this.nextRev, op: 'del', key };
    this.pending.set(key, { rev: m.rev, kv: undefined });
    return writer.submit(m, recordPayload(m));
  }

  /** All preconditions are checked, and every value encoded, before the first record is
   * submitted; the records then go to the writer in the same tick, so one group commit (one
   * write and fdatasync) carries them all. A crash during that write can keep a prefix of them
   * (a torn tail is cut at a record): only ever for a transaction not yet acknowledged. */
  async txn(ops: TxnOp<V>[]): Promise<number[]> {
    const writer = this.writable();
    let jsons: Array<string | undefined>;
    try {
      checkTxn(ops, (key) => this.newest(key));
      jsons = ops.map((o) => {
        if (o.op !== 'put') return undefined;
        const json = JSON.stringify(this.opts.codec ? this.opts.codec.encode(o.key, o.value) : o.value) as string | undefined;
        if (json === undefined) throw new TypeError(`${o.key}: value is not JSON`);
        return json;
      });
    } catch (err) {
      return writer.refuse(err as Error);
    }
    const revs: number[] = [];
    const durable: Promise<number>[] = [];
    ops.forEach((o, i) => {
      const current = this.newest(o.key);
      if (o.op === 'check' || (o.op === 'del' && !current)) {
        revs.push(0);
        return;
      }
      const rev = ++this.nextRev;
      revs.push(rev);
      if (o.op === 'put') {
        const m: Mutation<V> = { rev, op: 'put', key: o.key, value: o.value, createRevision: current?.createRevision ?? rev };
        this.pending.set(o.key, { rev, kv: { key: o.key, value: o.value, createRevision: m.createRevision as number, modRevision: rev } });
        durable.push(writer.submit(m, recordPayload(m, jsons[i])));
      } else {
        const m: Mutation<V> = { rev, op: 'del', key: o.key };
        this.pending.set(o.key, { rev, kv: undefined });
        durable.push(writer.submit(m, recordPayload(m)));
      }
    });
    await Promise.all(durable);
    return revs;
  }

  watch(fromRevision: number, handler: WatchHandler<V>): () => void {
    this.readable();
    return this.core.watch(fromRevision, handler);
  }

  /** Rotates the journal and waits for the fold into a new snapshot (tests, benchmarks). */
  async compact(): Promise<void> {
    await this.writable().compact();
  }

  stats(): ReturnType<JournalWriter['stats']> {
    if (!this.writer) throw new Error('store is not open');
    return this.writer.stats();
  }

  private commit(batch: Mutation<V>[]): void {
    const events = batch.map((m) => this.core.apply(m));
    for (const m of batch) if (this.pending.get(m.key)?.rev === m.rev) this.pending.delete(m.key);
    this.core.publish(events);
  }

  private newest(key: string): KeyValue<V> | undefined {
    const p = this.pending.get(key);
    return p ? p.kv : this.core.get(key);
  }

  private replay(path: string, records: Mutation[]): void {
    for (const m of records) {
      if (m.rev <= this.recovery.snapshotRevision) continue;
      if (m.op === 'put') m.value = this.decode(m.key, m.value);
      try {
        this.core.apply(m as Mutation<V>);
      } catch (err) {
        throw new Error(`journal ${path} does not follow on from what precedes it (${(err as Error).message}); refusing to open`);
      }
      this.recovery.replayed++;
    }
  }

  private async openActive(last: Segment | undefined): Promise<ActiveSegment> {
    if (!last) {
      const fh = await open(segmentPath(this.dir, 1), 'a', FILE_MODE);
      await fsyncPath(this.dir);
      return { n: 1, fh, bytes: 0, records: 0 };
    }
    const { records, bytes, repair } = await readLastSegment(last.path);
    if (repair) this.recovery.tail = repair;
    this.replay(last.path, records);
    const fh = await open(last.path, 'a', FILE_MODE);
    await fh.chmod(FILE_MODE); // a segment written before modes were set
    return { n: last.n, fh, bytes, records: records.length };
  }

  private decode(key: string, stored: unknown): V {
    const codec = this.opts.codec;
    if (!codec) return stored as V;
    const { value, legacy } = codec.decode(key, stored);
    if (legacy) this.legacy++;
    return value;
  }

  /**
   * State written before its secrets were encoded: writes everything, encoded, into a new
   * snapshot at the current revision, then drops every journal segment (they hold the
   * plaintext) for a fresh active one. Each step leaves files that open to the same state: a
   * crash before the snapshot's rename keeps the old files, and segments left after it hold
   * only revisions the snapshot already has, which replay skips and the next fold removes.
   */
  private async rewriteEncoded(active: ActiveSegment, sealed: Segment[]): Promise<ActiveSegment> {
    const codec = this.opts.codec as ValueCodec<V>;
    const items: Record<string, SnapshotItem> = {};
    for (const kv of this.core.entries())
      items[kv.key] = { value: codec.encode(kv.key, kv.value), createRevision: kv.createRevision, modRevision: kv.modRevision };
    await writeSnapshot(this.dir, { revision: this.core.revision(), items });
    await active.fh.close();
    const n = active.n + 1;
    const fh = await open(segmentPath(this.dir, n), 'a', FILE_MODE);
    await fsyncPath(this.dir);
    await removeSegments([...sealed.map((s) => s.path), segmentPath(this.dir, active.n)]);
    await fsyncPath(this.dir);
    this.recovery.reencoded = this.legacy;
    return { n, fh, bytes: 0, records: 0 };
  }

  private readable(): void {
    if (this.state !== 'open' && this.state !== 'closing') throw new Error(`store is ${this.state === 'new' ? 'not open' : 'closed'}`);
  }

  private writable(): JournalWriter {
    if (this.state !== 'open' || !this.writer) throw new Error(`store is ${this.state === 'new' ? 'not open' : this.state}`);
    return this.writer;
  }
}
