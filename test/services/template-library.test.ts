// The template library and sandbox below HTTP: every shipped file compiles, a newer shipped
// file upgrades a template nobody edited and leaves an edited one alone, and a render stopped
// at its deadline does not hold up the renders queued behind it.
import test from 'ava';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { systemClock } from '../../src/model/clock.js';
import { checkTemplate } from '../../src/render/compile.js';
import { defaultTemplatesDir } from '../../src/render/ceph-conf.js';
import { TemplateSandbox } from '../../src/render/sandbox.js';
import { TemplateLibrary } from '../../src/services/templates.js';
import { createMemoryStore } from '../../src/store/index.js';

test('template library every shipped template compiles', async (t) => {
  const files = (await readdir(defaultTemplatesDir)).filter((f) => f.endsWith('.ejs'));
  t.true(files.length >= 5);
  for (const f of files) {
    const source = await readFile(new URL(f, defaultTemplatesDir), 'utf8');
    t.notThrows(() => checkTemplate(f.slice(0, -4), source), f);
  }
});

test('template library a newer shipped file upgrades an unedited template and leaves an edited one alone', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'qtpl-lib-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const url = pathToFileURL(`${dir}/`);
  const sandbox = new TemplateSandbox({ timeoutMs: 2_000 });
  t.teardown(() => sandbox.close());
  const lib = new TemplateLibrary(await createMemoryStore(), systemClock, sandbox);
  await writeFile(join(dir, 'a.ejs'), '<%# description: first -%>\nA1 <%= x %>\n');
  await writeFile(join(dir, 'b.ejs'), 'B1\n');
  await writeFile(join(dir, 'not-a-template.txt'), 'ignored');
  await lib.seed(url);
  t.deepEqual(
    (await lib.list()).map((x) => [x.name, x.version, x.description]),
    [
      ['a', 1, 'first'],
      ['b', 1, ''],
    ],
  );
  t.is(await lib.render('a', { x: 1 }), 'A1 1\n');
  await lib.replace('b', 'B edited\n');
  await writeFile(join(dir, 'a.ejs'), 'A2 <%= x %>\n');
  await writeFile(join(dir, 'b.ejs'), 'B2\n');
  await lib.seed(url);
  await lib.seed(url); // the same files again change nothing
  t.deepEqual(
    (await lib.list()).map((x) => [x.name, x.version]),
    [
      ['a', 2],
      ['b', 2],
    ],
  );
  t.is(await lib.render('a', { x: 2 }), 'A2 2\n');
  t.is((await lib.source('a', 1)).source, '<%# description: first -%>\nA1 <%= x %>\n');
  t.is(await lib.render('b', {}), 'B edited\n');
});

test('template sandbox a render stopped at its deadline does not hold up the ones queued behind it', async (t) => {
  // The render behind the stopped one must finish within the same deadline in a fresh thread.
  const sandbox = new TemplateSandbox({ timeoutMs: 1_000 });
  t.teardown(() => sandbox.close());
  const spin = sandbox.render('spin', 1, '<% for (;;) {} %>', {});
  const next = sandbox.render('next', 1, 'ok <%= n %>', { n: 7 });
  await t.throwsAsync(spin, { message: /spin did not finish rendering within 1000 ms/ });
  t.is(await next, 'ok 7');
  await sandbox.close();
  await t.throwsAsync(sandbox.render('late', 1, 'x', {}), { message: /closed/ });
});

test('template library a config template renders once per version and context; others render every time', async (t) => {
  const renders: string[] = [];
  const counting = {
    render: async (name: string, version: number, _source: string, context: Record<string, unknown>) => {
      renders.push(`${name}@${version}`);
      return `${name} ${version} ${JSON.stringify(context)}`;
    },
    close: async () => undefined,
  };
  const lib = new TemplateLibrary(await createMemoryStore(), systemClock, counting);
  await lib.replace('ceph.conf', 'conf <%= fsid %>\n');
  await lib.replace('other', 'other\n');
  const first = await lib.render('ceph.conf', { fsid: 'a' });
  t.is(await lib.render('ceph.conf', { fsid: 'a' }), first, 'the same bytes for the same context');
  t.deepEqual(renders, ['ceph.conf@1']);
  await lib.render('ceph.conf', { fsid: 'b' });
  await lib.replace('ceph.conf', 'conf v2 <%= fsid %>\n');
  t.not(await lib.render('ceph.conf', { fsid: 'b' }), first);
  await lib.render('other', {});
  await lib.render('other', {});
  t.deepEqual(renders, ['ceph.conf@1', 'ceph.conf@1', 'ceph.conf@2', 'other@1', 'other@1']);
});
