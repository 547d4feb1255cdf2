// Attacks on templates, replayed over HTTP against a running lab Quarry (issue #12, findings 8
// and 9): a template is code an admin writes and anyone may render publicly, so it must run
// without the server's powers, and a flood of renders of a slow one must not hold up boots.
import test from 'ava';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, type Reply } from '../http/client.js';
import { admin } from '../http/agent-helpers.js';
import { ADMIN_PASSWORD, startLab, waitFor } from '../lab/harness.js';
import { countingServer } from '../helpers/counting-server.js';
import type { ProblemBody } from '../http/bodies.js';

// As in a real deployment, the admin password is in the master's environment.
process.env.ADMIN_PASSWORD = ADMIN_PASSWORD;

const put = <T = unknown>(c: Client, name: string, source: string) =>
  c.request<T>('PUT', `/templates/${name}`, { body: source, headers: { 'content-type': 'text/plain' } });

test('attack an admin template that renders process.env.ADMIN_PASSWORD into its public output is refused', async (t) => {
  const q = await startLab(t, 0);
  const c = await admin(q);
  const attempts = [
    '<%= process.env.ADMIN_PASSWORD %>',
    "<%= this.constructor.constructor('return process')().env.ADMIN_PASSWORD %>",
    "<%= (() => {}).constructor('return process.env.ADMIN_PASSWORD')() %>",
    '<%= global.process.env.ADMIN_PASSWORD %>',
    '<%= JSON.stringify(globalThis) %>',
  ];
  for (const [i, source] of attempts.entries()) {
    t.is((await put(c, `steal-env-${i}`, source)).status, 200, source);
    const r = await new Client(q.url).get<ProblemBody>(`/templates/rendered/steal-env-${i}`);
    t.false(r.text.includes(ADMIN_PASSWORD), source);
    if (i < attempts.length - 1) {
      t.is(r.status, 422, source);
      t.is(r.json.code, 'TEMPLATE_FAILED', source);
    } else {
      // The template's global object holds nothing of the server to show: only the quoting
      // helpers (src/render/quote.ts), whose functions JSON leaves out.
      t.is(r.status, 200);
      t.deepEqual(JSON.parse(r.text.replaceAll('&#34;', '"')), { quote: {}, q: {} }, source); // <%= escapes quotes
    }
  }
});

test('attack an admin template that reads a file of the master is refused', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'qatk-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'journal.1.log');
  const secret = 'client.admin-key-AQBsecretsecretsecret==';
  await writeFile(file, secret);
  const q = await startLab(t, 0);
  const c = await admin(q);
  const f = JSON.stringify(file);
  const attempts = [
    `<%= process.getBuiltinModule('fs').readFileSync(${f}, 'utf8') %>`,
    `<%= this.constructor.constructor('return process')().getBuiltinModule('fs').readFileSync(${f}, 'utf8') %>`,
    `<%= require('fs').readFileSync(${f}, 'utf8') %>`,
    `<%- include(${f}) %>`,
  ];
  for (const [i, source] of attempts.entries()) {
    t.is((await put(c, `steal-file-${i}`, source)).status, 200, source);
    const r = await new Client(q.url).get(`/templates/rendered/steal-file-${i}`);
    t.is(r.status, 422, source);
    t.false(r.text.includes(secret), source);
  }
  // import() is refused when the source is stored: nothing changes.
  const imp = await put<ProblemBody>(c, 'steal-file-import', `<% import('node:fs').then((fs) => fs.readFileSync(${f})) %>`);
  t.is(imp.status, 400);
  t.is(imp.json.code, 'TEMPLATE_INVALID');
  t.regex(imp.json.detail, /line 1: import\(\) is not available/);
  t.is((await new Client(q.url).get('/templates/rendered/steal-file-import')).status, 404);
});

test('attack a template that calls a server on the network is refused and the server sees nothing', async (t) => {
  const server = await countingServer(t);
  const url = JSON.stringify(`http://127.0.0.1:${server.port}/exfiltrate`);
  const q = await startLab(t, 0);
  const c = await admin(q);
  const attempts = [
    `<%= fetch(${url}) %>`,
    `<% this.constructor.constructor('return process')().getBuiltinModule('http').get(${url}) %>`,
    `<% process.getBuiltinModule('http').get(${url}) %>`,
  ];
  for (const [i, source] of attempts.entries()) {
    t.is((await put(c, `call-out-${i}`, source)).status, 200, source);
    t.is((await new Client(q.url).get(`/templates/rendered/call-out-${i}`)).status, 422, source);
  }
  t.is(server.hits(), 0);
});

test('attack a flood of public renders of a slow template holding up boots is refused', async (t) => {
  const q = await startLab(t, 0, { env: { TEMPLATE_QUEUE: '2', TEMPLATE_TIMEOUT_MS: '60000' } });
  const c = await admin(q);
  t.is((await put(c, 'slow', '<% for (;;) {} %>')).status, 200);
  const abort = new AbortController();
  t.teardown(() => abort.abort());
  const answers: Array<Reply<ProblemBody>> = [];
  // One render runs, two wait; the other five are refused at once.
  const flood = Array.from({ length: 8 }, () =>
    new Client(q.url).get<ProblemBody>('/templates/rendered/slow', { signal: abort.signal }).then(
      (r) => answers.push(r),
      () => undefined,
    ),
  );
  await waitFor('five refusals', () => answers.length >= 5);
  t.is(answers.length, 5);
  for (const r of answers) {
    t.is(r.status, 503);
    t.is(r.json.code, 'TEMPLATE_BUSY');
    t.is(r.headers.get('retry-after'), '1');
  }
  // Boots are answered while the three admitted renders of the slow template are still pending.
  const boot = await new Client(q.url).get('/boot/default');
  t.is(boot.status, 200);
  t.regex(boot.text, /^#!ipxe/);
  const cloudInit = await new Client(q.url).get('/templates/rendered/cloud-init');
  t.is(cloudInit.status, 200);
  t.regex(cloudInit.text, /^#cloud-config/m);
  t.is(answers.length, 5);
  abort.abort();
  await Promise.all(flood);
});
