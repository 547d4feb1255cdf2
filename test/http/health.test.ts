// GET /healthz and GET /readyz: public, no detail; ready only while the store is open and the
// loops run.
import test from 'ava';
import { Client } from './client.js';
import type { ProblemBody } from './bodies.js';
import { startLab } from '../lab/harness.js';

test('health /healthz and /readyz answer ok without a session, with no detail', async (t) => {
  const q = await startLab(t, 0);
  const c = new Client(q.url);
  for (const path of ['/healthz', '/readyz']) {
    const r = await c.get(path);
    t.is(r.status, 200, path);
    t.is(r.text, 'ok', path);
    t.regex(r.headers.get('content-type') ?? '', /^text\/plain/, path);
  }
  t.is((await c.get('/healthz?verbose=1')).status, 400, 'no query: nothing more to ask for');
});

test('health /readyz is 503 NOT_READY once the loops stop, while /healthz stays ok', async (t) => {
  const q = await startLab(t, 0);
  await q.manager.stop();
  const c = new Client(q.url);
  const r = await c.get<ProblemBody>('/readyz');
  t.is(r.status, 503);
  t.is(r.json.code, 'NOT_READY');
  t.is(r.json.detail, 'not ready');
  t.is((await c.get('/healthz')).status, 200);
});

test('health /readyz is 503 NOT_READY once the store is closed', async (t) => {
  const q = await startLab(t, 0);
  await q.store.close();
  const r = await new Client(q.url).get<ProblemBody>('/readyz');
  t.is(r.status, 503);
  t.is(r.json.code, 'NOT_READY');
});
