// The forwarded marker's HMAC (src/http/forward/marker.ts) on its own: what a fellow controller
// signs verifies for that request only, within the window, under the shared key.
import test from 'ava';
import type { Context } from 'koa';
import { ForwardMarker, MARKER_WINDOW_MS, type ForwardClaims } from '../../src/http/forward/marker.js';
import { ManualClock } from '../../src/model/clock.js';
import { SecretBox } from '../../src/store/secret-box.js';

const ctxOf = (requestId: string, method = 'POST', originalUrl = '/node/hardware'): Context =>
  ({ method, originalUrl, state: { requestId } }) as unknown as Context;
const claims: ForwardClaims = { peer: '192.0.2.10', client: '192.0.2.10', proto: 'https' };
const shared = () => new SecretBox(Buffer.alloc(32, 5));

test('forward marker a fellow controller with the same SECRETS_KEY verifies the claims of that very request', (t) => {
  const clock = new ManualClock(1_700_000_000_000);
  const follower = ForwardMarker.from(shared(), clock);
  const leader = ForwardMarker.from(shared(), clock);
  const header = follower.header(ctxOf('req-1'), claims);
  t.deepEqual(leader.verify(ctxOf('req-1'), header), claims);
  t.is(leader.verify(ctxOf('req-2'), header), null, 'another request id');
  t.is(leader.verify(ctxOf('req-1', 'GET'), header), null, 'another method');
  t.is(leader.verify(ctxOf('req-1', 'POST', '/node/runs/claim'), header), null, 'another target');
  t.is(leader.verify(ctxOf('req-1'), header.replace('proto=https', 'proto=http')), null, 'a changed claim');
  t.is(leader.verify(ctxOf('req-1'), `${header};peer=10.0.0.1`), null, 'a repeated field');
  t.is(ForwardMarker.from(new SecretBox(Buffer.alloc(32, 6)), clock).verify(ctxOf('req-1'), header), null, 'another key');
});

test('forward marker is good for a few minutes either way, not longer', (t) => {
  const clock = new ManualClock(1_700_000_000_000);
  const marker = ForwardMarker.from(shared(), clock);
  const header = marker.header(ctxOf('req-1'), claims);
  clock.advance(MARKER_WINDOW_MS);
  t.deepEqual(marker.verify(ctxOf('req-1'), header), claims);
  clock.advance(1);
  t.is(marker.verify(ctxOf('req-1'), header), null);
});

test('forward marker without a secrets key signs nothing and believes nothing', (t) => {
  const clock = new ManualClock(1_700_000_000_000);
  const keyless = ForwardMarker.from(undefined, clock);
  t.is(keyless.header(ctxOf('req-1'), claims), 'v1', 'the marker still stops a second forward');
  const signed = ForwardMarker.from(shared(), clock).header(ctxOf('req-1'), claims);
  t.is(keyless.verify(ctxOf('req-1'), signed), null);
});
