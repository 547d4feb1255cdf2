// Booting machines fetch their image's files through signed links from the boot script: no
// session, one file per link, and nothing for a forged, widened or expired link.
import test from 'ava';
import { ManualClock } from '../../src/model/clock.js';
import { SignedUrls } from '../../src/http/signed-urls.js';
import { AuthError } from '../../src/errors.js';
import { LAB_IMAGES, labFileContent } from '../../src/sim/image-registry.js';
import { Client } from './client.js';
import { ADMIN_PASSWORD, startLab, waitFor } from '../lab/harness.js';
import { discoverApproved } from './agent-helpers.js';
import type { ProblemBody } from './bodies.js';

const image = LAB_IMAGES[0]!;
const MAC = '52:54:00:aa:bb:01';

test('image files: the boot script of the default image links files a machine can fetch without a session', async (t) => {
  const q = await startLab(t, 0);
  const admin = new Client(q.url);
  await admin.post('/user/login', { username: 'admin', password: ADMIN_PASSWORD });
  t.is((await admin.get(`/images/${image.id}/download`)).status, 200);
  await waitFor('downloaded', async () => ((await admin.get('/images/downloaded')).json as unknown[]).length === 1);
  t.is((await admin.post(`/images/${image.id}/default`)).status, 200);

  const anon = new Client(q.url);
  await discoverApproved(q, MAC);
  const script = (await anon.get(`/boot/config?mac=${MAC}`)).text;
  const kernel = /\nkernel (\S+)/.exec(script)?.[1];
  const initrd = /\ninitrd --name \S+ (\S+)/.exec(script)?.[1];
  t.truthy(kernel && initrd, script);
  t.true(kernel!.startsWith(`${q.url}/images/${image.id}/files/vmlinuz?expires=`));
  for (const [url, name] of [
    [kernel!, 'vmlinuz'],
    [initrd!, 'initrd.img'],
  ] as const) {
    const r = await fetch(url);
    t.is(r.status, 200);
    t.is(r.headers.get('content-type'), 'application/octet-stream');
    const size = image.files.find((f) => f.name === name)!.size;
    t.true(Buffer.from(await r.arrayBuffer()).equals(labFileContent(image.id, name, size)));
  }
  const path = (u: string) => u.slice(q.url.length);
  const refused = async (p: string) => {
    const r = await anon.get<ProblemBody>(p);
    return r.status === 401 && r.json.code === 'UNAUTHENTICATED';
  };
  t.true(
    await refused(path(kernel!).replace(/signature=[0-9a-f]/, (m) => m.slice(0, -1) + (m.endsWith('0') ? '1' : '0'))),
    'a forged signature',
  );
  t.true(await refused(path(kernel!).replace('/vmlinuz?', '/rootfs.tar?')), 'the link of one file for another');
  t.true(await refused(path(kernel!).replace(/expires=\d+/, (m) => `expires=${Number(m.slice(8)) + 3600}`)), 'a stretched expiry');
  t.true(await refused(path(kernel!).split('?')[0]!), 'no signature at all');
});

test('image files: a signed link expires', (t) => {
  const clock = new ManualClock(1_000_000);
  const links = new SignedUrls(new Uint8Array(32).fill(7), clock, 60);
  const url = new URL(links.sign('/images/x/files/vmlinuz'), 'http://h');
  const q = { expires: Number(url.searchParams.get('expires')), signature: url.searchParams.get('signature')! };
  t.notThrows(() => links.verify('/images/x/files/vmlinuz', q));
  t.throws(() => links.verify('/images/x/files/initrd', q), { instanceOf: AuthError });
  clock.advance(61_000);
  t.throws(() => links.verify('/images/x/files/vmlinuz', q), { instanceOf: AuthError, message: /expired/ });
});
