// Which modules a start loads: DRIVER=real must not load the lab (src/sim), which main.ts brings
// in with a dynamic import only for DRIVER=lab. Each start runs `node dist/src/main.js` in a
// child process whose module loader records every module it loads (a `load` hook registered
// with module.register), then is stopped with SIGTERM once it logs "quarry started".
import test from 'ava';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const mainJs = fileURLToPath(new URL('../../src/main.js', import.meta.url));
const simDir = new URL('../../src/sim/', import.meta.url).href;
const labJs = new URL('../../src/sim/lab.js', import.meta.url).href;

// Runs in the loader's hooks thread: appends the URL of each module loaded to the log file.
const hooks = `import { appendFileSync } from 'node:fs';
let log;
export function initialize(data) { log = data.log; }
export async function load(url, context, next) { appendFileSync(log, url + '\\n'); return next(url, context); }
`;
const register = `import { register } from 'node:module';
register(new URL('./hooks.mjs', import.meta.url), { data: { log: process.env.QUARRY_TEST_MODULE_LOG } });
`;

/** Starts Quarry with this driver, stops it once started, and returns the modules it loaded. */
async function loadedModules(t: { teardown(fn: () => unknown): void }, driver: 'real' | 'lab'): Promise<string[]> {
  const dir = await mkdtemp(join(tmpdir(), 'quarry-driver-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  await writeFile(join(dir, 'hooks.mjs'), hooks);
  await writeFile(join(dir, 'register.mjs'), register);
  const log = join(dir, 'modules.log');
  await writeFile(log, '');
  const env = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    DRIVER: driver,
    STATE_DIR: join(dir, 'state'),
    SPECS_DIR: join(dir, 'specs'),
    PORT: '0',
    HOST: '127.0.0.1',
    LAB_NODES: '0',
    ADMIN_PASSWORD: 'driver-imports-password',
    SECRETS_KEY: randomBytes(32).toString('base64'),
    QUARRY_TEST_MODULE_LOG: log,
  };
  const child = spawn(process.execPath, ['--import', join(dir, 'register.mjs'), mainJs], { env, stdio: ['ignore', 'ignore', 'pipe'] });
  const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => resolve(String(code ?? signal))));
  t.teardown(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  const started = await new Promise<boolean>((resolve) => {
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk;
      if (stderr.includes('"quarry started"')) resolve(true);
    });
    void exited.then(() => resolve(false));
  });
  if (!started) throw new Error(`quarry (DRIVER=${driver}) exited before it started: ${stderr}`);
  child.kill('SIGTERM');
  const code = await exited;
  // main() installs its handlers before it starts Quarry: SIGTERM is a clean stop, exit 0.
  if (code !== '0') throw new Error(`quarry (DRIVER=${driver}) stopped with ${code}: ${stderr}`);
  return (await readFile(log, 'utf8')).split('\n').filter(Boolean);
}

test('driver real start loads no module of the lab', async (t) => {
  const modules = await loadedModules(t, 'real');
  t.true(
    modules.some((u) => u.endsWith('/dist/src/main.js')),
    'the hook saw the start',
  );
  t.deepEqual(
    modules.filter((u) => u.startsWith(simDir)),
    [],
  );
});

test('driver lab start loads the lab', async (t) => {
  const modules = await loadedModules(t, 'lab');
  t.true(modules.includes(labJs));
});
