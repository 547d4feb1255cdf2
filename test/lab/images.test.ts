// The /images endpoints against the lab's built-in registry (real HTTP on loopback): every
// answer and refusal of the contract, and that the files on disk are the catalog's.
import test from 'ava';
import { readFile, stat } from 'node:fs/promises';
import { imageDir, imageFilePath } from '../../src/model/image-files.js';
import { ImageKind, type ImageSpec, type ImageStatus } from '../../src/model/image-kinds.js';
import { LAB_IMAGES, labFileContent } from '../../src/sim/image-registry.js';
import { Client } from '../http/client.js';
import { ADMIN_PASSWORD, startLab, waitFor, type LabQuarry } from './harness.js';
import type { ProblemBody } from '../http/bodies.js';

const [debian, ubuntu, rocky] = LAB_IMAGES as [(typeof LAB_IMAGES)[0], (typeof LAB_IMAGES)[0], (typeof LAB_IMAGES)[0]];
const summary = (i: typeof debian) => ({ id: i.id, name: i.name, distro: i.distro, version: i.version, arch: i.arch });

async function admin(q: LabQuarry): Promise<Client> {
  const c = new Client(q.url);
  const r = await c.post('/user/login', { username: 'admin', password: ADMIN_PASSWORD });
  if (r.status !== 200) throw new Error(`login ${r.status}`);
  return c;
}

async function downloaded(c: Client, id: string): Promise<{ default: boolean } | undefined> {
  return ((await c.get('/images/downloaded')).json as Array<{ id: string; default: boolean }>).find((i) => i.id === id);
}

async function fetchImage(c: Client, id: string): Promise<void> {
  const r = await c.get(`/images/${id}/download`);
  if (r.status !== 200) throw new Error(`download ${r.status} ${r.text}`);
  await waitFor(`image ${id} downloaded`, () => downloaded(c, id));
}

test('images: the lab catalog is listed as available, and nothing is downloaded yet', async (t) => {
  const q = await startLab(t, 0);
  const c = await admin(q);
  const r = await c.get('/images/available');
  t.is(r.status, 200);
  t.deepEqual(r.json, LAB_IMAGES.map(summary));
  t.deepEqual((await c.get('/images/downloaded')).json, []);
});

test('images: a download by short id fetches and verifies every file, with progress and a task run', async (t) => {
  const q = await startLab(t, 0);
  const c = await admin(q);
  const r = await c.get(`/images/${debian.id.slice(0, 8).toUpperCase()}/download`);
  t.is(r.status, 200);
  t.deepEqual(r.json, { status: 'downloading' });
  const img = await waitFor('downloaded', () => downloaded(c, debian.id));
  t.deepEqual(img, { ...summary(debian), default: false });
  for (const f of debian.files)
    t.true((await readFile(imageFilePath(q.config.stateDir, debian.id, f.name))).equals(labFileContent(debian.id, f.name, f.size)));
  const doc = await q.store.mustGet<ImageSpec, ImageStatus>(ImageKind.Image, debian.id);
  const total = debian.files.reduce((s, f) => s + f.size, 0);
  t.like(doc.status, { phase: 'downloaded', verified: true, bytes: total, total });
  t.like(
    doc.status.conditions?.find((x) => x.type === 'Ready'),
    { status: 'True', reason: 'Downloaded' },
  );
  const runs = (await q.tasks.recent(100)).filter((x) => x.spec.taskName === 'image.download');
  t.is(runs.length, 1);
  t.like(runs[0]!.status, { state: 'completed', result: { files: 3, bytes: total } });
  const done = q.events.filter((e) => e.type === 'image.download.progress' && (e.payload as { done: boolean }).done);
  t.deepEqual(
    done.map((e) => e.payload),
    [{ imageId: debian.id, bytes: total, total, percent: 100, done: true, name: debian.name }],
  );
  // Asking again changes nothing and starts nothing.
  t.deepEqual((await c.get(`/images/${debian.id}/download`)).json, { status: 'downloading' });
  await q.manager.idle();
  t.is((await q.tasks.recent(100)).filter((x) => x.spec.taskName === 'image.download').length, 1);
});

test('images: set-default needs a downloaded image, moves the flag, and the default cannot be deleted', async (t) => {
  const q = await startLab(t, 0);
  const c = await admin(q);
  const refused = await c.post(`/images/${ubuntu.id}/default`);
  t.is(refused.status, 409);
  t.like(refused.json, { code: 'IMAGE_NOT_DOWNLOADED', status: 409 });
  await fetchImage(c, debian.id);
  await fetchImage(c, ubuntu.id);
  t.deepEqual((await c.post(`/images/${debian.id}/default`)).json, { status: 'updated' });
  t.true((await downloaded(c, debian.id))?.default);
  t.deepEqual((await c.post(`/images/${ubuntu.id.slice(0, 8)}/default`)).json, { status: 'updated' });
  t.deepEqual(
    ((await c.get('/images/downloaded')).json as Array<{ id: string; default: boolean }>).filter((i) => i.default).map((i) => i.id),
    [ubuntu.id],
  );
  const del = await c.request('DELETE', `/images/${ubuntu.id}`);
  t.is(del.status, 409);
  t.like(del.json, { code: 'IMAGE_IS_DEFAULT' });
  t.true((await downloaded(c, ubuntu.id))?.default, 'the refused delete changed nothing');
  t.truthy(await stat(imageFilePath(q.config.stateDir, ubuntu.id, 'vmlinuz')));
});

test('images: concurrent set-defaults leave exactly one default image', async (t) => {
  const q = await startLab(t, 0);
  const c = await admin(q);
  await Promise.all([debian, ubuntu, rocky].map((i) => fetchImage(c, i.id)));
  const order = Array.from({ length: 12 }, (_, i) => [debian, ubuntu, rocky][i % 3]!);
  const answers = await Promise.all(order.map((i) => c.post(`/images/${i.id}/default`)));
  t.true(answers.every((a) => a.status === 200));
  const defaults = (await q.store.list<ImageSpec>(ImageKind.Image)).filter((i) => i.spec.default);
  t.is(defaults.length, 1);
  t.is((await q.images.images.defaultImage())?.id, defaults[0]!.id);
});

test('images: delete removes the files, drops the image from the list, and a new download brings it back', async (t) => {
  const q = await startLab(t, 0);
  const c = await admin(q);
  await fetchImage(c, rocky.id);
  t.is(await q.images.images.downloadedFile(rocky.id, 'initrd.img'), imageFilePath(q.config.stateDir, rocky.id, 'initrd.img'));
  t.is(await q.images.images.downloadedFile(rocky.id, 'nope.img'), null);
  t.deepEqual((await c.request('DELETE', `/images/${rocky.id.slice(0, 8)}`)).json, { status: 'deleted' });
  t.is(await downloaded(c, rocky.id), undefined, 'gone from the list at once');
  await waitFor('files removed', async () => (await stat(imageDir(q.config.stateDir, rocky.id)).catch(() => null)) === null);
  await waitFor(
    'removed',
    async () => (await q.store.mustGet<ImageSpec, ImageStatus>(ImageKind.Image, rocky.id)).status.phase === 'removed',
  );
  t.is(await q.images.images.downloadedFile(rocky.id, 'initrd.img'), null);
  t.true((await q.tasks.recent(100)).some((r) => r.spec.taskName === 'image.remove' && r.status.state === 'completed'));
  await fetchImage(c, rocky.id);
  t.truthy(await stat(imageFilePath(q.config.stateDir, rocky.id, 'rootfs.tar')));
});

test('images: unknown, malformed and never-downloaded ids are refused', async (t) => {
  const q = await startLab(t, 0);
  const c = await admin(q);
  const unknown = '00000000-0000-4000-8000-000000000000';
  for (const [method, path] of [
    ['GET', `/images/${unknown}/download`],
    ['POST', `/images/${unknown}/default`],
    ['DELETE', `/images/${unknown}`],
    ['GET', '/images/0badc0de/download'],
  ] as const) {
    const r = await c.request<ProblemBody>(method, path);
    t.is(r.status, 404, `${method} ${path}`);
    t.is(r.json.code, 'NOT_FOUND');
  }
  for (const bad of ['xyz', '3f1c2a7', '3f1c2a7e-5b0d', '..%2f..%2fetc']) {
    t.is((await c.get(`/images/${bad}/download`)).status, 400, bad);
  }
  // In the catalog but never on the master: nothing to delete.
  t.is((await c.request('DELETE', `/images/${debian.id}`)).status, 409);
  t.deepEqual(await q.store.list(ImageKind.Image), [], 'no refusal wrote anything');
});

test('images: reading needs a session, and only admins download, set the default or delete', async (t) => {
  const q = await startLab(t, 0);
  const c = await admin(q);
  t.is((await c.post('/users', { username: 'viewer', password: 'viewer-password', name: 'V', email: 'v@example.com' })).status, 201);
  const viewer = new Client(q.url);
  await viewer.post('/user/login', { username: 'viewer', password: 'viewer-password' });
  t.is((await viewer.get('/images/available')).status, 200);
  t.is((await viewer.get('/images/downloaded')).status, 200);
  for (const [method, path] of [
    ['GET', `/images/${debian.id}/download`],
    ['POST', `/images/${debian.id}/default`],
    ['DELETE', `/images/${debian.id}`],
  ] as const) {
    t.is((await viewer.request(method, path)).status, 403, `${method} ${path}`);
    t.is((await new Client(q.url).request(method, path)).status, 401, `${method} ${path} without a session`);
  }
  t.is((await new Client(q.url).get('/images/available')).status, 401);
  t.deepEqual(await q.store.list(ImageKind.Image), []);
});
