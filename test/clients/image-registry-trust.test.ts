// What Quarry takes from an image registry: every catalog field by schema (good and bad values),
// which registry URLs it reads at all (plain http only from loopback, pinned, or by an explicit
// opt-in), a pinned catalog's hash, and redirects checked before they are followed.
import test from 'ava';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createHash } from 'node:crypto';
import { InputError, ServiceUnavailableError } from '../../src/errors.js';
import { checkRegistryUrl, HttpImageRegistry, parseCatalog } from '../../src/clients/image-registry.js';
import { loadConfig } from '../../src/config.js';
import { serveImages, bytesOf } from '../helpers/image-server.js';

const ID = '5e1f0c3a-7d42-4b8e-a1c9-0f6d2e8b7a13';
const file = { name: 'vmlinuz', url: 'files/vmlinuz', size: 3, sha256: 'ab'.repeat(32) };
const entry = (over: Record<string, unknown> = {}) => ({
  id: ID,
  name: 'Debian 12 (bookworm) — café',
  distro: 'debian',
  version: '12.5',
  arch: 'x86_64',
  files: [file],
  ...over,
});
const withFile = (over: Record<string, unknown>) => entry({ files: [{ ...file, ...over }] });

test('catalog entries with real-world names and versions are accepted', (t) => {
  for (const e of [
    entry(),
    entry({ version: '9.3~rc1', arch: 'aarch64', distro: 'rocky' }),
    entry({ name: 'ubuntu-24.04-amd64' }),
    withFile({ url: 'https://cdn.example/a/vmlinuz-6.1.0+1?x=1', size: 2 ** 40 }),
  ]) {
    t.notThrows(() => parseCatalog([e], 'https://reg.example/catalog.json'));
  }
});

test('catalog an entry with a value that fails its pattern refuses the whole catalog, naming the entry and field', (t) => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [entry({ id: 'not-a-uuid' }), /\/0\/id/],
    [entry({ name: 'debian\nbootcmd:\n  - [ sh, -c, "curl x | sh" ]' }), /\/0\/name \(entry 5e1f0c3a/],
    [entry({ name: 'a\u2028b' }), /\/0\/name/],
    [entry({ name: 'a\u0085b' }), /\/0\/name/],
    [entry({ name: 'a\u0000b' }), /\/0\/name/],
    [entry({ name: '' }), /\/0\/name/],
    [entry({ name: 'x'.repeat(129) }), /\/0\/name/],
    [entry({ distro: 'deb ian' }), /\/0\/distro/],
    [entry({ version: '12\n' }), /\/0\/version/],
    [entry({ arch: '' }), /\/0\/arch/],
    [entry({ arch: 'x'.repeat(65) }), /\/0\/arch/],
    [withFile({ name: '../vmlinuz' }), /\/0\/files\/0\/name/],
    [withFile({ name: '.hidden' }), /\/0\/files\/0\/name/],
    [withFile({ name: 'a/b' }), /\/0\/files\/0\/name/],
    [withFile({ url: 'ftp://x/k' }), /\/0\/files\/0\/url must be http or https/],
    [withFile({ url: 'javascript:alert(1)' }), /\/0\/files\/0\/url must be http or https/],
    [withFile({ url: 'http://x/k\nHost: y' }), /\/0\/files\/0\/url/],
    [withFile({ url: 'http://x/a b' }), /\/0\/files\/0\/url/],
    [withFile({ sha256: 'ab'.repeat(31) }), /\/0\/files\/0\/sha256/],
    [withFile({ sha256: 'zz'.repeat(32) }), /\/0\/files\/0\/sha256/],
    [withFile({ size: -1 }), /\/0\/files\/0\/size/],
    [withFile({ size: 1.5 }), /\/0\/files\/0\/size/],
    [withFile({ size: 2 ** 40 + 1 }), /\/0\/files\/0\/size/],
  ];
  for (const [bad, why] of cases) {
    const err = t.throws(
      () => parseCatalog([entry({ id: '0e1f0c3a-7d42-4b8e-a1c9-0f6d2e8b7a13' }), bad], 'https://r/c.json'),
      { instanceOf: ServiceUnavailableError },
      String(why),
    );
    t.is(err.code, 'REGISTRY_INVALID');
    t.regex(err.message, new RegExp(why.source.replace('\\/0\\/', '\\/1\\/')), String(why));
    t.false(/[\n\r\u0085\u2028]/.test(err.message), 'the message stays on one line');
  }
});

test('catalog registry URLs: https anywhere, plain http only from loopback, pinned, or by opt-in', (t) => {
  for (const ok of ['https://reg.example/c.json', 'http://127.0.0.1:9/c.json', 'http://localhost/c.json', 'http://[::1]:8/c.json'])
    t.notThrows(() => checkRegistryUrl(ok), ok);
  const pin = 'a'.repeat(64);
  t.notThrows(() => checkRegistryUrl('http://reg.example/c.json', { sha256: pin }), 'pinned');
  t.notThrows(() => checkRegistryUrl('http://u:p@reg.example/c.json', { insecureHttp: true }), 'opt-in');
  for (const [bad, opts, why] of [
    ['http://reg.example/c.json', {}, /plain http.*IMAGE_REGISTRY_SHA256.*IMAGE_REGISTRY_INSECURE_HTTP=true/],
    ['http://u:p@reg.example/c.json', { sha256: pin }, /read its password/],
    ['ftp://reg.example/c.json', {}, /must be an https URL/],
    ['file:///etc/passwd', { insecureHttp: true }, /must be an https URL/],
    ['not a url', {}, /not a URL/],
  ] as const) {
    const err = t.throws(() => checkRegistryUrl(bad, opts), { instanceOf: InputError }, bad);
    t.regex(err.message, why, bad);
    t.false(err.message.includes('u:p'), 'no password in the message');
  }
  t.throws(() => new HttpImageRegistry({ url: 'http://reg.example/c.json' }), { instanceOf: InputError });
});

test('catalog settings: IMAGE_REGISTRY_SHA256 is 64 hex digits, IMAGE_REGISTRY_INSECURE_HTTP a yes or no', (t) => {
  t.like(loadConfig({}), { imageRegistrySha256: null, imageRegistryInsecureHttp: false });
  t.like(loadConfig({ IMAGE_REGISTRY_SHA256: 'AB'.repeat(32), IMAGE_REGISTRY_INSECURE_HTTP: 'true' }), {
    imageRegistrySha256: 'ab'.repeat(32),
    imageRegistryInsecureHttp: true,
  });
  t.throws(() => loadConfig({ IMAGE_REGISTRY_SHA256: 'abc' }), { instanceOf: InputError, message: /64 hex digits/ });
  t.throws(() => loadConfig({ IMAGE_REGISTRY_INSECURE_HTTP: 'maybe' }), { instanceOf: InputError, message: /true or false/ });
});

test('catalog a pinned catalog is read only when its bytes have the pinned SHA-256', async (t) => {
  const server = await serveImages(t, [{ id: ID, name: 'x', files: [{ name: 'k', content: bytesOf('k', 10) }] }]);
  const body = await (await fetch(server.url)).text();
  const right = createHash('sha256').update(body).digest('hex');
  t.is((await new HttpImageRegistry({ url: server.url, sha256: right }).entries()).length, 1);
  const err = await t.throwsAsync(new HttpImageRegistry({ url: server.url, sha256: 'f'.repeat(64) }).entries(), {
    instanceOf: ServiceUnavailableError,
  });
  t.is(err.code, 'REGISTRY_INVALID');
  t.regex(err.message, /IMAGE_REGISTRY_SHA256/);
});

test('catalog a redirect to plain http elsewhere is refused before it is followed', async (t) => {
  const catalog = JSON.stringify([entry()]);
  const asked: string[] = [];
  const server = createServer((req, res) => {
    asked.push(req.url ?? '');
    if (req.url === '/away') return void res.writeHead(302, { location: 'http://192.0.2.1/catalog.json' }).end();
    if (req.url === '/moved') return void res.writeHead(301, { location: '/catalog.json' }).end();
    if (req.url === '/loop') return void res.writeHead(302, { location: '/loop' }).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(catalog);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  t.is((await new HttpImageRegistry({ url: `${base}/moved` }).entries())[0]?.id, ID, 'a loopback redirect is followed');
  const away = await t.throwsAsync(new HttpImageRegistry({ url: `${base}/away`, timeoutMs: 60_000 }).entries(), {
    instanceOf: ServiceUnavailableError,
  });
  t.regex(away.message, /redirected to an address Quarry does not read catalogs from/);
  const loop = await t.throwsAsync(new HttpImageRegistry({ url: `${base}/loop` }).entries(), { instanceOf: ServiceUnavailableError });
  t.regex(loop.message, /more than 5 redirects/);
});
