// The template sandbox's walls, one by one: template code runs in a vm context of its own
// (no process, require, import(), fetch; constructor chains end at a Function that cannot
// compile strings), inside a process with an empty environment, Node's permission model and
// its own empty network namespace, bounded in time, memory and output. Every attempt answers
// 422 and neither the secret, the file nor the test's server is ever reached.
import test, { type ExecutionContext } from 'ava';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { TemplateSandbox, type SandboxOptions } from '../../src/render/sandbox.js';
import { findUnshare, spawnRenderChild, unshareArgs } from '../../src/render/child-process.js';
import { countingServer } from '../helpers/counting-server.js';
import { waitFor } from '../lab/harness.js';

const ENV_SECRET = 'env-secret-7f3a9c1e5b';
const FILE_SECRET = 'file-secret-2d8e4b6a0c';
process.env.QUARRY_SANDBOX_TEST_SECRET = ENV_SECRET;

async function secretFile(t: ExecutionContext): Promise<{ dir: string; file: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'qsbx-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'secret.txt');
  await writeFile(file, FILE_SECRET);
  return { dir, file };
}

function sandbox(t: ExecutionContext, opts: Partial<SandboxOptions> = {}): TemplateSandbox {
  const s = new TemplateSandbox({ timeoutMs: 5_000, ...opts });
  t.teardown(() => s.close());
  return s;
}

test('template sandbox renders ejs as ejs does: escaped and raw output, trimming, locals', async (t) => {
  const s = sandbox(t);
  t.is(
    await s.render('a', 1, 'hi <%= who %> <%- who %><% if (n > 1) { -%> many<% } %>', { who: '<b>&"\'', n: 2 }),
    'hi &lt;b&gt;&amp;&#34;&#39; <b>&"\' many',
  );
  t.is(
    await s.render('b', 1, '<%= list.map((x) => x * 2).join(",") %> <%= JSON.stringify(obj) %>', { list: [1, 2], obj: { k: null } }),
    '2,4 {&#34;k&#34;:null}',
  );
  t.is(await s.render('c', 1, '<%= agent ? agent.secret : "none" %>', { agent: undefined }), 'none');
});

test('template sandbox a template reaches no secret, file, network or process of the server', async (t) => {
  const s = sandbox(t);
  const { file } = await secretFile(t);
  const server = await countingServer(t);
  const f = JSON.stringify(file);
  const url = JSON.stringify(`http://127.0.0.1:${server.port}/`);
  const attempts: Record<string, string> = {
    'process.env': '<%= process.env.QUARRY_SANDBOX_TEST_SECRET %>',
    getBuiltinModule: `<%= process.getBuiltinModule('fs').readFileSync(${f}, 'utf8') %>`,
    'constructor chain': "<%= this.constructor.constructor('return process')().env.QUARRY_SANDBOX_TEST_SECRET %>",
    'constructor chain to fs': `<%= this.constructor.constructor('return process')().getBuiltinModule('fs').readFileSync(${f}, 'utf8') %>`,
    "a local's constructor chain": "<%= node.constructor.constructor('return process')().pid %>",
    "an error's constructor chain": "<% try { null.x } catch (e) { %><%= e.constructor.constructor('return process')().pid %><% } %>",
    'global.process': '<%= global.process.env.QUARRY_SANDBOX_TEST_SECRET %>',
    'globalThis.process': '<%= globalThis.process.env.QUARRY_SANDBOX_TEST_SECRET %>',
    require: `<%= require('fs').readFileSync(${f}, 'utf8') %>`,
    'import()': `<% import('node:fs').then((fs) => fs.readFileSync(${f})) %>`,
    fetch: `<%= fetch(${url}) %>`,
    eval: "<%= eval('1 + 1') %>",
    'stack frames':
      "<% Error.prepareStackTrace = (e, frames) => frames; const fr = new Error().stack; %><%= fr.map((c) => c.getFunction()).filter(Boolean).map((fn) => fn.constructor('return process')().pid).join() %>",
    include: `<%- include(${f}) %>`,
  };
  for (const [what, source] of Object.entries(attempts)) {
    const err = await t.throwsAsync(
      s.render('attack', 1 + Object.keys(attempts).indexOf(what), source, { node: { id: 'n1' } }),
      undefined,
      what,
    );
    t.is((err as { status?: number }).status, 422, what);
    t.is((err as { code?: string }).code, 'TEMPLATE_FAILED', what);
    t.false(err.message.includes(ENV_SECRET) || err.message.includes(FILE_SECRET), what);
  }
  // What the context offers, and nothing of the host: its global object holds no process.
  t.is(
    await s.render('look', 1, '<%= typeof process %> <%= typeof globalThis.process %> <%= typeof require %> <%= typeof fetch %>', {}),
    'undefined undefined undefined undefined',
  );
  t.is(server.hits(), 0);
});

test('template sandbox an endless loop, in the template or in a promise job it queued, is stopped at the deadline', async (t) => {
  const s = sandbox(t, { timeoutMs: 400 });
  await t.throwsAsync(s.render('spin', 1, '<% for (;;) {} %>', {}), {
    code: 'TEMPLATE_TIMEOUT',
    message: /spin did not finish rendering within 400 ms/,
  });
  await t.throwsAsync(s.render('later', 1, '<% Promise.resolve().then(() => { for (;;) {} }) %>ok', {}), { code: 'TEMPLATE_TIMEOUT' });
  t.is(await s.render('next', 1, 'ok <%= n %>', { n: 7 }), 'ok 7');
});

test('template sandbox a render that allocates without end is stopped by the memory cap and the next one renders', async (t) => {
  const s = sandbox(t, { timeoutMs: 20_000, memoryMb: 32 });
  const err = await t.throwsAsync(s.render('hog', 1, '<% const a = []; for (;;) a.push(new Array(1e6).fill(1)) %>', {}));
  t.is((err as { status?: number }).status, 422);
  t.is((err as { code?: string }).code, 'TEMPLATE_FAILED');
  t.regex(err.message, /hog failed to render: the render ran out of memory \(limit 32 MB\)/);
  await t.throwsAsync(s.render('long', 1, "<% let x = 'x'; for (;;) x += x %>", {}), {
    code: 'TEMPLATE_FAILED',
    message: /Invalid string length/,
  });
  t.is(await s.render('after', 1, 'fine', {}), 'fine');
});

test('template sandbox output past the limit is refused', async (t) => {
  const s = sandbox(t, { maxOutput: 1_000 });
  await t.throwsAsync(s.render('big', 1, "<%= 'x'.repeat(1001) %>", {}), {
    code: 'TEMPLATE_FAILED',
    message: /larger than 1000 characters/,
  });
  t.is((await s.render('fits', 1, "<%= 'x'.repeat(1000) %>", {})).length, 1_000);
});

test('template sandbox each render has a fresh context: nothing one leaves behind reaches the next', async (t) => {
  const s = sandbox(t);
  t.is(await s.render('a', 1, '<% globalThis.kept = secret; String.prototype.trim = () => "poisoned" %>set', { secret: 's1' }), 'set');
  t.is(await s.render('b', 1, '<%= typeof kept %> <%= " x ".trim() %>', {}), 'undefined x');
});

test('template sandbox helper modules give templates their exports, as functions of the template context', async (t) => {
  const { dir } = await secretFile(t);
  const helper = join(dir, 'helper.js');
  await writeFile(
    helper,
    "const BANG = '!';\nexport function shout(s) { return String(s).toUpperCase() + BANG; }\nexport const HELPER = 'h1';\n",
  );
  const s = sandbox(t, { helpers: [pathToFileURL(helper)] });
  t.is(await s.render('h', 1, '<%= shout(name) %> <%= HELPER %>', { name: 'n1' }), 'N1! h1');
  await t.throwsAsync(s.render('h2', 1, "<%= shout.constructor('return process')().pid %>", {}), {
    code: 'TEMPLATE_FAILED',
    message: /Code generation from strings disallowed/,
  });
  const bad = join(dir, 'bad.js');
  await writeFile(bad, "import fs from 'node:fs';\nexport const x = fs;\n");
  const withBad = sandbox(t, { helpers: [pathToFileURL(bad)] });
  await t.throwsAsync(withBad.render('x', 1, 'x', {}), { code: 'TEMPLATE_FAILED', message: /may not import anything/ });
});

test('template sandbox the render process itself has no environment, files, child processes, workers, eval or network', async (t) => {
  const { dir, file } = await secretFile(t);
  const server = await countingServer(t);
  // Started exactly as render-child.js is, with this probe in its place.
  const probe = join(dir, 'probe.mjs');
  await writeFile(
    probe,
    `
const out = {};
const attempt = async (name, f) => { try { out[name] = 'allowed ' + String(await f()).slice(0, 80); } catch (e) { out[name] = 'denied ' + (e.code ?? e.name); } };
out.env = Object.keys(process.env);
await attempt('read', () => process.getBuiltinModule('fs').readFileSync(${JSON.stringify(file)}, 'utf8'));
await attempt('write', () => process.getBuiltinModule('fs').writeFileSync(${JSON.stringify(join(dir, 'written'))}, 'x'));
await attempt('spawn', () => process.getBuiltinModule('child_process').execFileSync('/bin/echo', ['spawned']));
await attempt('worker', () => new (process.getBuiltinModule('worker_threads').Worker)('1', { eval: true }));
await attempt('binding', () => process.binding('fs'));
await attempt('eval', () => Function('return 1')());
await attempt('net', () => new Promise((resolve, reject) => {
  const s = process.getBuiltinModule('net').connect(${server.port}, '127.0.0.1', () => { s.end(); resolve('connected'); });
  s.on('error', reject);
}));
process.stdout.write(JSON.stringify(out));
`,
  );
  const unshare = findUnshare();
  const child = spawnRenderChild({ memoryMb: 64, helpers: [], unshare: unshare ? unshareArgs() : null }, unshare, pathToFileURL(probe));
  let stdout = '';
  child.stdout?.on('data', (d: Buffer) => (stdout += d.toString()));
  await new Promise((r) => child.on('close', r));
  const out = JSON.parse(stdout) as Record<string, unknown>;
  t.deepEqual(out.env, []);
  for (const what of ['read', 'write', 'spawn', 'worker', 'binding']) t.is(out[what], 'denied ERR_ACCESS_DENIED', what);
  t.is(out.eval, 'denied EvalError');
  if (unshare) {
    t.regex(String(out.net), /^denied (ENETUNREACH|ECONNREFUSED)$/);
    t.is(server.hits(), 0);
  } else {
    t.log('no util-linux unshare here: the network namespace is not tested');
  }
  t.false(stdout.includes(FILE_SECRET));
});

test('template sandbox an idle render process is stopped and the next render starts a fresh one', async (t) => {
  const s = sandbox(t, { idleMs: 20 });
  t.is(await s.render('a', 1, 'one', {}), 'one');
  const first = s.stats().pid;
  t.not(first, null);
  await waitFor('the idle render process to stop', () => s.stats().pid === null);
  t.is(await s.render('a', 1, 'two', {}), 'two');
  t.not(s.stats().pid, first);
});

// Serial: the other tests of this file spawn render processes. A fork that happens while the
// fake's file is still open for writing keeps that descriptor until it execs, and exec'ing the
// fake meanwhile fails with ETXTBSY ("text file busy"), a failure of the test, not of the sandbox.
test.serial('template sandbox a host that cannot make a network namespace renders without one and says so', async (t) => {
  const { dir } = await secretFile(t);
  const fake = join(dir, 'unshare');
  await writeFile(fake, '#!/bin/sh\necho "unshare: unshare failed: Operation not permitted" >&2\nexit 1\n', { mode: 0o755 });
  const logged: string[] = [];
  const s = sandbox(t, {
    unsharePath: fake,
    lane: 'boot',
    log: (level, message, fields) => logged.push(`${level} ${message} ${JSON.stringify(fields)}`),
  });
  t.true(s.stats().networkIsolated);
  t.is(await s.render('a', 1, 'still <%= n %>', { n: 1 }), 'still 1');
  t.false(s.stats().networkIsolated);
  t.is(logged.length, 1);
  t.regex(logged[0]!, /^warn templates render without a network namespace of their own.*"lane":"boot".*Operation not permitted/);
});
