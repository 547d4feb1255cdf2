// Keeps the import direction of docs/architecture.md ("Areas and who may import whom") true: a
// forbidden edge or a cycle fails here before it spreads.
import test from 'ava';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Which areas each area may import from. `main` (src/main.ts and src/main/, the composition
 * root) may import anything, and nothing outside it may import it. */
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
  // Routes, auth, validation, problem mapping, SSE, OpenAPI: HTTP translated to service calls.
  http: ['errors', 'model', 'store', 'tasks', 'fleet', 'gitops', 'config', 'log', 'services'],
  // Domain services: plain inputs, plain values or the errors of src/errors.ts; no koa.
  services: ['errors', 'model', 'store', 'fleet', 'gitops', 'render', 'config'],
};

/** Areas that may reach only these files of another area (its public face, not its internals). */
const onlyFiles: Record<string, Record<string, string[]>> = {
  http: { store: ['src/store/types.ts', 'src/store/secret-box.ts'] },
  services: { store: ['src/store/types.ts'] },
};

/** Files under src/http/routes/ are leaves: only the app and the one router file mount them. */
const ROUTES_DIR = 'src/http/routes/';
const routeImporters = ['src/http/app.ts', 'src/http/router.ts'];

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
  const rel = (file.startsWith('/') ? relative(root, file) : file).split('/');
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

/** A file (repo-relative) and the specifiers it imports: the checkers below read only this, so
 * a fabricated graph shows each rule can fail. */
interface Node {
  file: string;
  specs: string[];
}

const graphOf = (list: string[]): Node[] => list.map((f) => ({ file: relative(root, f), specs: imports(f) }));

/** The repo-relative .ts file a relative specifier names. */
const target = (file: string, spec: string): string => join(dirname(file), spec).replace(/\.js$/, '.ts');

/** Edges against the area table, the one-home packages and the narrow reaches of `onlyFiles`. */
function directionProblems(graph: Node[]): string[] {
  const bad: string[] = [];
  for (const { file, specs } of graph) {
    const from = areaOf(file);
    for (const spec of specs) {
      if (spec.startsWith('.')) {
        const to = areaOf(target(file, spec));
        if (from !== to && from !== 'main' && !(allowed[from] ?? []).includes(to)) bad.push(`${file} → ${spec} (${from} → ${to})`);
        const only = onlyFiles[from]?.[to];
        if (only && !only.includes(target(file, spec))) bad.push(`${file} → ${spec} (${from} may reach only ${only.join(', ')} of ${to})`);
      } else {
        const pkg = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] ?? '');
        const home = packageHome[pkg];
        if (home && home !== from) bad.push(`${file} imports ${pkg}, which belongs to ${home}`);
      }
    }
  }
  return bad;
}

/** Imports of the composition root from outside it. */
function mainProblems(graph: Node[]): string[] {
  return graph.flatMap(({ file, specs }) =>
    areaOf(file) === 'main' ? [] : specs.filter((s) => s.startsWith('.') && areaOf(target(file, s)) === 'main').map((s) => `${file} → ${s} (only the composition root may import main)`),
  );
}

/** Imports of a route file by anything but the app and the router. */
function routeProblems(graph: Node[]): string[] {
  return graph.flatMap(({ file, specs }) =>
    routeImporters.includes(file) ? [] : specs.filter((s) => s.startsWith('.') && target(file, s).startsWith(ROUTES_DIR)).map((s) => `${file} → ${s} (a route file is mounted only by ${routeImporters.join(' or ')})`),
  );
}

const graph = graphOf(files);

test('architecture: every import follows the allowed direction', (t) => {
  const bad = directionProblems(graph);
  t.deepEqual(bad, []);
});

test('architecture: nothing outside the composition root imports src/main', (t) => {
  t.deepEqual(mainProblems(graph), []);
});

test('architecture: only the app and the router import a route file', (t) => {
  t.deepEqual(routeProblems(graph), []);
});

test('architecture: the direction check reports a service importing runtime, exec, a loop, http or koa', (t) => {
  const fabricated: Node[] = [
    { file: 'src/services/example.ts', specs: ['../runtime/manager.js', '../exec/zx-runner.js', '../../reconcilers/node/loop.js', '../http/route.js', 'koa', '../model/kinds.js'] },
  ];
  t.deepEqual(directionProblems(fabricated), [
    'src/services/example.ts → ../runtime/manager.js (services → runtime)',
    'src/services/example.ts → ../exec/zx-runner.js (services → exec)',
    'src/services/example.ts → ../../reconcilers/node/loop.js (services → reconcilers)',
    'src/services/example.ts → ../http/route.js (services → http)',
    'src/services/example.ts imports koa, which belongs to http',
  ]);
});

test('architecture: the direction check reports http reaching exec, runtime, a loop or store internals', (t) => {
  const fabricated: Node[] = [
    { file: 'src/http/routes/example.ts', specs: ['../../exec/zx-runner.js', '../../runtime/manager.js', '../../../reconcilers/osd/plan.js', '../../store/types.js', '../../services/inventory.js'] },
    { file: 'src/http/example.ts', specs: ['../store/embedded.js', '../render/compile.js'] },
  ];
  t.deepEqual(directionProblems(fabricated), [
    'src/http/routes/example.ts → ../../exec/zx-runner.js (http → exec)',
    'src/http/routes/example.ts → ../../runtime/manager.js (http → runtime)',
    'src/http/routes/example.ts → ../../../reconcilers/osd/plan.js (http → reconcilers)',
    'src/http/example.ts → ../store/embedded.js (http may reach only src/store/types.ts, src/store/secret-box.ts of store)',
    'src/http/example.ts → ../render/compile.js (http → render)',
  ]);
});

test('architecture: the main check reports an import of the composition root from another area', (t) => {
  const fabricated: Node[] = [
    { file: 'src/main.ts', specs: ['./main/ceph.js', './http/router.js'] },
    { file: 'src/main/ceph.ts', specs: ['./areas.js', '../../reconcilers/mon/loop.js'] },
    { file: 'src/services/example.ts', specs: ['../main/ceph.js'] },
    { file: 'reconcilers/node/loop.ts', specs: ['../../src/main.js'] },
  ];
  t.deepEqual(mainProblems(fabricated), [
    'src/services/example.ts → ../main/ceph.js (only the composition root may import main)',
    'reconcilers/node/loop.ts → ../../src/main.js (only the composition root may import main)',
  ]);
});

test('architecture: the route check reports a route file imported by another route, a service or main', (t) => {
  const fabricated: Node[] = [
    { file: 'src/http/app.ts', specs: ['./routes/session.js'] },
    { file: 'src/http/router.ts', specs: ['./routes/nodes.js'] },
    { file: 'src/http/routes/boot.ts', specs: ['./templates.js', '../schemas.js'] },
    { file: 'src/main/areas.ts', specs: ['../http/routes/ceph.js', '../http/router.js'] },
  ];
  t.deepEqual(routeProblems(fabricated), [
    'src/http/routes/boot.ts → ./templates.js (a route file is mounted only by src/http/app.ts or src/http/router.ts)',
    'src/main/areas.ts → ../http/routes/ceph.js (a route file is mounted only by src/http/app.ts or src/http/router.ts)',
  ]);
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
