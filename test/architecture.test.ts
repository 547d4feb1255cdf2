// Keeps the import direction of docs/architecture.md ("Areas and who may import whom") true: a
// forbidden edge or a cycle fails here before it spreads.
import test from 'ava';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Which areas each area may import from. `main` may import anything. */
const allowed: Record<string, string[]> = {
  errors: [],
  log: [],
  model: ['errors'],
  config: ['errors'],
  store: ['errors', 'model', 'config', 'log'],
  exec: ['errors'],
  tasks: ['errors', 'model', 'store', 'exec'],
  fleet: ['errors', 'model', 'store', 'tasks'],
  gitops: ['errors', 'model', 'store'],
  runtime: ['errors', 'model', 'store', 'tasks'],
  clients: ['errors', 'model', 'exec'],
  render: ['errors', 'model'],
  reconcilers: ['errors', 'model', 'store', 'tasks', 'fleet', 'runtime', 'clients', 'render', 'reconcilers'],
  // The lab answers the same typed client calls the real Ceph CLI does.
  sim: ['errors', 'model', 'fleet', 'tasks', 'clients'],
  agent: ['errors', 'model', 'fleet', 'tasks', 'exec', 'clients', 'render', 'config', 'log'],
  http: ['errors', 'model', 'store', 'tasks', 'fleet', 'gitops', 'render', 'config', 'log', 'services'],
  services: ['errors', 'model', 'store', 'fleet', 'gitops', 'render', 'config'],
};

/** Packages that live in exactly one area. */
const packageHome: Record<string, string> = {
  koa: 'http',
  '@koa/router': 'http',
  'koa-body': 'http',
  lowdb: 'store',
  chokidar: 'gitops',
  zx: 'exec',
};

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return sources(p);
    return p.endsWith('.ts') && !p.endsWith('.d.ts') ? [p] : [];
  });
}

function areaOf(file: string): string {
  const rel = relative(root, file).split('/');
  if (rel[0] === 'reconcilers') return 'reconcilers';
  const second = rel[1] ?? '';
  return /\.(ts|js)$/.test(second) ? second.replace(/\.(ts|js)$/, '') : second;
}

const IMPORT = /(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

function imports(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(IMPORT)].map((m) => m[1] ?? m[2] ?? '');
}

const files = [...sources(join(root, 'src')), ...sources(join(root, 'reconcilers'))];

test('architecture: every import follows the allowed direction', (t) => {
  const bad: string[] = [];
  for (const file of files) {
    const from = areaOf(file);
    for (const spec of imports(file)) {
      if (spec.startsWith('.')) {
        const to = areaOf(resolve(dirname(file), spec));
        if (from !== to && from !== 'main' && !(allowed[from] ?? []).includes(to)) bad.push(`${relative(root, file)} → ${spec} (${from} → ${to})`);
      } else {
        const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] ?? '');
        const home = packageHome[pkg];
        if (home && home !== from) bad.push(`${relative(root, file)} imports ${pkg}, which belongs to ${home}`);
      }
    }
  }
  t.deepEqual(bad, []);
});

test('architecture: every area is known', (t) => {
  const unknown = [...new Set(files.map(areaOf))].filter((a) => a !== 'main' && !(a in allowed));
  t.deepEqual(unknown, []);
});

test('architecture: there is no import cycle between files', (t) => {
  const graph = new Map<string, string[]>();
  for (const file of files) {
    graph.set(
      file,
      imports(file)
        .filter((s) => s.startsWith('.'))
        .map((s) => resolve(dirname(file), s).replace(/\.js$/, '.ts')),
    );
  }
  const state = new Map<string, 'visiting' | 'done'>();
  const cycles: string[] = [];
  const visit = (f: string, path: string[]): void => {
    if (state.get(f) === 'done') return;
    if (state.get(f) === 'visiting') {
      cycles.push([...path.slice(path.indexOf(f)), f].map((p) => relative(root, p)).join(' → '));
      return;
    }
    state.set(f, 'visiting');
    for (const next of graph.get(f) ?? []) visit(next, [...path, f]);
    state.set(f, 'done');
  };
  for (const f of graph.keys()) visit(f, []);
  t.deepEqual(cycles, []);
});

test('architecture: the checker sees imports (it would catch an edge)', (t) => {
  // Guards against a regex that silently matches nothing and passes every time.
  const total = files.reduce((n, f) => n + imports(f).length, 0);
  t.true(files.length > 10);
  t.true(total > files.length);
});
