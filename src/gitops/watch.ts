// chokidar over SPECS_DIR: *.yaml and *.yml at any depth, each reported once its writes have
// settled (awaitWriteFinish), so a file caught half-written is read again when complete. A
// removal is reported after a grace period, so a rename (unlink, then add) hands the file's
// objects to the new name instead of pruning and re-creating them.
import { watch, type FSWatcher } from 'chokidar';
import { open } from 'node:fs/promises';
import { basename, relative, sep } from 'node:path';
import type { SpecLimits } from './parse.js';

export interface WatchOptions {
  dir: string;
  limits: SpecLimits;
  /** How long a file's size must hold still before it is read. */
  stableMs?: number;
  onFile(file: string, text: string | null): void;
  onReady(): void;
  onError(err: Error): void;
}

const SPEC = /\.ya?ml$/;

/** Reads at most limit + 1 bytes: a larger file is reported as too large, not read whole. */
async function readCapped(path: string, limit: number): Promise<string> {
  const fh = await open(path, 'r');
  try {
    const buf = Buffer.alloc(limit + 1);
    const { bytesRead } = await fh.read(buf, 0, limit + 1, 0);
    return buf.subarray(0, bytesRead).toString('utf8');
  } finally {
    await fh.close();
  }
}

export function watchSpecs(o: WatchOptions): FSWatcher {
  const stableMs = o.stableMs ?? 300;
  const removals = new Map<string, NodeJS.Timeout>();
  const rel = (path: string): string => relative(o.dir, path).split(sep).join('/');
  const read = (path: string): void => {
    const file = rel(path);
    const timer = removals.get(file);
    if (timer) {
      clearTimeout(timer);
      removals.delete(file);
    }
    readCapped(path, o.limits.maxBytes).then(
      (text) => o.onFile(file, text),
      (err: unknown) => o.onError(err instanceof Error ? err : new Error(String(err))),
    );
  };
  const w = watch(o.dir, {
    ignoreInitial: false,
    followSymlinks: false,
    depth: 16,
    awaitWriteFinish: { stabilityThreshold: stableMs, pollInterval: Math.max(10, Math.floor(stableMs / 5)) },
    // Directories pass; files must be specs, and hidden ones (editor droppings) never are.
    ignored: (path, stats) => (basename(path).startsWith('.') && path !== o.dir ? true : !!stats?.isFile() && !SPEC.test(path)),
  });
  w.on('add', read);
  w.on('change', read);
  w.on('unlink', (path) => {
    const file = rel(path);
    removals.set(
      file,
      setTimeout(
        () => {
          removals.delete(file);
          o.onFile(file, null);
        },
        stableMs * 2 + 200,
      ),
    );
  });
  w.on('ready', () => o.onReady());
  w.on('error', (err) => o.onError(err as Error));
  const close = w.close.bind(w);
  w.close = () => {
    for (const t of removals.values()) clearTimeout(t);
    removals.clear();
    return close();
  };
  return w;
}
