// A follower relays the leader-only routes to the leader (#18): two real apps on loopback
// (forward-helpers.ts). Conditions are awaited, never timed.
import test from 'ava';
import { once } from 'node:events';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { waitFor } from '../lab/harness.js';
import type { ProblemBody } from './bodies.js';
import type { Client } from './client.js';
import { cookieOf, send, startPair, type Seen } from './forward-helpers.js';
import type { Harness } from './harness.js';

const seenOf = (text: string): Seen => JSON.parse(text) as Seen;

/** Whether the controller logged a line with these fields (and this message, when given). */
const logged = (h: Harness, fields: Record<string, unknown>, message?: string): boolean =>
  h.logged.some((l) => (message === undefined || l.message === message) && Object.entries(fields).every(([k, v]) => l.fields?.[k] === v));

/** An admin session opened on the leader, used through the follower. Each controller's Auth
 * mirrors the stored sessions it loaded at start-up (auth/sessions.ts), so a session opened on
 * one is not yet known to another: the leader, which authenticates relayed requests, must know it. */
const asAdmin = async (leader: Harness, follower: Harness): Promise<Client> => (await leader.admin()).clone(follower.base);

test('leader forward a leader-only route on a follower is answered by the leader: status, body, headers, request id', async (t) => {
  const { leader, follower } = await startPair(t);
  const admin = await asAdmin(leader, follower);
  const r = await send(`${follower.base}/probe/who`, {
    headers: { cookie: cookieOf(admin.jar), 'x-request-id': 'fwd-who-1', connection: 'keep-alive, X-Hop', 'x-hop': 'secret' },
  });
  t.is(r.status, 200);
  const seen = seenOf(r.text);
  t.is(seen.served, 'leader');
  t.is(r.headers['x-probe'], 'leader', "the leader's own header comes back");
  t.regex(String(r.headers['content-type']), /^application\/json/);
  t.is(r.headers['x-request-id'], 'fwd-who-1');
  t.is(seen.requestId, 'fwd-who-1', 'one id on both controllers');
  t.regex(seen.marker, /^v1;peer=127\.0\.0\.1;client=127\.0\.0\.1;proto=http;at=\d+;sig=[\w-]+$/);
  t.is(seen.hop, '', 'a header the caller named in Connection stays on its hop');
  t.true(logged(leader, { requestId: 'fwd-who-1', route: '/probe/who' }, 'request'));
  t.true(logged(follower, { requestId: 'fwd-who-1', status: 200 }, 'request'));
});

test('leader forward a POST body arrives intact, with a length or chunked, and the leader authenticates and parses it', async (t) => {
  const { leader, follower } = await startPair(t);
  const admin = await asAdmin(leader, follower);
  const text = 'Ünïcødé ✓ '.repeat(30_000);
  const r = await admin.post<Seen>('/probe/echo', { text, n: 7 });
  t.is(r.status, 201);
  t.is(r.json.served, 'leader');
  t.deepEqual(r.json.body, { text, n: 7 });

  const chunked = await send(`${follower.base}/probe/echo`, {
    method: 'POST',
    headers: { cookie: cookieOf(admin.jar), 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    body: JSON.stringify({ text: 'in pieces', n: 1 }),
  });
  t.is(chunked.status, 201);
  t.deepEqual(seenOf(chunked.text).body, { text: 'in pieces', n: 1 });

  // Refused by the leader, not here: this controller read neither the cookie nor the body.
  const anonymous = await send(`${follower.base}/probe/echo`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': 'fwd-anon' },
    body: '{"text":',
  });
  t.is(anonymous.status, 401);
  t.true(logged(leader, { requestId: 'fwd-anon', status: 401 }, 'request'));
  const malformed = await send(`${follower.base}/probe/echo`, {
    method: 'POST',
    headers: { cookie: cookieOf(admin.jar), 'content-type': 'application/json', 'x-request-id': 'fwd-bad' },
    body: '{"text":',
  });
  t.is(malformed.status, 400);
  t.true(logged(leader, { requestId: 'fwd-bad', status: 400 }, 'request'));
});

test('leader forward /events relays the leader bus live through a follower; hanging up closes the leader stream', async (t) => {
  const { leader, follower, leaderProbes, followerProbes } = await startPair(t);
  const admin = await asAdmin(leader, follower);
  const hangup = new AbortController();
  const res = await fetch(`${follower.base}/events`, { headers: { cookie: cookieOf(admin.jar) }, signal: hangup.signal });
  t.is(res.status, 200);
  t.regex(res.headers.get('content-type') ?? '', /^text\/event-stream/);
  await waitFor('the stream on the leader', () => leaderProbes.hub.stats().clients === 1, 10_000);
  t.is(followerProbes.hub.stats().clients, 0, "the follower's own bus is not what it serves");
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  let got = '';
  const readUntil = async (what: string): Promise<void> => {
    while (!got.includes(what)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stream ended before ${what}`);
      got += Buffer.from(value).toString('utf8');
    }
  };
  leaderProbes.bus.publish('node.state.changed', { nodeId: 'n-live-1', status: 'ready' });
  await readUntil('n-live-1');
  leaderProbes.bus.publish('node.state.changed', { nodeId: 'n-live-2', status: 'ready' });
  await readUntil('n-live-2');
  t.regex(got, /^retry: \d+/);
  hangup.abort();
  await waitFor('the leader to see the hang-up', () => leaderProbes.hub.stats().clients === 0, 10_000);
  t.pass();
});

test('leader forward a long-poll waits on the leader and relays its answer; a hang-up reaches the leader', async (t) => {
  const { leader, follower, leaderProbes, followerProbes } = await startPair(t);
  const admin = await asAdmin(leader, follower);
  const polling = admin.post<{ value: string; served: string }>('/probe/claim');
  await waitFor('the poll on the leader', () => leaderProbes.waiting === 1, 10_000);
  t.is(followerProbes.waiting, 0);
  leaderProbes.answerPolls('run-1');
  const r = await polling;
  t.is(r.status, 200);
  t.deepEqual(r.json, { value: 'run-1', served: 'leader' });

  const hangup = new AbortController();
  const abandoned = admin.post('/probe/claim', undefined, { signal: hangup.signal }).catch(() => 'aborted');
  await waitFor('the second poll on the leader', () => leaderProbes.waiting === 1, 10_000);
  hangup.abort();
  t.is(await abandoned, 'aborted');
  await waitFor('the leader to see the hang-up', () => leaderProbes.hangups === 1, 10_000);
});

test('leader forward with no leader elected is 503 NOT_LEADER with Retry-After: 1', async (t) => {
  const { leader, follower, view } = await startPair(t);
  const admin = await asAdmin(leader, follower);
  view.url = null;
  const r = await admin.get<ProblemBody>('/probe/who');
  t.is(r.status, 503);
  t.is(r.headers.get('content-type'), 'application/problem+json');
  t.is(r.headers.get('retry-after'), '1');
  t.like(r.json, { code: 'NOT_LEADER', detail: 'no controller leads right now; retry' });
});

test('leader forward to an unreachable leader is 503 NOT_LEADER with Retry-After, without its address', async (t) => {
  const { leader, follower, view } = await startPair(t);
  const admin = await asAdmin(leader, follower);
  const closed = createServer().listen(0, '127.0.0.1');
  await once(closed, 'listening');
  const { port } = closed.address() as AddressInfo;
  await new Promise((resolve) => closed.close(resolve));
  view.url = `http://127.0.0.1:${port}`;
  const r = await admin.post<ProblemBody>('/probe/echo', { text: 'x' });
  t.is(r.status, 503);
  t.is(r.headers.get('retry-after'), '1');
  t.like(r.json, { code: 'NOT_LEADER', detail: 'the leading controller could not be reached; retry' });
  t.false(r.text.includes(String(port)), 'no internal address in the answer');
  t.true(logged(follower, { leader: view.url }, 'the leader could not be reached'));
});

test('leader forward a request already forwarded is not forwarded again: 503 NOT_LEADER, even in a loop', async (t) => {
  const { follower, leader, view } = await startPair(t);
  const admin = await asAdmin(leader, follower);
  // Two controllers that each think the other leads: here, one that thinks itself the leader's address.
  view.url = follower.base;
  const r = await admin.get<ProblemBody>('/probe/who');
  t.is(r.status, 503);
  t.is(r.json.code, 'NOT_LEADER');
  t.is(r.headers.get('retry-after'), '1');
  t.false(logged(leader, { route: '/probe/who' }), 'the leader never saw it');
  // A caller sending the marker itself gets the same from a follower.
  view.url = leader.base;
  const marked = await admin.get<ProblemBody>('/probe/who', { headers: { 'x-quarry-forwarded-by': 'v1' } });
  t.is(marked.status, 503);
});

test('leader forward routes that any controller answers are served by the follower itself', async (t) => {
  const { follower, leader } = await startPair(t);
  const admin = await follower.admin();
  const r = await admin.get<Seen>('/probe/local', { headers: { 'x-request-id': 'fwd-local' } });
  t.is(r.status, 200);
  t.is(r.json.served, 'follower');
  t.is(r.json.marker, '');
  t.is((await admin.get('/users')).status, 200);
  t.is((await admin.get('/nowhere')).status, 404);
  t.false(logged(leader, { requestId: 'fwd-local' }));
});

test('leader forward a follower that becomes the leader serves the leader-only routes itself', async (t) => {
  const { follower, view } = await startPair(t);
  const admin = await follower.admin();
  view.isLeader = true;
  view.url = follower.base;
  t.is((await admin.get<Seen>('/probe/who')).json.served, 'follower');
});

test('leader forward the leader believes the address a follower signs, never one a caller writes', async (t) => {
  const { follower, leader } = await startPair(t);
  const cookie = cookieOf((await asAdmin(leader, follower)).jar);
  // Through the follower from 127.0.0.2, with an address of the caller's own in X-Forwarded-For.
  const via = seenOf(
    (await send(`${follower.base}/probe/who`, { from: '127.0.0.2', headers: { cookie, 'x-forwarded-for': '203.0.113.7' } })).text,
  );
  t.like(via, { served: 'leader', ip: '127.0.0.2', peer: '127.0.0.2', proto: 'http', forwardedFor: '203.0.113.7, 127.0.0.2' });

  // Straight to the leader with a marker the caller made: ignored whole.
  const forged = `v1;peer=203.0.113.7;client=203.0.113.7;proto=https;at=${Date.now()};sig=${'A'.repeat(43)}`;
  const direct = seenOf(
    (await send(`${leader.base}/probe/who`, { from: '127.0.0.2', headers: { cookie, 'x-quarry-forwarded-by': forged } })).text,
  );
  t.like(direct, { ip: '127.0.0.2', peer: '127.0.0.2', proto: 'http' });

  // A real marker with its addresses changed, or kept whole on another request (another id),
  // claims nothing either.
  const replay = seenOf(
    (
      await send(`${leader.base}/probe/who`, {
        from: '127.0.0.2',
        headers: { cookie, 'x-quarry-forwarded-by': via.marker.replace('127.0.0.2', '127.0.0.9').replace('127.0.0.2', '127.0.0.9') },
      })
    ).text,
  );
  t.like(replay, { ip: '127.0.0.2', peer: '127.0.0.2' });
  const otherRequest = seenOf(
    (await send(`${leader.base}/probe/who`, { from: '127.0.0.3', headers: { cookie, 'x-quarry-forwarded-by': via.marker } })).text,
  );
  t.is(otherRequest.ip, '127.0.0.3');
});

test('leader forward GET /leaderz is 200 leader on the leader, 503 NOT_LEADER on a follower, public', async (t) => {
  const { follower, leader, view } = await startPair(t);
  const lead = await leader.client().get('/leaderz');
  t.is(lead.status, 200);
  t.is(lead.text, 'leader');
  t.regex(lead.headers.get('content-type') ?? '', /^text\/plain/);
  const follows = await follower.client().get<ProblemBody>('/leaderz');
  t.is(follows.status, 503);
  t.like(follows.json, { code: 'NOT_LEADER', detail: 'this controller follows' });
  view.isLeader = true;
  t.is((await follower.client().get('/leaderz')).status, 200, 'asked of the view each time');
});
