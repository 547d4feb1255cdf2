// The pieces behind the trust boundaries of the HTTP layer, as tables: the login limiter, the
// hashing queue's fairness, the Host allowlist, the forwarded client address, their settings.
import test from 'ava';
import { AGENT_LOGIN_LIMITS, DEFAULT_LOGIN_LIMITS, LoginLimiter, type LoginLimits } from '../../src/http/auth/rate-limit.js';
import { PasswordHasher, type ScryptParams } from '../../src/http/auth/passwords.js';
import { forwardedClient, proxyTrust } from '../../src/http/client-address.js';
import { hostPolicy, parseHost } from '../../src/http/hosts.js';
import { SessionStreams } from '../../src/http/sse/streams.js';
import { loadConfig } from '../../src/config.js';
import { InputError, RateLimitedError } from '../../src/errors.js';
import { ManualClock } from '../../src/model/clock.js';
import { FAST_SCRYPT } from './harness.js';
import { EventEmitter } from 'node:events';

type Step = { fail: [user: string, address: string, times?: number] } | { ok: [user: string, address: string] } | { advance: number };
interface Row {
  title: string;
  limits?: LoginLimits;
  steps: Step[];
  /** [user, address, seconds to wait (0: allowed now)] */
  expect: Array<[string, string, number]>;
}

const S = 1000;
const MIN = 60 * S;
const rows: Row[] = [
  {
    title: 'a pair waits after its allowance; the same user from another address does not',
    steps: [{ fail: ['admin', '10.0.0.66', 5] }],
    expect: [
      ['admin', '10.0.0.66', 10],
      ['ADMIN', '10.0.0.66', 10],
      ['admin', '10.0.0.1', 0],
      ['other', '10.0.0.66', 0],
    ],
  },
  {
    title: 'each further failure of the pair doubles its wait',
    steps: [{ fail: ['admin', 'A', 5] }, { advance: 10 * S }, { fail: ['admin', 'A'] }, { advance: 20 * S }, { fail: ['admin', 'A'] }],
    expect: [['admin', 'A', 40]],
  },
  {
    title: 'the wait is capped',
    steps: [{ fail: ['admin', 'A', 40] }],
    expect: [
      ['admin', 'A', 15 * 60],
      ['admin', 'B', 0],
    ],
  },
  {
    title: 'a pair quiet for a window after its wait starts over',
    steps: [{ fail: ['admin', 'A', 5] }, { advance: 10 * S + 15 * MIN + 1 }, { fail: ['admin', 'A'] }],
    expect: [['admin', 'A', 0]],
  },
  {
    title: 'a success starts the pair over',
    steps: [{ fail: ['ann', 'A', 4] }, { ok: ['ann', 'A'] }, { fail: ['ann', 'A', 4] }],
    expect: [['ann', 'A', 0]],
  },
  {
    title: 'an address spraying many usernames spends its budget for every username',
    steps: [...Array.from({ length: 20 }, (_, i): Step => ({ fail: [`user${i}`, 'A'] }))],
    expect: [
      ['admin', 'A', 15 * 60],
      ['admin', 'B', 0],
    ],
  },
  {
    title: 'a guess spread over many addresses makes new addresses wait, never one the user logged in from',
    steps: [{ ok: ['admin', 'home'] }, ...Array.from({ length: 25 }, (_, i): Step => ({ fail: ['admin', `10.1.0.${i}`, 4] }))],
    expect: [
      ['admin', 'elsewhere', 15 * 60],
      ['admin', 'home', 0],
      ['bob', 'elsewhere', 0],
    ],
  },
  {
    title: "agents have no ceiling: a thousand failures from many addresses leave the agent's own address alone",
    limits: AGENT_LOGIN_LIMITS,
    steps: [
      ...Array.from({ length: 250 }, (_, i): Step => ({ fail: ['agent:x', `10.2.${i >> 8}.${i & 255}`, 4] })),
      { fail: ['agent:x', 'A', 5] },
    ],
    expect: [
      ['agent:x', '127.0.0.1', 0],
      ['agent:x', 'A', 1],
    ],
  },
  {
    title: "an agent's address budget bounds the work one address causes across agents",
    limits: AGENT_LOGIN_LIMITS,
    steps: Array.from({ length: 100 }, (_, i): Step => ({ fail: [`agent:${i}`, 'A'] })),
    expect: [
      ['agent:new', 'A', 15 * 60],
      ['agent:new', 'B', 0],
    ],
  },
];

for (const row of rows) {
  test(`login limiter ${row.title}`, (t) => {
    const clock = new ManualClock(1_000_000);
    const limiter = new LoginLimiter(clock, row.limits);
    for (const step of row.steps) {
      if ('fail' in step) for (let i = 0; i < (step.fail[2] ?? 1); i++) limiter.fail(step.fail[0], step.fail[1]);
      else if ('ok' in step) limiter.succeed(step.ok[0], step.ok[1]);
      else clock.advance(step.advance);
    }
    for (const [user, address, seconds] of row.expect)
      t.is(Math.ceil(limiter.waitMs(user, address) / 1000), seconds, `${user} from ${address}`);
  });
}

test('login limiter check throws RATE_LIMITED with the wait in whole seconds', (t) => {
  const limiter = new LoginLimiter(new ManualClock(0));
  for (let i = 0; i < 5; i++) limiter.fail('admin', 'A');
  const err = t.throws(() => limiter.check('admin', 'A'), { instanceOf: RateLimitedError });
  t.is(err.retryAfterSeconds, 10);
  t.notThrows(() => limiter.check('admin', 'B'));
});

test('login limiter memory stays within maxKeys however many sources fail', (t) => {
  const limiter = new LoginLimiter(new ManualClock(0), { ...DEFAULT_LOGIN_LIMITS, maxKeys: 50 });
  for (let i = 0; i < 1000; i++) limiter.fail(`u${i}`, `10.3.${i >> 8}.${i & 255}`);
  t.true(limiter.size <= 50, `${limiter.size}`);
});

/** A hasher whose derivations of passwords starting with `held-` wait until released. */
class HeldHasher extends PasswordHasher {
  readonly held: Array<() => void> = [];
  readonly started: string[] = [];
  constructor(concurrency: number, maxWaiting: number, perSource: number) {
    super(FAST_SCRYPT, concurrency, maxWaiting, perSource);
  }
  protected override async derive(password: string, salt: Buffer, params: ScryptParams, keyLen: number): Promise<Buffer> {
    this.started.push(password);
    if (password.startsWith('held-')) await new Promise<void>((r) => this.held.push(r));
    return super.derive(password, salt, params, keyLen);
  }
  release(): void {
    this.held.shift()?.();
  }
}

async function until(what: string, cond: () => boolean): Promise<void> {
  for (let i = 0; i < 10_000 && !cond(); i++) await new Promise((r) => setTimeout(r, 1));
  if (!cond()) throw new Error(`never: ${what}`);
}

test('password queue gives a free slot to a waiting source before a busy one, and refuses a flood from one source at once', async (t) => {
  const hasher = new HeldHasher(1, 64, 2);
  const settled: string[] = [];
  const track = (p: Promise<unknown>, name: string) =>
    p.then(
      () => settled.push(`${name}:ok`),
      (e: unknown) => settled.push(`${name}:${e instanceof RateLimitedError ? 429 : 'error'}`),
    );
  const flood = Array.from({ length: 6 }, (_, i) => track(hasher.hash(`held-a${i}`, 'attacker'), `a${i}`));
  await until(
    'one running, two waiting, three refused',
    () => hasher.stats().running === 1 && hasher.stats().waiting === 2 && hasher.held.length === 1 && settled.length === 3,
  );
  t.deepEqual(settled.sort(), ['a3:429', 'a4:429', 'a5:429'], 'beyond its waiting allowance, refused without hashing');
  const real = track(hasher.hash('real', 'user'), 'real');
  await until('the real one waits', () => hasher.stats().waiting === 3);
  hasher.release(); // a0 ends; the slot goes to the source that has not been served
  await real;
  t.deepEqual(hasher.started, ['held-a0', 'real', 'held-a1']);
  t.false(settled.includes('a1:ok') || settled.includes('a2:ok'), 'the flood is still queued');
  while (hasher.held.length || hasher.stats().waiting) {
    hasher.release();
    await new Promise((r) => setImmediate(r));
  }
  await Promise.all(flood);
  t.deepEqual(hasher.stats(), { running: 0, waiting: 0, sources: 0 });
});

test('password queue keeps its total bound across sources', async (t) => {
  const hasher = new HeldHasher(1, 3, 2);
  const results = Array.from({ length: 6 }, (_, i) =>
    hasher.hash(`held-${i}`, `s${i}`).then(
      () => 'ok',
      (e: unknown) => (e instanceof RateLimitedError ? 429 : e),
    ),
  );
  await until('held', () => hasher.held.length === 1 && hasher.stats().waiting === 3);
  while (hasher.held.length || hasher.stats().waiting) {
    hasher.release();
    await new Promise((r) => setImmediate(r));
  }
  t.deepEqual(await Promise.all(results), ['ok', 'ok', 'ok', 'ok', 429, 429]);
});

test('host parse takes host[:port] and nothing else', (t) => {
  const table: Array<[string, ReturnType<typeof parseHost>]> = [
    ['quarry.example:8080', { hostname: 'quarry.example', port: 8080 }],
    ['Quarry.Example.', { hostname: 'quarry.example', port: null }],
    ['127.0.0.1', { hostname: '127.0.0.1', port: null }],
    ['[::1]:80', { hostname: '::1', port: 80 }],
    ['', null],
    ['evil host', null],
    ['a:99999', null],
    ['[nope]:1', null],
    ['a/b', null],
    ['-a.example', null],
  ];
  for (const [raw, expected] of table) t.deepEqual(parseHost(raw), expected, raw);
});

test("host allowlist: loopback, the connection's own address, HOST, EXTERNAL_URL and ALLOWED_HOSTS; nothing else", (t) => {
  const ok = (policy: ReturnType<typeof hostPolicy>, host: string, local = '10.0.0.1') => policy(parseHost(host)!, local);
  const dflt = hostPolicy({ listenHost: '0.0.0.0' });
  t.true(ok(dflt, 'localhost:8080'));
  t.true(ok(dflt, '127.0.0.1:1234'));
  t.true(ok(dflt, '[::1]:1'));
  t.true(ok(dflt, '10.0.0.1:8080'), 'the address the request came in on');
  t.true(ok(dflt, '10.0.0.1', '::ffff:10.0.0.1'));
  t.false(ok(dflt, '10.0.0.2:8080'), 'another address');
  t.false(ok(dflt, 'evil.example'));
  const listen = hostPolicy({ listenHost: '192.168.7.1', externalUrl: 'https://quarry.example.org/q' });
  t.true(ok(listen, '192.168.7.1:8080'));
  t.true(ok(listen, 'quarry.example.org'));
  t.false(ok(listen, 'example.org'));
  const listed = hostPolicy({ allowedHosts: ['Boot.Lan', '::2'], listenHost: '192.168.7.1' });
  t.true(ok(listed, 'boot.lan:80'));
  t.true(ok(listed, '[::2]'));
  t.false(ok(listed, '192.168.7.1'), 'ALLOWED_HOSTS replaces the default names');
  t.true(ok(listed, 'localhost'));
});

test('forwarded client is read from the right, only through trusted proxies', (t) => {
  const trusted = proxyTrust(['loopback', '10.9.0.0/16']);
  const table: Array<[string, string, string]> = [
    ['127.0.0.1', '', '127.0.0.1'],
    ['127.0.0.1', '203.0.113.7', '203.0.113.7'],
    ['127.0.0.1', '1.1.1.1, 203.0.113.7', '203.0.113.7'],
    ['127.0.0.1', '203.0.113.7, 10.9.1.1', '203.0.113.7'],
    ['::ffff:127.0.0.1', '203.0.113.7', '203.0.113.7'],
    ['127.0.0.1', 'garbage, 10.9.1.1', '10.9.1.1'],
    ['198.51.100.1', '203.0.113.7', '198.51.100.1'],
  ];
  for (const [peer, xff, client] of table) t.is(forwardedClient(peer, xff, trusted), client, `${peer} ${xff}`);
  t.is(forwardedClient('198.51.100.1', '203.0.113.7', proxyTrust(false)), '198.51.100.1');
  t.is(forwardedClient('198.51.100.1', '203.0.113.7', proxyTrust([])), '198.51.100.1');
  t.throws(() => proxyTrust(['10.0.0.0/33']));
  t.throws(() => proxyTrust(['proxy.example']));
});

test('config TRUST_PROXY, EXTERNAL_URL, ALLOWED_HOSTS and SSE_STREAMS_PER_USER are read and checked', (t) => {
  const dflt = loadConfig({});
  t.deepEqual([dflt.trustProxy, dflt.externalUrl, dflt.allowedHosts, dflt.sseStreamsPerUser], [[], null, null, 8]);
  const c = loadConfig({
    TRUST_PROXY: 'loopback, 10.0.0.0/8,::1',
    EXTERNAL_URL: 'https://Quarry.Example/',
    ALLOWED_HOSTS: 'a.example,B.example',
    SSE_STREAMS_PER_USER: '3',
  });
  t.deepEqual(c.trustProxy, ['loopback', '10.0.0.0/8', '::1']);
  t.is(c.externalUrl, 'https://quarry.example');
  t.deepEqual(c.allowedHosts, ['a.example', 'b.example']);
  t.is(c.sseStreamsPerUser, 3);
  for (const env of [
    { TRUST_PROXY: 'proxy.example' },
    { EXTERNAL_URL: 'ftp://x' },
    { EXTERNAL_URL: 'http://u:p@x' },
    { EXTERNAL_URL: 'http://x/?a=1' },
    { ALLOWED_HOSTS: 'a b' },
  ]) {
    t.throws(() => loadConfig(env), { instanceOf: InputError }, JSON.stringify(env));
  }
});

test('event streams end with their session, when it is revoked or found expired, and are capped per user', (t) => {
  const active = new Set(['s1', 's2']);
  const listeners: Array<(id: string, user: string) => void> = [];
  const streams = new SessionStreams({ isActive: (id) => active.has(id), onEnd: (l) => (listeners.push(l), () => {}) }, 2, 0);
  const ended: string[] = [];
  const res = () => Object.assign(new EventEmitter(), { destroyed: false, writableEnded: false });
  const open = (user: string, session: string, name: string) => {
    streams.admit({ userId: user, sessionId: session });
    const r = res();
    streams.add({ userId: user, sessionId: session }, () => (ended.push(name), r.emit('close')), r);
    return r;
  };
  open('ann', 's1', 'a');
  const b = open('ann', 's2', 'b');
  t.throws(() => open('ann', 's2', 'c'), { instanceOf: RateLimitedError });
  open('bob', 's3', 'd');
  listeners.forEach((l) => l('s1', 'ann'));
  t.deepEqual(ended, ['a']);
  t.is(streams.count('ann'), 1);
  b.emit('close');
  t.is(streams.count('ann'), 0);
  streams.sweep(); // s3 was never active
  t.deepEqual(ended, ['a', 'd']);
  t.is(streams.count(), 0);
});
