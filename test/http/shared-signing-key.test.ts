// Several controllers over one store (issue #18): each a real app on loopback with a STATE_DIR
// of its own, agreeing on what they signed because the key is the store's. And the key itself
// shows nowhere: not in an answer, the audit trail, an event or a log line.
import test, { type ExecutionContext } from 'ava';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Config } from '../../src/config.js';
import { SIGNING_KEY_FILE } from '../../src/http/auth/secret-files.js';
import { provisioning } from '../../src/main/provisioning.js';
import { ManualClock } from '../../src/model/clock.js';
import { SIGNING_KEY_ID, TokenKind, type SigningKeySpec } from '../../src/model/token-kinds.js';
import type { Images } from '../../src/services/images.js';
import { createMemoryStore, SecretBox } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import { ADMIN_PASSWORD, startLab } from '../lab/harness.js';
import { Client } from './client.js';
import { startHarness, type Harness, type HarnessOptions } from './harness.js';

const storedKey = async (store: Store): Promise<SigningKeySpec | undefined> =>
  (await store.get<SigningKeySpec>(TokenKind.SigningKey, SIGNING_KEY_ID))?.spec;

async function controller(t: ExecutionContext, opts: HarnessOptions): Promise<Harness> {
  const h = await startHarness(opts);
  t.teardown(() => h.close());
  return h;
}

test('shared signing key: a session one controller issued is accepted by another with its own STATE_DIR', async (t) => {
  const store = await createMemoryStore();
  const clock = new ManualClock(Date.now());
  const a = await controller(t, { store, clock });
  const onA = await a.admin();
  // The second starts after the login, so it knows the session from its first list (one started
  // later reaches it by the watch: two-controllers.ts); the signature is what this test is about.
  const b = await controller(t, { store, clock });
  t.not(a.stateDir, b.stateDir);
  const onB = onA.clone(b.base);
  const me = await onB.get<{ username: string }>('/user/me');
  t.is(me.status, 200, me.text);
  t.is(me.json.username, 'admin');
  const refreshed = await onB.post<{ accessToken: string }>('/user/refresh');
  t.is(refreshed.status, 200, refreshed.text);
  const bearer = { headers: { authorization: `Bearer ${refreshed.json.accessToken}` } };
  t.is((await a.client().get('/user/me', bearer)).status, 200, 'and what the second signed, the first accepts');
});

test('shared signing key: a signed boot link one controller makes verifies at another', async (t) => {
  const store = await createMemoryStore();
  const clock = new ManualClock(Date.now());
  const dirs = await Promise.all([0, 1].map(() => mkdtemp(join(tmpdir(), 'quarry-links-'))));
  t.teardown(() => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));
  const file = join(dirs[1]!, 'vmlinuz');
  await writeFile(file, 'kernel');
  const images = { downloadedFile: () => Promise.resolve(file), defaultImage: () => Promise.resolve(null) } as unknown as Images;
  const boot = (stateDir: string) =>
    provisioning({ config: { stateDir, driver: 'lab' } as Config, store, images, clock, log: () => undefined });
  const [signer, server] = await Promise.all(dirs.map(boot));
  const b = await controller(t, { store, clock, stateDir: dirs[1]!, keepStateDir: true, areas: [server!.routes] });
  const link = signer!.sources.imageFileUrl(randomUUID(), 'vmlinuz');
  const r = await b.client().get(link);
  t.is(r.status, 200, r.text);
  t.is(r.text, 'kernel');
  t.is(
    (await b.client().get(link.replace(/signature=(.)/, (_m, c: string) => `signature=${c === '0' ? '1' : '0'}`))).status,
    401,
    'a forged one still is not',
  );
});

test('shared signing key: after the upgrade a session signed with the STATE_DIR key of before still verifies', async (t) => {
  const store = await createMemoryStore();
  const clock = new ManualClock(Date.now());
  const stateDir = await mkdtemp(join(tmpdir(), 'quarry-upgrade-'));
  t.teardown(() => rm(stateDir, { recursive: true, force: true }));
  const box = new SecretBox(randomBytes(32));
  const before = await startHarness({ store, clock, stateDir, keepStateDir: true, secrets: box });
  const admin = await before.admin();
  await before.close();
  // The state an older Quarry left: its key in STATE_DIR (sealed, as it wrote it), none in the store.
  const { key } = (await storedKey(store))!;
  await store.delete(TokenKind.SigningKey, SIGNING_KEY_ID);
  await writeFile(join(stateDir, SIGNING_KEY_FILE), `${box.seal(key, `file:${SIGNING_KEY_FILE}`)}\n`, { mode: 0o600 });

  const after = await controller(t, { store, clock, stateDir, keepStateDir: true, secrets: box });
  t.is((await admin.clone(after.base).get('/user/me')).status, 200, 'the old cookie is still good');
  t.deepEqual(await storedKey(store), { key, origin: 'migrated' });
  await t.throwsAsync(stat(join(stateDir, SIGNING_KEY_FILE)), { code: 'ENOENT' });
  const other = await controller(t, { store, clock });
  t.is((await admin.clone(other.base).get('/user/me')).status, 200, 'and good at every controller of the store');
});

/** The key in every form a body or a line could carry it. */
const forms = (key: string): string[] => {
  const bytes = Buffer.from(key, 'base64url');
  return [key, bytes.toString('base64'), bytes.toString('hex')];
};

test('shared signing key: no API answer, audit entry, event or log line shows it', async (t) => {
  const lines: string[] = [];
  const q = await startLab(t, 1, { log: (level, message, fields) => lines.push(JSON.stringify({ level, message, fields })) });
  const c = new Client(q.url);
  t.is((await c.post('/user/login', { username: 'admin', password: ADMIN_PASSWORD })).status, 200);
  const key = (await storedKey(q.store))?.key;
  t.truthy(key);
  const leaks = (where: string, text: string): void => {
    for (const f of forms(key!)) t.false(text.includes(f), `${where} shows the signing key`);
  };
  // Every GET without a path parameter, as an admin (streams aside: they never end).
  const gets = q.http.routes.filter((r) => r.method === 'GET' && !r.path.includes('{') && !/events|stream/.test(r.path));
  t.true(gets.length > 20, gets.map((r) => r.path).join(' '));
  for (const r of gets) leaks(`GET ${r.path}`, (await c.get(r.path)).text);
  const audit = await c.get<{ entries: Array<{ kind: string }> }>('/audit?limit=1000');
  t.is(audit.status, 200);
  t.true(audit.json.entries.length > 0);
  t.false(
    audit.json.entries.some((e) => e.kind === TokenKind.SigningKey),
    'the key is Quarry’s own, as cephx keys: not audited',
  );
  leaks('an audit entry', audit.text);
  leaks('an event', JSON.stringify(q.events));
  leaks('a log line', lines.join('\n'));
  t.true(lines.some((l) => l.includes('created the token signing key in the store')));
});
