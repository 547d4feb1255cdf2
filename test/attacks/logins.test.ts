// Issue #12, findings 4 and 9 (sessions, Host, cookies), replayed over real HTTP: an attacker on
// the network tries to lock out users and agents, starve logins, spoof its address or the
// server's name, and keep an event stream after its session ended. Another source is another
// loopback address the client socket binds to (helpers.ts).
import test from 'ava';
import { EventBus } from '../../src/tasks/bus.js';
import { SseHub } from '../../src/http/sse/hub.js';
import { eventRoutes } from '../../src/http/routes/events.js';
import { PasswordHasher, type ScryptParams } from '../../src/http/auth/passwords.js';
import { Kind, type SessionSpec } from '../../src/model/kinds.js';
import { ADMIN_PASSWORD, FAST_SCRYPT, startHarness, type Harness } from '../http/harness.js';
import type { Client } from '../http/client.js';
import { allActive, startLab, waitFor } from '../lab/harness.js';
import { discoverApproved } from '../http/agent-helpers.js';
import { loginFrom, send } from './helpers.js';
import type { ProblemBody } from '../http/bodies.js';

const ATTACKER = '127.0.0.2';
const ADMIN_HOME = '127.0.0.1';
const AGENT_NODE = '6f1c2a3b-0d4e-4f5a-8b6c-7d8e9f0a1b2c';
const AGENT_SECRET = 'a'.repeat(43);

test('attack 50 wrong admin passwords from one address is refused, and the admin still logs in from another', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  const statuses: number[] = [];
  for (let i = 0; i < 50; i++) statuses.push((await loginFrom(h.base, ATTACKER, 'admin', `guess-${i}`)).status);
  t.deepEqual(statuses.slice(0, 5), [401, 401, 401, 401, 401]);
  t.true(
    statuses.slice(5).every((s) => s === 429),
    'the attacker waits after five failures',
  );
  const refused = await loginFrom<ProblemBody>(h.base, ATTACKER, 'admin', ADMIN_PASSWORD);
  t.is(refused.status, 429, 'even with the right password, that address waits');
  t.is(refused.json.code, 'RATE_LIMITED');
  t.true(Number(refused.headers['retry-after']) > 0);
  const admin = await loginFrom(h.base, ADMIN_HOME, 'admin', ADMIN_PASSWORD);
  t.is(admin.status, 200, 'the admin from another address is not locked out');
});

test('attack locking out an agent with wrong secrets from another address is refused: the agent still logs in', async (t) => {
  const q = await startLab(t, 1);
  const [node] = await allActive(q, 1);
  const username = `agent:${node!.id}`;
  const statuses: number[] = [];
  for (let i = 0; i < 50; i++) statuses.push((await loginFrom(q.url, ATTACKER, username, 'x'.repeat(43))).status);
  t.true(statuses.includes(429), 'the attacker is throttled');
  t.true(statuses.every((s) => s === 401 || s === 429));
  // Make the real agent (on 127.0.0.1) log in again: its session ends, its next call is 401,
  // the refresh is refused and it logs in with its secret.
  const sessionsOf = async () => (await q.store.list<SessionSpec>(Kind.Session)).filter((s) => s.spec.userId === username).map((s) => s.id);
  const before = await sessionsOf();
  t.true(before.length > 0);
  await q.http.auth.sessions.revokeUser(username);
  const after = await waitFor('the agent logs in again', async () => {
    const now = await sessionsOf();
    return now.length > 0 && now.every((id) => !before.includes(id)) ? now : undefined;
  });
  t.true(after.length > 0);
  t.is((await q.nodes()).find((n) => n.id === node!.id)?.status.phase, 'active');
});

/** A hasher whose derivations for `bogus-` passwords wait until the test releases them, so
 * "still queued" is a state the test holds, not a race it hopes to win. */
class HeldHasher extends PasswordHasher {
  readonly held: Array<() => void> = [];
  protected override async derive(password: string, salt: Buffer, params: ScryptParams, keyLen: number): Promise<Buffer> {
    if (password.startsWith('bogus-')) await new Promise<void>((r) => this.held.push(r));
    return super.derive(password, salt, params, keyLen);
  }
}

test('attack 80 concurrent bogus logins from one address is refused without starving a real login from another', async (t) => {
  const hasher = new HeldHasher(FAST_SCRYPT, 2, 64, 4);
  const agents = {
    verify: async (_: string, secret: string) => (secret === AGENT_SECRET ? { rotated: true, firstUse: false } : null),
    state: async () => ({ rotated: true }),
  };
  const h = await startHarness({ auth: { hasher }, agents });
  t.teardown(() => h.close());
  const answered: number[] = [];
  const flood = Array.from({ length: 80 }, (_, i) =>
    loginFrom(h.base, ATTACKER, 'admin', `bogus-${i}`).then((r) => (answered.push(r.status), r.status)),
  );
  await waitFor(
    'two hashing, four queued, the rest refused',
    () => hasher.held.length === 2 && hasher.stats().waiting === 4 && answered.length === 74,
  );
  t.true(
    answered.every((s) => s === 429),
    'refused at once, without hashing',
  );
  // An agent's secret is one SHA-256: it does not queue behind the flood at all.
  t.is((await loginFrom(h.base, '127.0.0.3', `agent:${AGENT_NODE}`, AGENT_SECRET)).status, 200);
  t.is(hasher.stats().waiting, 4);
  const real = loginFrom(h.base, ADMIN_HOME, 'admin', ADMIN_PASSWORD);
  await waitFor('the real login queued', () => hasher.stats().waiting === 5);
  hasher.held.shift()?.(); // one of the attacker's checks ends; its slot goes to the real login
  t.is((await real).status, 200);
  // Two of the attacker's checks hold their slots and three wait: none of them can have answered.
  t.true(answered.length <= 75, "the real login completed while the attacker's other five were still running or queued");
  while (answered.length < 80) {
    hasher.held.shift()?.();
    await new Promise((r) => setTimeout(r, 1));
  }
  const statuses = await Promise.all(flood);
  t.false(statuses.includes(200));
});

test('attack forged X-Forwarded-For and X-Forwarded-Proto without TRUST_PROXY are ignored', async (t) => {
  const h = await startHarness();
  t.teardown(() => h.close());
  for (let i = 0; i < 5; i++)
    t.is((await loginFrom(h.base, ATTACKER, 'admin', `guess-${i}`, { 'x-forwarded-for': `198.51.100.${i}` })).status, 401);
  const r = await loginFrom(h.base, ATTACKER, 'admin', 'guess-5', { 'x-forwarded-for': '198.51.100.99' });
  t.is(r.status, 429, 'a new forged address is still the same source');
  const ok = await loginFrom(h.base, ADMIN_HOME, 'admin', ADMIN_PASSWORD, { 'x-forwarded-proto': 'https' });
  t.is(ok.status, 200);
  const cookies = [ok.headers['set-cookie'] ?? []].flat();
  t.is(cookies.length, 2);
  t.false(
    cookies.some((c) => /;\s*secure/i.test(c)),
    'no Secure cookie on a plain connection that says https',
  );
});

test('attack a client-written X-Forwarded-For through a trusted proxy is refused: the address the proxy saw counts', async (t) => {
  const h = await startHarness({ trustProxy: ['loopback'] });
  t.teardown(() => h.close());
  // The proxy (on loopback) appends the address it saw: the attacker's. Whatever the attacker
  // wrote before it is ignored.
  const via = (written: string) => ({ 'x-forwarded-for': `${written}, 203.0.113.66`, 'x-forwarded-proto': 'https' });
  for (let i = 0; i < 5; i++) t.is((await loginFrom(h.base, ADMIN_HOME, 'admin', `guess-${i}`, via(`198.51.100.${i}`))).status, 401);
  t.is((await loginFrom(h.base, ADMIN_HOME, 'admin', 'guess-5', via('198.51.100.99'))).status, 429);
  // The admin behind the same proxy, from another address, logs in, with Secure cookies.
  const ok = await loginFrom(h.base, ADMIN_HOME, 'admin', ADMIN_PASSWORD, {
    'x-forwarded-for': '203.0.113.10',
    'x-forwarded-proto': 'https',
  });
  t.is(ok.status, 200);
  const cookies = [ok.headers['set-cookie'] ?? []].flat();
  t.true(cookies.length === 2 && cookies.every((c) => /;\s*secure/i.test(c)));
});

test('attack a foreign Host header is refused and never becomes the master URL in boot scripts or cloud-init', async (t) => {
  const q = await startLab(t, 0);
  const mac = '02:00:00:00:12:09';
  const evil = { host: 'evil.example:8080' };
  for (const path of ['/boot/default', `/boot/config?mac=${mac}`, `/templates/rendered/cloud-init?mac=${mac}`, '/user/me']) {
    const r = await send<ProblemBody>(q.url, 'GET', path, { headers: evil });
    t.is(r.status, 421, path);
    t.is(r.json.code, 'HOST_NOT_ALLOWED');
    t.false(r.text.includes('#!ipxe'));
  }
  t.is((await q.nodes()).length, 0, 'no node was created for the refused boot');
  const login = await send(q.url, 'POST', '/user/login', { headers: evil, json: { username: 'admin', password: 'whatever' } });
  t.is(login.status, 421, 'refused before any password work');
  const dflt = await send(q.url, 'GET', '/boot/default');
  t.is(dflt.status, 200);
  t.true(dflt.text.includes(`${q.url}/boot/config?mac=`), 'the address the machine reached is fine');
});

test('attack a Host header against EXTERNAL_URL is refused: machines are sent to the configured URL', async (t) => {
  const external = 'https://quarry.example.org';
  const q = await startLab(t, 0, { env: { EXTERNAL_URL: external } });
  const mac = '02:00:00:00:12:10';
  t.is((await send(q.url, 'GET', '/boot/default', { headers: { host: 'evil.example' } })).status, 421);
  const dflt = await send(q.url, 'GET', '/boot/default');
  t.true(dflt.text.includes(`chain --replace --autofree ${external}/boot/config?mac=`));
  await discoverApproved(q, mac); // enrollment: only an approved machine is sent an installer
  const boot = await send(q.url, 'GET', `/boot/config?mac=${mac}`, { headers: { host: 'quarry.example.org' } });
  t.is(boot.status, 200);
  t.true(boot.text.includes(`kernel ${external}/images/`));
  const userData = await send(q.url, 'GET', `/templates/rendered/cloud-init?mac=${mac}`);
  t.is(userData.status, 200);
  t.true(userData.text.includes(`"master":"${external}"`));
  t.false(userData.text.includes('127.0.0.1'));
});

async function eventsHarness(): Promise<{ h: Harness; bus: EventBus; hub: SseHub }> {
  const bus = new EventBus();
  const hub = new SseHub(bus, { flushIntervalMs: 0 });
  const h = await startHarness({ areas: [eventRoutes(hub)] });
  return { h, bus, hub };
}

/** Opens GET /events with the client's cookies; `ended` settles when the server ends it. */
/** `json` is the problem a refused stream answers. */
async function openStream(c: Client): Promise<{ status: number; json: ProblemBody | undefined; ended: Promise<void>; close(): void }> {
  const abort = new AbortController();
  const cookie = [...c.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const res = await fetch(new URL('/events', c.base), { headers: { cookie, accept: 'text/event-stream' }, signal: abort.signal });
  if (res.status !== 200) return { status: res.status, json: (await res.json()) as ProblemBody, ended: Promise.resolve(), close: () => {} };
  const reader = res.body!.getReader();
  const ended = (async () => {
    try {
      for (;;) if ((await reader.read()).done) return;
    } catch {
      // aborted by the test
    }
  })();
  return { status: 200, json: undefined, ended, close: () => abort.abort() };
}

test('attack keeping an event stream after logout is refused: the stream ends with the session', async (t) => {
  const { h, hub } = await eventsHarness();
  t.teardown(async () => {
    hub.close();
    await h.close();
  });
  const admin = await h.admin();
  const stream = await openStream(admin);
  t.is(stream.status, 200);
  const other = await openStream(await h.admin()); // another session of the same user
  t.is((await admin.post('/user/logout')).status, 200);
  await stream.ended; // the server ended it; a stream that stayed open would time the test out
  t.is(hub.stats().clients, 1, "the other session's stream is still open");
  other.close();
});

test("attack keeping an event stream with a replayed refresh token is refused: the revoked session's stream ends", async (t) => {
  const { h, hub } = await eventsHarness();
  t.teardown(async () => {
    hub.close();
    await h.close();
  });
  const victim = await h.admin();
  const thief = victim.clone();
  const stream = await openStream(victim);
  t.is((await victim.post('/user/refresh')).status, 200);
  t.is((await thief.post('/user/refresh')).status, 401, 'the old refresh token is a replay');
  await stream.ended;
  await waitFor('no stream left', () => hub.stats().clients === 0);
  t.pass();
});

test('attack opening a ninth event stream for one user is refused', async (t) => {
  const { h, hub } = await eventsHarness();
  t.teardown(async () => {
    hub.close();
    await h.close();
  });
  const admin = await h.admin();
  const open = [];
  for (let i = 0; i < 8; i++) {
    const s = await openStream(admin);
    t.is(s.status, 200);
    open.push(s);
  }
  const ninth = await openStream(admin);
  t.is(ninth.status, 429);
  t.is(ninth.json?.code, 'RATE_LIMITED');
  await h.createUser('ana', 'ana-password');
  const ana = await openStream(await h.login('ana', 'ana-password'));
  t.is(ana.status, 200, 'another user is not affected');
  open.pop()!.close();
  const again = await waitFor('a slot frees when a stream closes', async () => {
    const s = await openStream(admin);
    return s.status === 200 ? s : undefined;
  });
  for (const s of [...open, ana, again]) s.close();
});
