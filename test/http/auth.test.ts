import test from 'ava';
import { OWASP_SCRYPT, PasswordHasher } from '../../src/http/auth/passwords.js';
import { LoginLimiter } from '../../src/http/auth/rate-limit.js';
import { TokenService } from '../../src/http/auth/tokens.js';
import { RateLimitedError } from '../../src/errors.js';
import { ManualClock } from '../../src/model/clock.js';
import { FAST_SCRYPT } from './harness.js';

test('passwords default to OWASP scrypt (N=2^17, r=8, p=1) with salt and parameters in the hash', async (t) => {
  const hasher = new PasswordHasher();
  t.deepEqual(hasher.params, { N: 2 ** 17, r: 8, p: 1 });
  const hash = await hasher.hash('correct horse');
  t.regex(hash, /^scrypt\$131072\$8\$1\$[A-Za-z0-9_-]{22}\$[A-Za-z0-9_-]{86}$/);
  t.true(await hasher.verify('correct horse', hash));
  t.false(await hasher.verify('correct horsE', hash));
  t.not(await hasher.hash('correct horse'), hash, 'salted');
  t.false(hasher.outdated(hash));
});

test('passwords verify old hashes made with other parameters and flags them as outdated', async (t) => {
  const weak = await new PasswordHasher(FAST_SCRYPT).hash('pw-12345678');
  const strong = new PasswordHasher(OWASP_SCRYPT);
  t.true(await strong.verify('pw-12345678', weak));
  t.true(strong.outdated(weak));
});

test('passwords a missing or broken hash is refused after the same derivation work', async (t) => {
  const hasher = new PasswordHasher(FAST_SCRYPT);
  t.false(await hasher.verify('anything', undefined));
  t.false(await hasher.verify('anything', 'scrypt$not$a$hash'));
  t.false(await hasher.verify('anything', 'scrypt$1048576000$8$1$AAAA$AAAA'), 'absurd parameters are not run');
});

test('passwords the hashing gate refuses with 429 when too many wait', async (t) => {
  const hasher = new PasswordHasher(FAST_SCRYPT, 1, 2);
  const runs = Array.from({ length: 6 }, () =>
    hasher.hash('pw-12345678').then(
      () => 'ok',
      (e: unknown) => e,
    ),
  );
  const results = await Promise.all(runs);
  t.is(results.filter((r) => r === 'ok').length, 3);
  t.true(results.filter((r) => r !== 'ok').every((r) => r instanceof RateLimitedError));
});

test('rate limiter slides its window and counts per username without regard to case', (t) => {
  const clock = new ManualClock();
  const limiter = new LoginLimiter(clock, { windowMs: 60_000, perUser: 2, perAddress: 10, maxKeys: 10 });
  limiter.fail('Ann', '10.0.0.1');
  clock.advance(10_000);
  limiter.fail('ann', '10.0.0.2');
  const err = t.throws(() => limiter.check('ANN', '10.0.0.3'), { instanceOf: RateLimitedError });
  t.is(err.retryAfterSeconds, 50);
  clock.advance(50_001);
  t.notThrows(() => limiter.check('ann', '10.0.0.3'));
  limiter.fail('ann', '10.0.0.3');
  limiter.succeed('ann');
  t.notThrows(() => limiter.check('ann', '10.0.0.3'));
});

test('rate limiter forgets the least recently failed key past maxKeys', (t) => {
  const limiter = new LoginLimiter(new ManualClock(), { windowMs: 60_000, perUser: 1, perAddress: 100, maxKeys: 4 });
  limiter.fail('first', 'a');
  for (const u of ['u1', 'u2', 'u3']) limiter.fail(u, 'b');
  t.notThrows(() => limiter.check('first', 'c'), 'evicted');
  t.throws(() => limiter.check('u3', 'c'), { instanceOf: RateLimitedError });
});

test('tokens an access token is verified once, then served from a bounded cache until it expires', async (t) => {
  const clock = new ManualClock();
  const tokens = new TokenService(new Uint8Array(32).fill(7), clock, { accessSeconds: 60, refreshSeconds: 600 }, 2);
  const a = await tokens.signAccess('u', 's');
  const claims = await tokens.verifyAccess(a.token);
  t.is(await tokens.verifyAccess(a.token), claims, 'same cached object');
  await tokens.verifyAccess((await tokens.signAccess('u', 's2')).token);
  await tokens.verifyAccess((await tokens.signAccess('u', 's3')).token);
  t.not(await tokens.verifyAccess(a.token), claims, 'evicted, verified again');
  clock.advance(60_000);
  await t.throwsAsync(tokens.verifyAccess(a.token), { message: /expired/ });
  const refresh = await tokens.signRefresh('u', 's', 'jti-123456789012345');
  await t.throwsAsync(tokens.verifyAccess(refresh.token), undefined, 'a refresh token is no access token');
});
