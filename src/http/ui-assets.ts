// The dashboard's built files (dist/ui, made by scripts/build-ui.ts), read once at start-up and
// served from memory. The set of names is fixed when Quarry starts, so no request path ever
// reaches the file system: a traversal has nothing to traverse.
import { readFile, readdir } from 'node:fs/promises';
import { extname, join } from 'node:path';

export interface UiFile {
  body: Buffer;
  /** Content-Type, with the charset for text. */
  type: string;
  /** Its name carries a hash of its content (esbuild's `[name]-[hash]`): cacheable for ever. */
  hashed: boolean;
}

export interface UiAssets {
  /** index.html, the page of every path of the app; null when the dashboard was not built. */
  index: UiFile | null;
  files: ReadonlyMap<string, UiFile>;
}

export const UI_MEDIA_TYPES: Readonly<Record<string, string>> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
};

/** esbuild's content hash: 8 characters of A–Z and 0–9 before the extension. */
const HASHED = /-[A-Z0-9]{8}\.[a-z]+$/;
/** A file name the route may ask for (one path segment, no dot first). */
export const UI_FILE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export const NO_UI: UiAssets = { index: null, files: new Map() };

/** Every regular file of `dir` with a known media type; an absent folder is an unbuilt dashboard. */
export async function loadUiAssets(dir: string): Promise<UiAssets> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return NO_UI;
    throw err;
  }
  const files = new Map<string, UiFile>();
  for (const e of entries) {
    const type = UI_MEDIA_TYPES[extname(e.name)];
    if (!e.isFile() || !type || !UI_FILE_NAME.test(e.name)) continue;
    files.set(e.name, { body: await readFile(join(dir, e.name)), type, hashed: HASHED.test(e.name) });
  }
  return { index: files.get('index.html') ?? null, files };
}
