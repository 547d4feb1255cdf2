// The file-backed LogStore: one JSON-lines file per run under a directory. Appends are
// buffered per run and written in batches; writes of one run are chained so lines keep their
// order, and a read first writes out that run's buffer.
import { appendFile, mkdir, readFile, rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { LogLine } from './types.js';
import { admit, checkRunId, DEFAULT_MAX_LINES, type LogStore, type LogStoreOptions } from './logs.js';

export interface FileLogStoreOptions extends LogStoreOptions {
  dir: string;
  /** Told about a failed write; the lines of that batch are lost. */
  onError?: (err: unknown, runId: string) => void;
}

interface RunLog {
  buffer: LogLine[];
  /** Lines kept in the file; null until counted (a log written before a restart). */
  count: number | null;
  /** A file left with a torn last line: the next write starts on a fresh line. */
  torn: boolean;
  /** The chain of this run's writes. */
  writing: Promise<void>;
  scheduled: boolean;
}

export class FileLogStore implements LogStore {
  private readonly dir: string;
  private readonly max: number;
  private readonly onError: (err: unknown, runId: string) => void;
  private readonly runs = new Map<string, RunLog>();
  private dirReady: Promise<unknown> | null = null;

  constructor(opts: FileLogStoreOptions) {
    this.dir = opts.dir;
    this.max = opts.maxLines ?? DEFAULT_MAX_LINES;
    this.onError = opts.onError ?? ((err, runId) => console.error(`log of run ${runId} not written: ${String(err)}`));
  }

  append(runId: string, line: LogLine): void {
    checkRunId(runId);
    const run = this.run(runId);
    run.buffer.push(line);
    if (run.scheduled) return;
    run.scheduled = true;
    // One write per turn of the event loop gathers a burst of output into one batch.
    setImmediate(() => void this.flushRun(runId));
  }

  async read(runId: string): Promise<LogLine[]> {
    checkRunId(runId);
    if (this.runs.has(runId)) await this.flushRun(runId);
    let text: string;
    try {
      text = await readFile(this.path(runId), 'utf8');
    } catch (err) {
      if (isMissing(err)) return [];
      throw err;
    }
    return parseLines(text);
  }

  /** After the run's pending writes, so a write cannot bring the file back. */
  async remove(runId: string): Promise<void> {
    checkRunId(runId);
    const run = this.runs.get(runId);
    if (run) {
      run.buffer = [];
      await run.writing;
      this.runs.delete(runId);
    }
    await rm(this.path(runId), { force: true });
  }

  async flush(): Promise<void> {
    await Promise.all([...this.runs.keys()].map((id) => this.flushRun(id)));
  }

  async close(): Promise<void> {
    await this.flush();
    this.runs.clear();
  }

  private run(runId: string): RunLog {
    let run = this.runs.get(runId);
    if (!run) {
      run = { buffer: [], count: null, torn: false, writing: Promise.resolve(), scheduled: false };
      this.runs.set(runId, run);
    }
    return run;
  }

  /** Queues a write of what is buffered now and resolves when it is done. */
  private flushRun(runId: string): Promise<void> {
    const run = this.run(runId);
    run.scheduled = false;
    const batch = run.buffer;
    if (batch.length === 0) return run.writing;
    run.buffer = [];
    run.writing = run.writing.then(() => this.write(runId, run, batch)).catch((err: unknown) => this.onError(err, runId));
    return run.writing;
  }

  private async write(runId: string, run: RunLog, batch: LogLine[]): Promise<void> {
    // Run logs are the owner's only, like the rest of STATE_DIR, whatever the umask.
    this.dirReady ??= mkdir(this.dir, { recursive: true, mode: 0o700 });
    await this.dirReady;
    if (run.count === null) await this.countLines(runId, run);
    const { keep, count } = admit(run.count ?? 0, this.max, batch);
    run.count = count;
    if (keep.length === 0) return;
    const text = (run.torn ? '\n' : '') + keep.map((l) => JSON.stringify(l) + '\n').join('');
    run.torn = false;
    await appendFile(this.path(runId), text, { encoding: 'utf8', mode: 0o600 });
  }

  private async countLines(runId: string, run: RunLog): Promise<void> {
    try {
      const text = await readFile(this.path(runId), 'utf8');
      run.count = parseLines(text).length;
      run.torn = text.length > 0 && !text.endsWith('\n');
    } catch (err) {
      if (!isMissing(err)) throw err;
      run.count = 0;
    }
  }

  private path(runId: string): string {
    return join(this.dir, `${runId}.jsonl`);
  }
}

const isMissing = (err: unknown): boolean => (err as NodeJS.ErrnoException | null)?.code === 'ENOENT';

/** A crash can leave a torn last line; it is skipped rather than failing the whole read. */
function parseLines(text: string): LogLine[] {
  const lines: LogLine[] = [];
  for (const raw of text.split('\n')) {
    if (raw.length === 0) continue;
    try {
      const parsed = JSON.parse(raw) as Partial<LogLine>;
      if (typeof parsed.message === 'string' && typeof parsed.timestamp === 'string' && parsed.level) {
        lines.push({ timestamp: parsed.timestamp, level: parsed.level, message: parsed.message });
      }
    } catch {
      // Torn line.
    }
  }
  return lines;
}
