// The dashboard in a real headless Chromium (Debian's /usr/bin/chromium through puppeteer-core)
// against a lab Quarry on a real port: log in through the form, see the lab's nodes, apply the
// example spec with the quarry CLI and watch the overview reach "converged" without a reload, answer a wipe question
// from the page, and keep a screenshot of the overview (test-artifacts/overview.png).
// Needs `npm run build` first (the page is dist/ui); no network namespaces, no root.
import test, { type ExecutionContext } from 'ava';
import { access, mkdir, readFile, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import puppeteer, { type Browser, type Page } from 'puppeteer-core';
import { configHome, quarry } from '../cli/helpers.js';
import { Client } from '../http/client.js';
import { ADMIN_PASSWORD, allActive, startLab, waitFor } from '../lab/harness.js';

const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
const EXAMPLES = join(process.cwd(), 'examples', 'specs');
const ARTIFACTS = join(process.cwd(), 'test-artifacts');
const LONG = 120_000;

interface DiskRow {
  id: string;
  nodeHostname: string;
  serial: string;
  hasFilesystem: boolean;
  reasons: string[];
}

async function launch(t: ExecutionContext): Promise<{ browser: Browser; page: Page; problems: string[] }> {
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // CI runs as root, where Chromium's sandbox cannot start; /dev/shm is small in containers.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'],
  });
  // Registered before anything can fail: the browser goes whatever happens next.
  t.teardown(() => browser.close());
  const page = await browser.newPage();
  await page.setViewport({ width: 1400, height: 1000 });
  // Bounds, not speeds: a loaded 2-core machine may take long to render after a read.
  page.setDefaultTimeout(LONG);
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(`page error: ${String(err)}`));
  page.on('console', (m) => {
    // A CSP violation or a script error is a console error. An API answer of 401 (before login),
    // 404 (GET /audit where it does not exist) or 503 (metrics before quorum) is logged by the
    // browser too, and the page handles those.
    if (m.type() === 'error' && !/^Failed to load resource: the server responded with a status of (401|404|503)/.test(m.text()))
      problems.push(`console: ${m.text()}`);
  });
  return { browser, page, problems };
}

/** A page expression's value. The tests' tsconfig has no DOM types (the server's code must not
 * see them), so what runs in the page is written as a string. */
const js = async <T>(page: Page, expression: string): Promise<T> => (await page.evaluate(expression)) as T;
const text = (page: Page, selector: string) =>
  js<string | null>(page, `document.querySelector(${JSON.stringify(selector)})?.textContent ?? null`);
const texts = (page: Page, selector: string) =>
  js<string[]>(page, `[...document.querySelectorAll(${JSON.stringify(selector)})].map((e) => e.textContent ?? '')`);

const click = async (page: Page, view: string) => {
  await page.click(`nav a[data-view="${view}"]`);
  await page.waitForSelector(`main#view[data-view="${view}"]`);
};

test('ui system: log in, see the nodes, watch the example spec converge live, answer a wipe question, keep a screenshot', async (t) => {
  await access(join(process.cwd(), 'dist', 'ui', 'index.html')).catch(() => {
    throw new Error('dist/ui is missing: run `npm run build` first');
  });
  const q = await startLab(t, 3, { env: { SSE_STREAMS_PER_USER: '8' } });
  const nodes = await allActive(q, 3);
  const hostnames = nodes.map((n) => n.spec.hostname).sort();
  const { page, problems } = await launch(t);

  // The page without a session is the login form; the form logs in (cookies set by the server).
  const first = await page.goto(`${q.url}/ui`);
  t.is(first?.status(), 200);
  t.regex(first?.headers()['content-security-policy'] ?? '', /default-src 'self'/);
  await page.waitForSelector('form#login');
  await page.type('input[name=username]', 'admin');
  await page.type('input[name=password]', ADMIN_PASSWORD);
  await page.click('form#login button[type=submit]');
  await page.waitForSelector('nav a[data-view="nodes"]');
  const cookies = await page.browserContext().cookies();
  t.true(cookies.some((c) => c.name === 'access_token' && c.httpOnly && c.sameSite === 'Strict'));
  // Whatever happens from here must happen without a reload: a reload would lose this.
  await js(page, `window.quarryMarker = 'same page'`);
  const marker = () => js<string | undefined>(page, 'window.quarryMarker');
  await page.waitForSelector('#connection.conn-live', { timeout: LONG });

  // The nodes view shows every lab machine by hostname.
  await click(page, 'nodes');
  for (const h of hostnames) await page.waitForSelector(`article.node[data-node="${h}"]`, { timeout: LONG });
  t.is(page.url(), `${q.url}/ui/nodes`);

  // The example spec, applied with the quarry CLI as an operator would (it lands in the watched
  // folder through PUT /specs/files); the overview follows it to converged.
  await click(page, 'overview');
  await page.waitForSelector('#converged');
  const home = await configHome(t);
  const login = await quarry(['login', '--server', q.url, '--username', 'admin', '--password-stdin'], { home, input: ADMIN_PASSWORD });
  t.is(login.code, 0, login.stderr);
  for (const f of await readdir(EXAMPLES)) {
    const applied = await quarry(['apply', '-f', join(EXAMPLES, f)], { home });
    t.is(applied.code, 0, applied.stderr);
  }
  await page.waitForSelector('#converged[data-converged="true"]', { timeout: LONG * 2 });
  t.is(await marker(), 'same page', 'the overview reached converged without a reload');
  t.is(await text(page, '#converged'), 'converged');
  // The failure-domain map draws the example's racks and their hosts' OSDs, all up.
  await page.waitForSelector('#failure-domains rect.osd-up');
  const racks = await texts(page, '#failure-domains .rack-name');
  t.true(racks.includes('rack r1') && racks.includes('rack r2'), racks.join(', '));
  t.deepEqual(await texts(page, '#failure-domains rect.osd-down'), []);
  t.true((await texts(page, '#feed li')).length > 0, 'the live feed shows events');

  await mkdir(ARTIFACTS, { recursive: true });
  const shot = join(ARTIFACTS, 'overview.png');
  await page.screenshot({ path: shot, fullPage: true });
  const png = await readFile(shot);
  t.true(png.length > 1000, `a screenshot of ${png.length} bytes`);
  t.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG');

  // The other views, each kept as a screenshot too: the disk ledger, a run's log, a dry run of a
  // file with an error, shown at its line and column.
  await click(page, 'disks');
  await page.waitForSelector('table.disks tbody tr');
  await page.screenshot({ path: join(ARTIFACTS, 'disks.png'), fullPage: true });
  await click(page, 'runs');
  // The view lists the runs once its request answers: wait for a row, as for the disks above.
  await page.waitForSelector('tr[data-run] button.link');
  await page.click('tr[data-run] button.link');
  await waitFor('a run log', async () => ((await text(page, '#run-log')) ?? '').length > 0);
  await click(page, 'specs');
  await page.waitForSelector('article.file[data-file="lab-cluster.yaml"]');
  await page.type('textarea[name=yaml]', 'apiVersion: quarry/v1\nkind: Node\nmetadata:\n  name: x\nspec:\n  match: { mac: not-a-mac }\n');
  await page.click('form#plan button[type=submit]');
  await page.waitForSelector('#plan-result[data-valid="false"]');
  t.regex((await texts(page, '#plan-result .file-errors li')).join('\n'), /plan\.yaml:\d+:\d+/);
  await page.screenshot({ path: join(ARTIFACTS, 'specs.png'), fullPage: true });
  await click(page, 'nodes');
  await page.screenshot({ path: join(ARTIFACTS, 'nodes.png'), fullPage: true });

  // A wipe of a disk holding a filesystem asks first; the page answers it and it goes away.
  const api = new Client(q.url);
  t.is((await api.post('/user/login', { username: 'admin', password: ADMIN_PASSWORD })).status, 200);
  const disks = (await api.get<DiskRow[]>('/disks')).json;
  const dirty = disks.find((d) => d.hasFilesystem && d.reasons.length === 1 && d.reasons[0] === 'has-filesystem');
  if (!dirty) throw new Error(`no disk with only a filesystem in the lab: ${JSON.stringify(disks.map((d) => d.reasons))}`);
  await click(page, 'questions');
  t.deepEqual((await api.post('/invoke/disk', { operation: 'disk.wipe', diskIds: [dirty.id] })).json, {
    results: [{ id: dirty.id, status: 'scheduled' }],
  });
  await page.waitForSelector('li.question[data-task="disk.wipe.confirm"]', { timeout: LONG });
  const questionId = await js<string>(page, `document.querySelector('li.question[data-task="disk.wipe.confirm"]').dataset.question`);
  t.true((await text(page, `li.question[data-question="${questionId}"]`))?.includes(dirty.serial), 'the question names the disk');
  await page.click(`li.question[data-question="${questionId}"] button[data-answer="no"]`);
  await page.waitForSelector(`li.question[data-question="${questionId}"]`, { hidden: true, timeout: LONG });
  await waitFor('the question answered', async () => {
    const open = (await api.get<Array<{ id: string }>>('/task/questions/pending')).json;
    return !open.some((x) => x.id === questionId);
  });
  t.is(await marker(), 'same page');
  t.deepEqual(problems, [], 'no script error and no CSP violation in the page');
});

test('ui system: with 2-second access tokens the page refreshes its session and keeps working without a login form', async (t) => {
  await access(join(process.cwd(), 'dist', 'ui', 'index.html')).catch(() => {
    throw new Error('dist/ui is missing: run `npm run build` first');
  });
  const q = await startLab(t, 2, { auth: { scrypt: { N: 2 ** 10, r: 8, p: 1 }, accessSeconds: 2 } });
  const hostnames = (await allActive(q, 2)).map((n) => n.spec.hostname);
  const { page, problems } = await launch(t);
  let refreshed = 0;
  page.on('response', (r) => {
    if (r.url().endsWith('/user/refresh') && r.status() === 200) refreshed++;
  });
  await page.goto(`${q.url}/ui/nodes`);
  await page.waitForSelector('form#login');
  await page.type('input[name=username]', 'admin');
  await page.type('input[name=password]', ADMIN_PASSWORD);
  await page.click('form#login button[type=submit]');
  await page.waitForSelector('main#view[data-view="nodes"]');
  await js(page, `window.quarryMarker = 'same page'`);
  // Several access tokens' lives: each refreshed before or when it ran out, one at a time (two
  // refreshes with the same refresh token would end the session, and the login form would show).
  await waitFor('three refreshes', () => refreshed >= 3, LONG);
  await click(page, 'disks');
  await click(page, 'nodes');
  for (const h of hostnames) await page.waitForSelector(`article.node[data-node="${h}"]`, { timeout: LONG });
  t.is(await page.$('form#login'), null, 'still logged in');
  await page.waitForSelector('#connection.conn-live', { timeout: LONG });
  t.is(await js<string | undefined>(page, 'window.quarryMarker'), 'same page');
  // Logging out ends the session on the server too: the page is the login form again, and the
  // cookies it had open nothing any more.
  await page.click('.who button');
  await page.waitForSelector('form#login');
  t.is((await page.goto(`${q.url}/user/me`))?.status(), 401);
  t.deepEqual(problems, []);
});
