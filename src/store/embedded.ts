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
import type { Backend, KeyValue, Precondition, WatchHandler } from './backend.js';
import { checkPrecondition, KvCore, type CoreOptions, type Mutation } from './core.js';
import { fsyncPath, recordPayload, listSegments, readLastSegment, readSealedSegment, segmentPath, type Segment, type TailRepair } from './journal.js';
import { JournalWriter } from './journal-writer.js';
import { lockDir } from './lock.js';
import { readSnapshot } from './snapshot.js';

export interface EmbeddedOptions extends CoreOptions {
  /** Rotate and fold the journal once the active segment reaches this size. Default 64 MiB. */
  compactAfterBytes?: number;
  /** ... or this many records. Default: no limit. */
  compactAfterRecords?: number;
  /** Failed compactions and journal writes; the store keeps its previous files meanwhile. */
  onBackgroundError?: (err: unknown) => void;
}

export interface RecoveryReport {
  snapshotRevision: number;
  /** Journal records applied on top of the snapshot. */
  replayed: number;
  /** Set when an unacknowledged, torn record was cut off the newest segment. */
  tail?: TailRepair;
}

export class EmbeddedBackend<V = unknown> implements Backend<V> {
  private readonly core: KvCore<V>;
  /** The newest state of keys with writes not yet durable (undefined = pending delete). */
  private readonly pending = new Map<string, { rev: number; kv: KeyValue<V> | undefined }>();
  private writer: JournalWriter | undefined;
  private nextRev = 0;
  private state: 'new' | 'open' | 'closing' | 'closed' = 'new';
  private unlock: (() => Promise<void>) | undefined;
  recovery: RecoveryReport = { snapshotRevision: 0, replayed: 0 };

  constructor(
    private readonly dir: string,
    private readonly opts: EmbeddedOptions = {},
  ) {
    this.core = new KvCore<V>(opts);
  }

  async open(): Promise<void> {
    if (this.state !== 'new') throw new Error(`store is ${this.state === 'open' ? 'already open' : 'closed'}`);
    await mkdir(this.dir, { recursive: true });
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
      this.core.load({ key, value: item.value as V, createRevision: item.createRevision, modRevision: item.modRevision }, snap.revision);
    }
    this.core.setRevision(snap.revision);
    this.recovery = { snapshotRevision: snap.revision, replayed: 0 };
    const segments = await listSegments(this.dir);
    const last = segments.pop();
    for (const seg of segments) this.replay(seg.path, await readSealedSegment(seg.path));
    const active = await this.openActive(last);
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
    const valueJson = JSON.stringify(value);
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
      try {
        this.core.apply(m as Mutation<V>);
      } catch (err) {
        throw new Error(`journal ${path} does not follow on from what precedes it (${(err as Error).message}); refusing to open`);
      }
      this.recovery.replayed++;
    }
  }

  private async openActive(last: Segment | undefined): Promise<{ n: number; fh: Awaited<ReturnType<typeof open>>; bytes: number; records: number }> {
    if (!last) {
      const fh = await open(segmentPath(this.dir, 1), 'a');
      await fsyncPath(this.dir);
      return { n: 1, fh, bytes: 0, records: 0 };
    }
    const { records, bytes, repair } = await readLastSegment(last.path);
    if (repair) this.recovery.tail = repair;
    this.replay(last.path, records);
    return { n: last.n, fh: await open(last.path, 'a'), bytes, records: records.length };
  }

  private readable(): void {
    if (this.state !== 'open' && this.state !== 'closing') throw new Error(`store is ${this.state === 'new' ? 'not open' : 'closed'}`);
  }

  private writable(): JournalWriter {
    if (this.state !== 'open' || !this.writer) throw new Error(`store is ${this.state === 'new' ? 'not open' : this.state}`);
    return this.writer;
  }
}
