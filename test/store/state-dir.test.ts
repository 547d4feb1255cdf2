// Start-up checks of secrets at rest: STATE_DIR's mode, the secrets key's file, and a start with
// the wrong key, each refused with one clear line.
import test from 'ava';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/config.js';
import { silentLogger } from '../../src/log.js';
import { loadSecretBox } from '../../src/store/secrets-key.js';
import { prepareStateDir, StateDirError } from '../../src/store/state-dir.js';
import { startQuarry } from '../../src/main.js';
import { SecretKeyError } from '../../src/store/secret-box.js';

const mode = async (p: string): Promise<number> => (await stat(p)).mode & 0o777;

async function root(t: { teardown(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'quarry-start-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const config = (dir: string, env: Record<string, string> = {}) =>
  loadConfig({
    STATE_DIR: join(dir, 'state'),
    SPECS_DIR: join(dir, 'specs'),
    LAB_NODES: '0',
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_PASSWORD: 'start-admin-password',
    ...env,
  });

test('state dir a missing STATE_DIR is created 0700', async (t) => {
  const dir = join(await root(t), 'a', 'state');
  t.is(await prepareStateDir(dir, silentLogger), 0);
  t.is(await mode(dir), 0o700);
});

test('state dir open to group or others is refused naming the path, its mode and the fix', async (t) => {
  const dir = join(await root(t), 'state');
  await mkdir(dir);
  await chmod(dir, 0o755);
  const err = await t.throwsAsync(prepareStateDir(dir, silentLogger), { instanceOf: StateDirError });
  t.is(err.message, `STATE_DIR ${dir} is mode 0755: other users could read Quarry's store, keys and logs. Run: chmod 700 ${dir}`);
  await chmod(dir, 0o770);
  await t.throwsAsync(prepareStateDir(dir, silentLogger), { message: /is mode 0770.*chmod 700/ });
  t.is(await mode(dir), 0o770, "refused, not changed behind the operator's back");
});

test("state dir a fresh checkout's state/ (only its README) is made private at first start", async (t) => {
  const dir = join(await root(t), 'state');
  await mkdir(dir);
  await writeFile(join(dir, 'README.md'), '# Runtime state\n');
  await chmod(dir, 0o755);
  await chmod(join(dir, 'README.md'), 0o644);
  const logged: string[] = [];
  await prepareStateDir(dir, (level, message) => logged.push(`${level} ${message}`));
  t.is(await mode(dir), 0o700);
  t.is(await mode(join(dir, 'README.md')), 0o600);
  t.deepEqual(logged, ['info made the new STATE_DIR private (0700)']);
  // Anything beyond the README is state of some kind: refused as any open STATE_DIR.
  await chmod(dir, 0o755);
  await writeFile(join(dir, 'journal.1.log'), 'x');
  await t.throwsAsync(prepareStateDir(dir, silentLogger), { instanceOf: StateDirError });
});

test('state dir entries left open inside a private STATE_DIR are tightened at start', async (t) => {
  const dir = join(await root(t), 'state');
  await mkdir(join(dir, 'store'), { recursive: true, mode: 0o755 });
  await chmod(dir, 0o700);
  await chmod(join(dir, 'store'), 0o755);
  await writeFile(join(dir, 'store', 'journal.1.log'), 'x', { mode: 0o644 });
  await chmod(join(dir, 'store', 'journal.1.log'), 0o644);
  const warned: string[] = [];
  t.is(await prepareStateDir(dir, (level, message) => warned.push(`${level} ${message}`)), 2);
  t.is(await mode(join(dir, 'store')), 0o700);
  t.is(await mode(join(dir, 'store', 'journal.1.log')), 0o600);
  t.deepEqual(warned, ['warn took group and other rights off files in STATE_DIR']);
});

test('state dir quarry refuses to start on an open STATE_DIR, before writing anything', async (t) => {
  const dir = await root(t);
  await mkdir(join(dir, 'state'), { mode: 0o755 });
  await chmod(join(dir, 'state'), 0o755);
  await t.throwsAsync(startQuarry({ config: config(dir), log: silentLogger, print: () => {} }), {
    instanceOf: StateDirError,
    message: /chmod 700/,
  });
  await t.throwsAsync(stat(`${join(dir, 'state')}.key`), { code: 'ENOENT' });
});

test('secrets key file is made 0600 next to STATE_DIR on first start, then reused', async (t) => {
  const dir = await root(t);
  const c = config(dir);
  t.is(c.secretsKeyFile, `${join(dir, 'state')}.key`);
  const first = await loadSecretBox(c, silentLogger);
  t.is(await mode(c.secretsKeyFile), 0o600);
  t.is(Buffer.from((await readFile(c.secretsKeyFile, 'utf8')).trim(), 'base64').length, 32);
  t.is((await loadSecretBox(c, silentLogger)).keyId, first.keyId);
  const both = await Promise.all(
    [1, 2, 3].map(() => loadSecretBox(config(dir, { SECRETS_KEY_FILE: join(dir, 'other', 'k') }), silentLogger)),
  );
  t.is(new Set(both.map((b) => b.keyId)).size, 1, 'processes starting at once agree on one key');
});

test('secrets key file readable by group or others is refused with the fix', async (t) => {
  const dir = await root(t);
  const c = config(dir);
  await loadSecretBox(c, silentLogger);
  await chmod(c.secretsKeyFile, 0o640);
  const err = await t.throwsAsync(loadSecretBox(c, silentLogger), { instanceOf: SecretKeyError });
  t.is(
    err.message,
    `SECRETS_KEY_FILE ${c.secretsKeyFile} is mode 0640: group or others can read the key that encrypts Quarry's secrets. Run: chmod 600 ${c.secretsKeyFile}`,
  );
  await t.throwsAsync(startQuarry({ config: c, log: silentLogger, print: () => {} }), { instanceOf: SecretKeyError, message: /chmod 600/ });
});

test('secrets key kept inside STATE_DIR, or malformed, is refused', async (t) => {
  const dir = await root(t);
  await t.throwsAsync(loadSecretBox(config(dir, { SECRETS_KEY_FILE: join(dir, 'state', 'master.key') }), silentLogger), {
    instanceOf: SecretKeyError,
    message: /is inside STATE_DIR .*kept apart/,
  });
  await t.throwsAsync(loadSecretBox(config(dir, { SECRETS_KEY: randomBytes(31).toString('base64') }), silentLogger), {
    message: 'SECRETS_KEY must hold 32 bytes in base64, found 31 bytes',
  });
  await writeFile(join(dir, 'bad.key'), 'hello world\n', { mode: 0o600 });
  await t.throwsAsync(loadSecretBox(config(dir, { SECRETS_KEY_FILE: join(dir, 'bad.key') }), silentLogger), {
    message: /bad\.key must hold 32 bytes in base64/,
  });
  const env = randomBytes(32).toString('base64');
  t.is((await loadSecretBox(config(dir, { SECRETS_KEY: env }), silentLogger)).source, 'SECRETS_KEY');
});

const mainJs = resolve(dirname(fileURLToPath(import.meta.url)), '../../src/main.js');

test('secrets key quarry started with another key than its state was written with exits with one clear line', async (t) => {
  const dir = await root(t);
  const keyA = randomBytes(32).toString('base64');
  const q = await startQuarry({ config: config(dir, { SECRETS_KEY: keyA }), log: silentLogger, print: () => {} });
  await q.stop();
  const env = {
    PATH: process.env.PATH ?? '',
    STATE_DIR: join(dir, 'state'),
    SPECS_DIR: join(dir, 'specs'),
    LAB_NODES: '0',
    PORT: '0',
    HOST: '127.0.0.1',
    SECRETS_KEY: randomBytes(32).toString('base64'),
  };
  const err = await t.throwsAsync<Error & { code: number; stderr: string }>(
    promisify(execFile)(process.execPath, [mainJs], { env, timeout: 30_000 }),
  );
  t.is(err.code, 1);
  const lines = err.stderr.split('\n').filter((l) => l.startsWith('quarry:'));
  t.is(lines.length, 1, err.stderr);
  t.regex(
    lines[0]!,
    /^quarry: \w+\/\S+#(spec|status)\.\w+ was encrypted with key [0-9a-f]{8}, but SECRETS_KEY is key [0-9a-f]{8}: start Quarry with the key this state was written with$/,
  );
  t.notRegex(err.stderr, /\n\s+at /, 'no stack trace');
  t.false(err.stderr.includes(keyA));
  // The right key still opens it.
  const again = await startQuarry({ config: config(dir, { SECRETS_KEY: keyA }), log: silentLogger, print: () => {} });
  await again.stop();
  t.pass();
});
