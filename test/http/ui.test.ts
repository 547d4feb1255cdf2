// GET /ui and /ui/{path}: the dashboard's files from memory, public, under a strict CSP, with
// hashed names cached for ever and the page itself checked every time; nothing outside the
// built folder is reachable.
import test, { type ExecutionContext } from 'ava';
import { request } from 'node:http';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { uiRoutes } from '../../src/http/router.js';
import { UI_CSP } from '../../src/http/routes/ui.js';
import { NO_UI, loadUiAssets } from '../../src/http/ui-assets.js';
import { startHarness, type Harness } from './harness.js';

const INDEX = '<!doctype html><title>Quarry</title><script type="module" src="/ui/app-ABCD2345.js"></script>';
const SECRET = 'not-for-the-browser';

async function withUi(t: ExecutionContext): Promise<Harness> {
  const root = await mkdtemp(join(tmpdir(), 'quarry-ui-'));
  t.teardown(() => rm(root, { recursive: true, force: true }));
  const dir = join(root, 'ui');
  await mkdir(join(dir, 'sub'), { recursive: true });
  await writeFile(join(dir, 'index.html'), INDEX);
  await writeFile(join(dir, 'app-ABCD2345.js'), 'console.log(1);');
  await writeFile(join(dir, 'style-EFGH6789.css'), 'body{}');
  await writeFile(join(dir, 'notes.md'), 'an unknown type is not served');
  await writeFile(join(dir, 'sub', 'deep.js'), SECRET);
  await writeFile(join(root, 'secret.txt'), SECRET);
  const h = await startHarness({ areas: [uiRoutes(await loadUiAssets(dir))] });
  t.teardown(() => h.close());
  return h;
}

/** A request sent as written: fetch would resolve the dot segments away before sending. */
function raw(base: string, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(`${base}/`, { path }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('ui the page answers without a session, as HTML under a strict Content-Security-Policy, checked on every load', async (t) => {
  const h = await withUi(t);
  for (const path of ['/ui', '/ui/', '/ui/nodes', '/ui/questions']) {
    const r = await h.client().get(path);
    t.is(r.status, 200, path);
    t.is(r.headers.get('content-type'), 'text/html; charset=utf-8', path);
    t.is(r.text, INDEX, path);
    t.is(r.headers.get('cache-control'), 'no-cache', path);
    const csp = r.headers.get('content-security-policy') ?? '';
    t.is(csp, UI_CSP, path);
    t.regex(csp, /default-src 'self'/);
    t.regex(csp, /script-src 'self'(;|$)/, 'no inline script, no other origin');
    t.notRegex(csp, /unsafe-inline|unsafe-eval|\*/);
    t.is(r.headers.get('x-content-type-options'), 'nosniff');
  }
});

test('ui hashed files answer with their media type and are cached for ever; HEAD works too', async (t) => {
  const h = await withUi(t);
  const js = await h.client().get('/ui/app-ABCD2345.js');
  t.is(js.status, 200);
  t.is(js.headers.get('content-type'), 'text/javascript; charset=utf-8');
  t.is(js.headers.get('cache-control'), 'public, max-age=31536000, immutable');
  t.is(js.text, 'console.log(1);');
  const css = await h.client().get('/ui/style-EFGH6789.css');
  t.is(css.headers.get('content-type'), 'text/css; charset=utf-8');
  t.truthy(css.headers.get('content-security-policy'));
  const head = await fetch(`${h.base}/ui/app-ABCD2345.js`, { method: 'HEAD' });
  t.is(head.status, 200);
  t.is(head.headers.get('content-type'), 'text/javascript; charset=utf-8');
});

test('ui a missing file is 404 problem+json, not the page', async (t) => {
  const h = await withUi(t);
  for (const path of ['/ui/app-ZZZZ2345.js', '/ui/favicon.ico', '/ui/notes.md', '/ui/sub']) {
    const r = await h.client().get<{ code: string }>(path);
    if (path === '/ui/sub') {
      t.is(r.status, 200, 'a name without an extension is a path of the app');
      continue;
    }
    t.is(r.status, 404, path);
    t.is(r.headers.get('content-type'), 'application/problem+json', path);
    t.is(r.json.code, 'NOT_FOUND', path);
  }
});

test('ui a path that leaves the folder or goes below it is refused, and nothing outside is served', async (t) => {
  const h = await withUi(t);
  const tries = [
    '/ui/../secret.txt',
    '/ui/..%2Fsecret.txt',
    '/ui/%2e%2e%2fsecret.txt',
    '/ui/..%5Csecret.txt',
    '/ui/%2e%2e',
    '/ui/.',
    '/ui/sub/deep.js',
    '/ui/sub%2Fdeep.js',
    '/ui/.hidden.js',
    '/ui/app-ABCD2345.js%00.html',
  ];
  for (const path of tries) {
    const r = await raw(h.base, path);
    t.true(r.status === 400 || r.status === 404, `${path}: ${r.status}`);
    t.false(r.body.includes(SECRET), path);
  }
});

test('ui an unbuilt dashboard answers 404 saying how to build it', async (t) => {
  const h = await startHarness({ areas: [uiRoutes(NO_UI)] });
  t.teardown(() => h.close());
  const r = await h.client().get<{ detail: string }>('/ui');
  t.is(r.status, 404);
  t.regex(r.json.detail, /npm run build/);
  t.deepEqual(await loadUiAssets(join(tmpdir(), 'quarry-ui-no-such-dir')), NO_UI);
});
