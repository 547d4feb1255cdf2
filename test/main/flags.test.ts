// The server's command line, as an operator meets it: the built main.js spawned in an empty
// directory with its own STATE_DIR and SPECS_DIR, which must stay empty when it only answers.
import test, { type ExecutionContext } from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseFlags, SETTINGS } from '../../src/main/flags.js';

const MAIN = fileURLToPath(new URL('../../src/main.js', import.meta.url));
const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

interface Outcome {
  code: number | null;
  stdout: string;
  stderr: string;
  /** What the run left in its directory (STATE_DIR and SPECS_DIR are inside it). */
  left: string[];
}

async function run(t: ExecutionContext, args: string[], env: Record<string, string> = {}): Promise<Outcome> {
  const dir = await mkdtemp(join(tmpdir(), 'quarry-flags-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const outcome = await new Promise<Omit<Outcome, 'left'>>((resolve) => {
    const child = execFile(
      process.execPath,
      [MAIN, ...args],
      {
        cwd: dir,
        // PORT 1: a start would fail to listen without root, and a start is what must not happen.
        env: { PATH: process.env.PATH ?? '', STATE_DIR: join(dir, 'state'), SPECS_DIR: join(dir, 'specs'), PORT: '1', ...env },
        timeout: 30_000,
      },
      (_err, stdout, stderr) => resolve({ code: child.exitCode, stdout, stderr }),
    );
  });
  return { ...outcome, left: await readdir(dir) };
}

/** The variables of README's configuration table. */
async function readmeVariables(): Promise<string[]> {
  const readme = await readFile(join(ROOT, 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Configuration'), readme.indexOf('### Secrets at rest'));
  return [...section.matchAll(/^\| (.+?) \|/gm)].flatMap((m) => [...m[1]!.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((v) => v[1]!));
}

test('server flags --help prints the flags and every variable of the configuration table, exits 0 and creates nothing', async (t) => {
  const r = await run(t, ['--help']);
  t.is(r.code, 0, r.stderr);
  t.deepEqual(r.left, []);
  t.regex(r.stdout, /^Usage: /);
  t.regex(r.stdout, /--version/);
  const variables = await readmeVariables();
  t.true(variables.length > 30);
  for (const v of variables) {
    t.true(r.stdout.includes(`${v}:`), `${v} in --help`);
    t.true(r.stdout.includes(`--${v.toLowerCase().replace(/_/g, '-')} `), `--${v} in --help`);
  }
  t.is((await run(t, ['-h'])).code, 0);
});

test("server flags --version prints the package's version and creates nothing", async (t) => {
  const r = await run(t, ['--version']);
  const pkg = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  t.is(r.code, 0, r.stderr);
  t.is(r.stdout, `${pkg.version}\n`);
  t.deepEqual(r.left, []);
});

test('server flags an unknown flag, a stray argument or a flag without its value exits 2 naming it, and creates nothing', async (t) => {
  for (const [args, said] of [
    [['--prot', '9000'], /Unknown option '--prot'/],
    [['serve'], /Unexpected argument 'serve'/],
    [['--help', 'now'], /Unexpected argument 'now'/],
    [['--port'], /--port/],
  ] as const) {
    const r = await run(t, [...args]);
    t.is(r.code, 2, args.join(' '));
    t.regex(r.stderr, said);
    t.regex(r.stderr, /--help/);
    t.is(r.stdout, '');
    t.deepEqual(r.left, [], args.join(' '));
  }
});

test('server flags an invalid LOG_LEVEL is refused at start-up with a clear message, creating nothing', async (t) => {
  for (const args of [[], ['--log-level', 'loud']]) {
    const r = await run(t, args, args.length ? {} : { LOG_LEVEL: 'verbose' });
    t.is(r.code, 1);
    t.regex(r.stderr, /LOG_LEVEL must be one of debug, info, warn, error, got "(verbose|loud)"/);
    t.deepEqual(r.left, []);
  }
});

test('server flags mirror the variables and win over the environment', (t) => {
  const f = parseFlags(['--port', '9000', '--lab-nodes=3', '--log-level', 'debug'], { PORT: '8080', HOST: '::1' });
  t.is(f.exit, undefined);
  t.like(f.env, { PORT: '9000', LAB_NODES: '3', LOG_LEVEL: 'debug', HOST: '::1' });
});

test('server flags cover every variable src/config.ts reads', async (t) => {
  const source = await readFile(join(ROOT, 'src', 'config.ts'), 'utf8');
  const read = new Set([...source.matchAll(/env\.([A-Z][A-Z0-9_]+)|env, '([A-Z][A-Z0-9_]+)'/g)].map((m) => m[1] ?? m[2]!));
  t.true(read.size > 30);
  const known = new Set(SETTINGS.map(([name]) => name));
  t.deepEqual(
    [...read].filter((v) => !known.has(v)),
    [],
  );
});
