// The master-level scripts of the image loop. A download is an in-process script (Node's
// fetch streaming to disk, no command to run), and still a task run: it has a log, a deadline,
// can be canceled (its signal aborts the transfer) and is retried by the loop like any step.
import { rm } from 'node:fs/promises';
import type { Clock } from '../../src/model/clock.js';
import type { Doc } from '../../src/model/document.js';
import { imageDir, imageFilePath, partPath } from '../../src/model/image-files.js';
import type { ImageSpec, ImageStatus } from '../../src/model/image-kinds.js';
import { downloadFile, IntegrityError } from '../../src/clients/download.js';
import type { EventBus } from '../../src/tasks/bus.js';
import type { RunContext, Script } from '../../src/tasks/types.js';

export interface DownloadDeps {
  bus: EventBus;
  clock: Clock;
  stateDir: string;
  /** Progress events are at most this often (plus the final one). */
  progressEveryMs: number;
  /** No byte for this long fails the attempt; the part is kept for the next one. */
  stallMs: number;
}

/** image.download.progress, a few per second at most: the first, then one per interval, then done. */
export class Progress {
  private last = Number.NEGATIVE_INFINITY;
  constructor(
    private readonly deps: DownloadDeps,
    private readonly imageId: string,
    private readonly total: number,
    private readonly name?: string,
  ) {}

  report(bytes: number, done = false): void {
    const now = this.deps.clock.now();
    if (!done && now - this.last < this.deps.progressEveryMs) return;
    this.last = now;
    const percent = this.total === 0 ? 100 : Math.floor((bytes / this.total) * 1000) / 10;
    const named = this.name === undefined ? {} : { name: this.name };
    this.deps.bus.publish('image.download.progress', { imageId: this.imageId, bytes, total: this.total, percent, done, ...named });
  }
}

export function downloadScript(deps: DownloadDeps, image: Doc<ImageSpec, ImageStatus>): Script {
  const { id, spec } = image;
  return async (ctx: RunContext) => {
    const total = spec.files.reduce((sum, f) => sum + f.size, 0);
    const progress = new Progress(deps, id, total, image.name);
    let before = 0;
    let resumed = 0;
    try {
      for (const f of spec.files) {
        const outcome = await downloadFile({
          url: f.url,
          size: f.size,
          sha256: f.sha256,
          finalPath: imageFilePath(deps.stateDir, id, f.name),
          partPath: partPath(deps.stateDir, id, f.name),
          signal: ctx.signal,
          stallMs: deps.stallMs,
          onBytes: (bytes) => progress.report(before + bytes),
          log: (m) => ctx.log('warn', m),
        });
        if (outcome.skipped) ctx.log('info', `${f.name}: already in place`);
        else
          ctx.log(
            'info',
            `${f.name}: ${f.size} bytes, SHA-256 verified${outcome.resumedFrom ? `, resumed from byte ${outcome.resumedFrom}` : ''}`,
          );
        resumed += outcome.resumedFrom;
        before += f.size;
      }
    } catch (err) {
      if (err instanceof IntegrityError) {
        // Bytes that are not the catalog's are not kept, and neither is the rest of the image.
        await rm(imageDir(deps.stateDir, id), { recursive: true, force: true });
        ctx.log('error', `${err.message}; nothing of image ${spec.name} is kept`);
      }
      throw err;
    }
    progress.report(total, true);
    return { files: spec.files.length, bytes: total, resumedBytes: resumed };
  };
}

export function removeScript(stateDir: string, image: Doc<ImageSpec, ImageStatus>): Script {
  return async (ctx: RunContext) => {
    const dir = imageDir(stateDir, image.id);
    await rm(dir, { recursive: true, force: true });
    ctx.log('info', `removed ${dir}`);
  };
}
