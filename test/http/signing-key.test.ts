// The token signing key at rest: sealed with the secrets key, and a plaintext one from before
// encryption sealed on the next start.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadSigningKey, SIGNING_KEY_FILE } from '../../src/http/auth/secret-files.js';
import { silentLogger } from '../../src/log.js';
import { SecretBox, SecretKeyError } from '../../src/store/secret-box.js';

async function tempDir(t: { teardown(fn: () => Promise<void>): void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'quarry-signing-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

test('signing key is kept encrypted with the secrets key and reused across starts', async (t) => {
  const dir = await tempDir(t);
  const key = randomBytes(32);
  const first = await loadSigningKey(dir, silentLogger, new SecretBox(key));
  const text = await readFile(join(dir, SIGNING_KEY_FILE), 'utf8');
  t.regex(text, /^enc:v1:[0-9a-f]{8}:[A-Za-z0-9_-]+\n$/);
  t.false(text.includes(Buffer.from(first).toString('base64url')));
  t.is((await stat(join(dir, SIGNING_KEY_FILE))).mode & 0o777, 0o600);
  t.deepEqual(await loadSigningKey(dir, silentLogger, new SecretBox(key)), first);
  await t.throwsAsync(loadSigningKey(dir, silentLogger, new SecretBox(randomBytes(32))), {
    instanceOf: SecretKeyError,
    message: /file:jwt-hs256\.key was encrypted with key/,
  });
  await t.throwsAsync(loadSigningKey(dir, silentLogger), { message: /is encrypted: start Quarry with its secrets key/ });
});

test('signing key written in plaintext before encryption is sealed on load and keeps its value', async (t) => {
  const dir = await tempDir(t);
  const plain = randomBytes(32).toString('base64url');
  await writeFile(join(dir, SIGNING_KEY_FILE), `${plain}\n`, { mode: 0o600 });
  const box = new SecretBox(randomBytes(32));
  const logged: string[] = [];
  const loaded = await loadSigningKey(dir, (_l, m) => logged.push(m), box);
  t.is(Buffer.from(loaded).toString('base64url'), plain);
  const text = await readFile(join(dir, SIGNING_KEY_FILE), 'utf8');
  t.false(text.includes(plain));
  t.true(text.startsWith(`enc:v1:${box.keyId}:`));
  t.deepEqual(logged, ['encrypted the token signing key at rest']);
  t.is(Buffer.from(await loadSigningKey(dir, silentLogger, box)).toString('base64url'), plain);
});
