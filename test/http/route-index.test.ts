// The route index: a request is matched only against the routes of its first path segment, with
// the same answers as one router over the whole table.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import Koa, { type Middleware } from 'koa';
import { firstSegment, indexedRoutes } from '../../src/http/route-index.js';

const says =
  (what: string): Middleware =>
  (ctx) => {
    ctx.body = { what, params: (ctx as { params?: unknown }).params ?? null };
  };

async function serve(t: { teardown: (fn: () => void) => void }, mw: Middleware): Promise<string> {
  const app = new Koa();
  app.use(mw);
  app.use((ctx) => {
    ctx.status = 404;
    ctx.body = { what: 'fallback' };
  });
  const handle = app.callback();
  const server = createServer((req, res) => void handle(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => server.close());
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

test('route index sends a request to its area, the most specific route first, without regard to case', async (t) => {
  const base = await serve(
    t,
    indexedRoutes([
      { path: '/images/:imageId', method: 'GET', middleware: says('one image') },
      { path: '/images/downloaded', method: 'GET', middleware: says('downloaded') },
      { path: '/nodes/:nodeId', method: 'GET', middleware: says('node') },
      { path: '/nodes/:nodeId', method: 'DELETE', middleware: says('node deleted') },
    ]),
  );
  const get = async (path: string, method = 'GET') => ((await (await fetch(`${base}${path}`, { method })).json()) as { what: string }).what;
  t.is(await get('/images/downloaded'), 'downloaded');
  t.is(await get('/images/abc'), 'one image');
  t.is(await get('/NODES/n1'), 'node');
  t.is(await get('/nodes/n1', 'DELETE'), 'node deleted');
  t.deepEqual(await (await fetch(`${base}/nodes/n7`)).json(), { what: 'node', params: { nodeId: 'n7' } });
  // Unknown areas and unknown paths of a known area reach the fallback.
  t.is(await get('/disks/d1'), 'fallback');
  t.is(await get('/nodes/n1/nics'), 'fallback');
  t.is(await get('//nodes/n1'), 'fallback');
  t.is(await get('/'), 'fallback');
});

test('route index refuses a route whose first segment is not literal', (t) => {
  const error = t.throws(() => indexedRoutes([{ path: '/:area/x', method: 'GET', middleware: says('x') }]));
  t.regex(error.message, /first path segment must be literal/);
  t.is(firstSegment('/Ceph/osd'), 'ceph');
  t.is(firstSegment('/status'), 'status');
});
