// Run logs. Best effort by design: lines are buffered and written without fsync, because a
// lost tail after a crash costs less than an fsync per line of `ceph-volume` output. A read
// still sees every line appended before it. Each run's log is bounded: a runaway command must
// not fill the disk of the controller.
import { InputError } from '../errors.js';
import type { LogLine } from './types.js';

export interface LogStore {
  /** Buffers the line; never throws for I/O (logs are best effort). */
  append(runId: string, line: LogLine): void;
  /** Every line appended so far, oldest first; [] for a run without a log. */
  read(runId: string): Promise<LogLine[]>;
  /** Deletes a run's log (retention); a run without one is fine. */
  remove(runId: string): Promise<void>;
  /** Resolves once every buffered line is written. */
  flush(): Promise<void>;
  close(): Promise<void>;
}

export const DEFAULT_MAX_LINES = 10_000;

export interface LogStoreOptions {
  /** Lines kept per run; what comes after is dropped, noted by one final line. */
  maxLines?: number;
}

/** Applies the per-run bound: `count` lines are already kept (max + 1 once truncated). */
export function admit(count: number, max: number, lines: LogLine[]): { keep: LogLine[]; count: number } {
  const keep: LogLine[] = [];
  for (const line of lines) {
    if (count < max) {
      keep.push(line);
      count += 1;
    } else if (count === max) {
      keep.push({
        timestamp: line.timestamp,
        level: 'warn',
        message: `log truncated: more than ${max} lines, the rest was dropped`,
      });
      count += 1;
    }
  }
  return { keep, count };
}

/** Run ids become file names; anything that could leave the log directory is refused. */
export function checkRunId(runId: string): void {
  if (!/^[A-Za-z0-9_-][A-Za-z0-9._-]*$/.test(runId)) {
    throw new InputError(`invalid run id for a log: ${JSON.stringify(runId)}`, [{ path: '/runId', message: 'invalid' }]);
  }
}

/** Keeps logs in memory: for tests and the lab. */
export class MemoryLogStore implements LogStore {
  private readonly runs = new Map<string, { lines: LogLine[]; count: number }>();
  private readonly max: number;

  constructor(opts: LogStoreOptions = {}) {
    this.max = opts.maxLines ?? DEFAULT_MAX_LINES;
  }

  append(runId: string, line: LogLine): void {
    checkRunId(runId);
    const run = this.runs.get(runId) ?? { lines: [], count: 0 };
    this.runs.set(runId, run);
    const { keep, count } = admit(run.count, this.max, [line]);
    run.lines.push(...keep);
    run.count = count;
  }

  async read(runId: string): Promise<LogLine[]> {
    checkRunId(runId);
    return [...(this.runs.get(runId)?.lines ?? [])];
  }

  remove(runId: string): Promise<void> {
    checkRunId(runId);
    this.runs.delete(runId);
    return Promise.resolve();
  }

  flush(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
