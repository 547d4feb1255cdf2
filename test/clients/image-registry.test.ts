// The registry catalog parser and the file downloader on their own, for the cases the
// whole-Quarry tests do not reach.
import test from 'ava';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ServiceUnavailableError } from '../../src/errors.js';
import { parseCatalog } from '../../src/clients/image-registry.js';
import { downloadFile, IntegrityError } from '../../src/clients/download.js';
import { bytesOf, closedPort, serveImages, sha } from '../helpers/image-server.js';

const ID = '5e1f0c3a-7d42-4b8e-a1c9-0f6d2e8b7a13';
const entry = (url: string, over: Record<string, unknown> = {}) => ({
  id: ID.toUpperCase(),
  name: 'n',
  distro: 'd',
  version: '1',
  arch: 'a',
  extra: 'kept out',
  files: [{ name: 'vmlinuz', url, size: 3, sha256: 'AB'.repeat(32) }],
  ...over,
});

test('image registry: relative URLs resolve against the catalog, ids and digests are lower-cased', (t) => {
  const [e] = parseCatalog([entry('files/vmlinuz')], 'http://reg.example/v1/catalog.json');
  t.deepEqual(e, {
    id: ID,
    name: 'n',
    distro: 'd',
    version: '1',
    arch: 'a',
    files: [{ name: 'vmlinuz', url: 'http://reg.example/v1/files/vmlinuz', size: 3, sha256: 'ab'.repeat(32) }],
  });
  t.is(parseCatalog([entry('https://cdn.example/k')], 'http://reg.example/c.json')[0]!.files[0]!.url, 'https://cdn.example/k');
});

test('image registry: a catalog that is not valid is refused with where and why', (t) => {
  const cases: Array<[unknown, RegExp]> = [
    [{ not: 'an array' }, /must be array/],
    [[entry('file:///etc/passwd')], /\/0\/files\/0\/url must be http or https/],
    [[entry('x', { files: [{ name: '../up', url: 'x', size: 1, sha256: 'a'.repeat(64) }] })], /\/0\/files\/0\/name/],
    [[entry('x', { files: [] })], /\/0\/files/],
    [[entry('x'), entry('y')], /listed twice/],
    [
      [
        entry('x', {
          files: [
            { name: 'a', url: 'x', size: 1, sha256: 'a'.repeat(64) },
            { name: 'a', url: 'y', size: 1, sha256: 'a'.repeat(64) },
          ],
        }),
      ],
      /same file twice/,
    ],
  ];
  for (const [raw, why] of cases) {
    const err = t.throws(() => parseCatalog(raw, 'http://r/c.json'), { instanceOf: ServiceUnavailableError });
    t.is(err.code, 'REGISTRY_INVALID');
    t.regex(err.message, why);
  }
});

test('download: a part longer than the file is dropped and the file fetched whole', async (t) => {
  const content = bytesOf('k', 50_000);
  const server = await serveImages(t, [{ id: ID, name: 'x', files: [{ name: 'k', content }] }]);
  const dir = await mkdtemp(join(tmpdir(), 'qimg-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const d = {
    url: server.url.replace('catalog.json', `files/${ID}/k`),
    size: content.length,
    sha256: sha(content),
    finalPath: join(dir, 'k'),
    partPath: join(dir, 'k.part'),
    signal: new AbortController().signal,
  };
  await writeFile(d.partPath, Buffer.alloc(content.length + 1));
  t.deepEqual(await downloadFile(d), { skipped: false, resumedFrom: 0 });
  t.true((await readFile(d.finalPath)).equals(content));
  t.deepEqual(
    server.requests.map((r) => r.range),
    [null],
  );
  t.deepEqual(await downloadFile(d), { skipped: true, resumedFrom: 0 }, 'in place: nothing fetched');
  t.is(server.requests.length, 1);
});

test('download: more bytes than the catalog says is refused, and the part is gone', async (t) => {
  const content = bytesOf('k', 50_000);
  const server = await serveImages(t, [{ id: ID, name: 'x', files: [{ name: 'k', content }] }]);
  const dir = await mkdtemp(join(tmpdir(), 'qimg-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const d = {
    url: server.url.replace('catalog.json', `files/${ID}/k`),
    size: 40_000,
    sha256: sha(content),
    finalPath: join(dir, 'k'),
    partPath: join(dir, 'k.part'),
    signal: new AbortController().signal,
  };
  await t.throwsAsync(downloadFile(d), { instanceOf: IntegrityError, message: /longer than the catalog's 40000 bytes/ });
  t.is(await stat(d.partPath).catch(() => null), null);
  t.is(await stat(d.finalPath).catch(() => null), null);
});

test('download: errors and logs show a file URL without its credentials or query', async (t) => {
  const server = await serveImages(t, []);
  const dir = await mkdtemp(join(tmpdir(), 'qimg-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const url = server.url.replace('http://', 'http://reader:s3cret@').replace('catalog.json', 'files/none?token=abc');
  const d = {
    url,
    size: 1,
    sha256: 'a'.repeat(64),
    finalPath: join(dir, 'k'),
    partPath: join(dir, 'k.part'),
    signal: new AbortController().signal,
  };
  const err = await t.throwsAsync(downloadFile(d), { message: /answered HTTP 404/ });
  t.notRegex(err.message, /s3cret|reader|token/);
  t.deepEqual(
    server.requests.map((r) => [r.path, r.authorization]),
    [['/files/none', `Basic ${Buffer.from('reader:s3cret').toString('base64')}`]],
  );
  const port = await closedPort();
  const refused = await t.throwsAsync(downloadFile({ ...d, url: `http://reader:s3cret@127.0.0.1:${port}/x?token=abc` }));
  t.is(refused.message, `http://127.0.0.1:${port}/x did not answer: ECONNREFUSED`);
});
