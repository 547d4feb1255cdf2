// The single writer of the active journal segment. Group commit: whatever is queued while a
// write+fdatasync is in flight goes out together in the next one. Rotation happens between
// batches, and sealed segments are folded into the snapshot by a worker in the background.
import type { FileHandle } from 'node:fs/promises';
import { open } from 'node:fs/promises';
import { startFold, type FoldHandle } from './compaction.js';
import type { Mutation } from './core.js';
import { FILE_MODE, frameInto, fsyncPath, recordSize, segmentPath, type Segment } from './journal.js';
import { removeSegments } from './snapshot.js';

export interface ActiveSegment {
  n: number;
  fh: FileHandle;
  bytes: number;
  records: number;
}

export interface WriterOptions {
  compactAfterBytes: number;
  compactAfterRecords: number;
  /** Called with each durable batch, in order, before its writers are resolved. */
  onDurable: (batch: Mutation[]) => void;
  onBackgroundError: (err: unknown) => void;
}

/** Batches are framed into one buffer of this size, kept for the store's life, and written in
 * pieces of at most this: a buffer per record and another per batch were ~150 MB of garbage
 * outside the JS heap while 50,000 documents were written, which the allocator kept. */
const WRITE_BUFFER = 256 * 1024;

interface Entry {
  m?: Mutation;
  /** The record's JSON (journal.ts recordPayload). */
  payload?: string;
  /** A refusal held back until everything queued before it is durable. */
  error?: Error;
  resolve: (rev: number) => void;
  reject: (err: unknown) => void;
}

export class JournalWriter {
  private queue: Entry[] = [];
  private running = false;
  private closing = false;
  private failed: Error | undefined;
  private wantRotate = false;
  private rotateWaiters: { resolve: () => void; reject: (err: unknown) => void }[] = [];
  private idleWaiters: (() => void)[] = [];
  private fold: (FoldHandle & { result: Promise<void> }) | undefined;
  private buffer: Buffer | undefined;
  /** fdatasync calls so far; with group commit far fewer than records. */
  syncs = 0;

  constructor(
    private readonly dir: string,
    private active: ActiveSegment,
    private sealed: Segment[],
    private readonly opts: WriterOptions,
  ) {
    this.afterFold();
  }

  /** Resolves with the record's revision once it is on disk and fdatasync'ed. */
  submit(m: Mutation, payload: string): Promise<number> {
    if (this.failed) return Promise.reject(this.failed);
    if (this.closing) return Promise.reject(new Error('store is closing'));
    return new Promise((resolve, reject) => {
      this.queue.push({ m, payload, resolve, reject });
      this.kick();
    });
  }

  /** Rejects with err only after the writes queued so far are durable, so a caller that saw a
   * conflict and re-reads finds the write it conflicted with. */
  refuse(err: Error): Promise<never> {
    if (!this.running) return Promise.reject(err);
    return new Promise((resolve, reject) => this.queue.push({ error: err, resolve: resolve as () => void, reject }));
  }

  /** Rotates now and waits until every sealed segment is folded into the snapshot. */
  async compact(): Promise<void> {
    if (this.failed) throw this.failed;
    if (this.closing) throw new Error('store is closing');
    await new Promise<void>((resolve, reject) => {
      this.rotateWaiters.push({ resolve, reject });
      this.wantRotate = true;
      this.kick();
    });
    while (this.fold) await this.fold.result;
  }

  stats(): { syncs: number; activeSegment: number; activeBytes: number; sealedSegments: number; compacting: boolean } {
    const a = this.active;
    return {
      syncs: this.syncs,
      activeSegment: a.n,
      activeBytes: a.bytes,
      sealedSegments: this.sealed.length,
      compacting: this.fold !== undefined,
    };
  }

  async close(): Promise<void> {
    this.closing = true;
    if (this.running) await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
    const fold = this.fold;
    if (fold) {
      await fold.terminate();
      await fold.result.catch(() => undefined);
    }
    await this.active.fh.close();
  }

  private kick(): void {
    if (this.running) return;
    this.running = true;
    // A microtask, so writes submitted in the same tick share the first fdatasync too.
    queueMicrotask(() => void this.loop());
  }

  private async loop(): Promise<void> {
    try {
      while (!this.failed) {
        if (this.queue.length > 0) await this.commit(this.queue.splice(0));
        else if (this.wantRotate) await this.rotate();
        else break;
      }
    } catch (err) {
      this.fail(err, []);
    } finally {
      this.running = false;
      for (const wake of this.idleWaiters.splice(0)) wake();
    }
  }

  private async commit(batch: Entry[]): Promise<void> {
    const writes = batch.filter((e) => e.m !== undefined);
    if (writes.length > 0) {
      try {
        const written = await this.write(writes);
        await this.active.fh.datasync();
        this.syncs++;
        this.active.bytes += written;
        this.active.records += writes.length;
        this.opts.onDurable(writes.map((e) => e.m as Mutation));
      } catch (err) {
        this.fail(err, batch);
        return;
      }
    }
    for (const e of batch) {
      if (e.error) e.reject(e.error);
      else e.resolve((e.m as Mutation).rev);
    }
    if (this.shouldCompact()) this.wantRotate = true;
  }

  /** Frames the batch's records into the write buffer and writes it out each time it is full;
   * a record larger than the buffer gets one of its own. Returns the bytes written. */
  private async write(writes: Entry[]): Promise<number> {
    const buf = (this.buffer ??= Buffer.allocUnsafeSlow(WRITE_BUFFER));
    const fh = this.active.fh;
    let at = 0;
    let written = 0;
    for (const e of writes) {
      const payload = e.payload as string;
      const size = recordSize(payload);
      if (at + size > buf.length && at > 0) {
        await writeAll(fh, buf.subarray(0, at));
        written += at;
        at = 0;
      }
      if (size > buf.length) {
        const own = Buffer.allocUnsafeSlow(size);
        frameInto(own, 0, payload);
        await writeAll(fh, own);
        written += size;
      } else {
        at = frameInto(buf, at, payload);
      }
    }
    if (at > 0) await writeAll(fh, buf.subarray(0, at));
    return written + at;
  }

  /** After a failed write or fdatasync the file's state is unknown (Linux may even drop the
   * dirty pages), so the store refuses every write until it is reopened and replayed. */
  private fail(err: unknown, batch: Entry[]): void {
    this.failed = new Error(`journal write failed, the store refuses writes until reopened: ${String(err)}`, { cause: err });
    for (const e of [...batch, ...this.queue.splice(0)]) e.reject(this.failed);
    for (const w of this.rotateWaiters.splice(0)) w.reject(this.failed);
    this.opts.onBackgroundError(this.failed);
  }

  private shouldCompact(): boolean {
    if (this.fold || this.closing) return false;
    return this.active.bytes >= this.opts.compactAfterBytes || this.active.records >= this.opts.compactAfterRecords;
  }

  private async rotate(): Promise<void> {
    this.wantRotate = false;
    if (this.active.bytes > 0) {
      const n = this.active.n + 1;
      const fh = await open(segmentPath(this.dir, n), 'a', FILE_MODE);
      await fsyncPath(this.dir);
      await this.active.fh.close();
      this.sealed.push({ n: this.active.n, path: segmentPath(this.dir, this.active.n) });
      this.active = { n, fh, bytes: 0, records: 0 };
    }
    for (const w of this.rotateWaiters.splice(0)) w.resolve();
    this.startFold();
  }

  private startFold(): void {
    if (this.fold || this.closing || this.sealed.length === 0) return;
    const segments = [...this.sealed];
    const paths = segments.map((s) => s.path);
    const handle = startFold({ dir: this.dir, segments: paths });
    const result = (async () => {
      try {
        await handle.done;
        await removeSegments(paths);
        this.sealed = this.sealed.filter((s) => !segments.includes(s));
      } finally {
        this.fold = undefined;
      }
      this.afterFold();
    })();
    this.fold = { ...handle, result };
    result.catch((err: unknown) => {
      if (!this.closing) this.opts.onBackgroundError(err);
    });
  }

  /** Segments sealed while a fold ran, or a journal that grew past the threshold meanwhile,
   * get the next round. */
  private afterFold(): void {
    if (this.closing || this.failed) return;
    this.startFold();
    if (this.shouldCompact()) {
      this.wantRotate = true;
      this.kick();
    }
  }
}

async function writeAll(fh: FileHandle, buf: Buffer): Promise<void> {
  let off = 0;
  while (off < buf.length) off += (await fh.write(buf, off, buf.length - off, null)).bytesWritten;
}
