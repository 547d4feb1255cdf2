// Keeps the import direction of docs/architecture.md ("Areas and who may import whom") true: a
// forbidden edge or a cycle fails here before it spreads.
import test from 'ava';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { DAEMON_TYPES, NODE_OPERATIONS, DISK_OPERATIONS, STEP_NAMES } from '../src/catalogue/index.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Which areas each area may import from. `main` (src/main.ts and src/main/, the composition
 * root) may import anything, and nothing outside it may import it. */
const allowed: Record<string, string[]> = {
  errors: [],
  log: [],
  // The catalogue of daemons and steps (docs/catalogue.md): below everything that names one.
  catalogue: ['errors'],
  model: ['errors', 'catalogue'],
  config: ['errors', 'log'],
  store: ['errors', 'model', 'config', 'log'],
  exec: ['errors'],
  tasks: ['errors', 'catalogue', 'model', 'store', 'exec'],
  fleet: ['errors', 'catalogue', 'model', 'store', 'tasks'],
  gitops: ['errors', 'catalogue', 'model', 'store'],
  runtime: ['errors', 'model', 'store', 'tasks'],
  clients: ['errors', 'catalogue', 'model', 'exec'],
  render: ['errors', 'model'],
  reconcilers: ['errors', 'catalogue', 'model', 'store', 'tasks', 'fleet', 'runtime', 'clients', 'render', 'reconcilers'],
  // The lab answers the same typed client calls the real Ceph CLI does.
  sim: ['errors', 'catalogue', 'model', 'fleet', 'tasks', 'clients'],
  agent: ['errors', 'catalogue', 'model', 'fleet', 'tasks', 'exec', 'clients', 'render', 'config', 'log'],
  // Routes, auth, validation, problem mapping, SSE, OpenAPI: HTTP translated to service calls.
  http: ['errors', 'catalogue', 'model', 'store', 'tasks', 'fleet', 'gitops', 'config', 'log', 'services'],
  // Domain services: plain inputs, plain values or the errors of src/errors.ts; no koa.
  services: ['errors', 'catalogue', 'model', 'store', 'fleet', 'gitops', 'render', 'config'],
  // Prometheus metrics (docs/operations.md): counts what the runtime, store and tasks tell it.
  metrics: ['errors', 'model', 'store', 'tasks', 'runtime'],
  // The quarry CLI is a client of the API: of the server's code it reads only the catalogue's
  // operation names; nothing imports it.
  cli: ['catalogue'],
  // The dashboard (browser code, bundled apart): it knows the server only through HTTP.
  ui: [],
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
  etcd3: 'store',
  chokidar: 'gitops',
  zx: 'exec',
  'prom-client': 'metrics',
  pino: 'log',
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
    areaOf(file) === 'main'
      ? []
      : specs
          .filter((s) => s.startsWith('.') && areaOf(target(file, s)) === 'main')
          .map((s) => `${file} → ${s} (only the composition root may import main)`),
  );
}

/** Imports of a route file by anything but the app and the router. */
function routeProblems(graph: Node[]): string[] {
  return graph.flatMap(({ file, specs }) =>
    routeImporters.includes(file)
      ? []
      : specs
          .filter((s) => s.startsWith('.') && target(file, s).startsWith(ROUTES_DIR))
          .map((s) => `${file} → ${s} (a route file is mounted only by ${routeImporters.join(' or ')})`),
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
    {
      file: 'src/services/example.ts',
      specs: [
        '../runtime/manager.js',
        '../exec/zx-runner.js',
        '../../reconcilers/node/loop.js',
        '../http/route.js',
        'koa',
        '../model/kinds.js',
      ],
    },
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
    {
      file: 'src/http/routes/example.ts',
      specs: [
        '../../exec/zx-runner.js',
        '../../runtime/manager.js',
        '../../../reconcilers/osd/plan.js',
        '../../store/types.js',
        '../../services/inventory.js',
      ],
    },
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

// ---- The catalogue is the only place a daemon, step or operation name is spelled ----

/** Every name the catalogue owns: daemon types, step names, operation names. */
const CATALOGUE_NAMES = new Set<string>([...DAEMON_TYPES, ...STEP_NAMES, ...NODE_OPERATIONS, ...DISK_OPERATIONS]);

/** A line carrying this marker (or the line above it) spells a word that only looks like a
 * catalogue name: a Ceph CLI verb (`ceph mon dump`), Ceph's own bootstrap profiles... The
 * marker says why, so a reader can judge. */
const EXEMPT = 'catalogue-exempt:';

/** Files that speak Ceph's own protocol, whose words coincide with daemon types: CLI verbs
 * (`ceph osd tree`), CRUSH bucket types, auth profiles, the status JSON's service keys. They
 * may spell those words; a step or operation name is still refused there. */
const CEPH_WORDS = new Set<string>([
  'src/clients/ceph.ts',
  'src/clients/ceph-crush.ts',
  'src/clients/ceph-map.ts',
  'src/clients/ceph-stop-gates.ts',
  'src/sim/ceph/accounts.ts',
  'src/sim/ceph/commands.ts',
  'src/sim/ceph/crush.ts',
  'src/sim/ceph/model.ts',
  'src/sim/ceph/placement.ts',
  'src/sim/ceph/render-maps.ts',
  'src/sim/ceph/render-status.ts',
  'src/sim/ceph/stop-gates.ts',
]);

/** The text a template literal stands for, with each substitution as a wildcard; null when it
 * has too little text of its own to name anything (`${type}.${id}`). */
function templatePattern(node: ts.TemplateExpression): RegExp | null {
  const parts = [node.head.text, ...node.templateSpans.map((s) => s.literal.text)];
  const text = parts.join('');
  if (text.replace(/[^a-z]/gi, '').length < 3) return null;
  const esc = (x: string): string => x.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${parts.map(esc).join('[a-z0-9-]+')}$`);
}

/** Where a source text spells a catalogue name as a whole string: `file:line 'name'`. */
export function spelledNames(fileName: string, text: string, names: ReadonlySet<string> = CATALOGUE_NAMES): string[] {
  const src = ts.createSourceFile(fileName, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const lines = text.split('\n');
  const out: string[] = [];
  const report = (node: ts.Node, what: string): void => {
    const line = src.getLineAndCharacterOfPosition(node.getStart(src)).line;
    if (lines[line]?.includes(EXEMPT) || lines[line - 1]?.includes(EXEMPT)) return;
    out.push(`${fileName}:${line + 1} ${what}`);
  };
  const visit = (node: ts.Node): void => {
    // Module paths are not names ('./mon.js' is not 'mon' anyway, but be plain about it).
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) return;
    // A type argument naming a step (AgentStepOf<'disk.wipe'>) is checked against the
    // catalogue by the compiler: a misspelt or removed name is a type error already.
    if (ts.isLiteralTypeNode(node) && (ts.isTypeReferenceNode(node.parent) || ts.isExpressionWithTypeArguments(node.parent))) return;
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) {
      if (names.has(node.text)) report(node, `'${node.text}'`);
    } else if (ts.isTemplateExpression(node)) {
      const re = templatePattern(node);
      const hit = re && [...names].find((n) => re.test(n));
      if (hit) report(node, `\`${node.getText(src).slice(1, -1)}\` (${hit})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(src);
  return out;
}

test('architecture: a daemon or step name is spelled only in the catalogue', (t) => {
  const bad: string[] = [];
  for (const file of files) {
    const rel = relative(root, file);
    if (rel.startsWith('src/catalogue/')) continue;
    const names = CEPH_WORDS.has(rel)
      ? new Set([...CATALOGUE_NAMES].filter((n) => !(DAEMON_TYPES as readonly string[]).includes(n)))
      : CATALOGUE_NAMES;
    bad.push(...spelledNames(rel, readFileSync(file, 'utf8'), names));
  }
  t.deepEqual(bad, []);
});

test('architecture: the spelled-name rule reports a step name, a daemon type and a template that builds one', (t) => {
  const text = [
    "const a = 'ceph.mgr.start';",
    'const b = { type: "mds" };',
    'const c = `ceph.${kind}.key`;',
    'const d = spec.daemons.mon; // property access is fine',
    'const e = `mon.${name}`; // an entity, not a name',
    "const f = ['mon', 'dump']; // catalogue-exempt: a Ceph CLI verb",
  ].join('\n');
  t.deepEqual(spelledNames('fabricated.ts', text), [
    "fabricated.ts:1 'ceph.mgr.start'",
    "fabricated.ts:2 'mds'",
    'fabricated.ts:3 `ceph.${kind}.key` (ceph.mgr.key)',
  ]);
});
