// Builds the dashboard (src/ui) into dist/ui: one hashed script and one hashed stylesheet,
// bundled by esbuild with Preact, and an index.html that names them. No CDN, no inline script:
// the page works under the Content-Security-Policy src/http/routes/ui.ts sends. The sources are
// type-checked before (tsc -p src/ui/tsconfig.json, in `npm run build`).
import { build } from 'esbuild';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';

const OUT = join('dist', 'ui');

const page = (script: string, style: string): string =>
  [
    '<!doctype html>',
    '<html lang="en">',
    '<head>',
    '<meta charset="utf-8">',
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    '<title>Quarry</title>',
    // No icon to fetch: the browser would otherwise ask for /favicon.ico, outside /ui.
    '<link rel="icon" href="data:,">',
    `<link rel="stylesheet" href="/ui/${style}">`,
    `<script type="module" src="/ui/${script}"></script>`,
    '</head>',
    '<body><div id="app"><p>Loading Quarry…</p></div></body>',
    '</html>',
    '',
  ].join('\n');

async function main(): Promise<void> {
  await rm(OUT, { recursive: true, force: true });
  await mkdir(OUT, { recursive: true });
  const result = await build({
    entryPoints: { app: 'src/ui/main.tsx', style: 'src/ui/style.css' },
    outdir: OUT,
    entryNames: '[name]-[hash]',
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    metafile: true,
    logLevel: 'warning',
  });
  const outputs = Object.keys(result.metafile.outputs).map((p) => basename(p));
  const script = outputs.find((f) => f.startsWith('app-') && f.endsWith('.js'));
  const style = outputs.find((f) => f.startsWith('style-') && f.endsWith('.css'));
  if (!script || !style) throw new Error(`esbuild made ${outputs.join(', ')}: no app script or stylesheet`);
  await writeFile(join(OUT, 'index.html'), page(script, style));
}

main().catch((err: unknown) => {
  process.stderr.write(`build-ui: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
