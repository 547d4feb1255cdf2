// The real download test: Quarry's image loop against a registry the test serves itself on
// 127.0.0.1:0. Progress reaches the bus and a real EventSource on /events, a connection cut
// midway is resumed with a Range request from the part's size, a server that ignores Range is
// survived by starting over, and bytes that are not the catalog's are refused with nothing kept.
import test from 'ava';
import { readFile, readdir, stat } from 'node:fs/promises';
import { EventSource } from 'eventsource';
import { imageDir, imageFilePath } from '../../src/model/image-files.js';
import { ImageKind, type ImageSpec, type ImageStatus } from '../../src/model/image-kinds.js';
import { Client } from '../http/client.js';
import type { ProblemBody } from '../http/bodies.js';
import { bytesOf, closedPort, serveImages, sha, type Faults, type TestImage } from '../helpers/image-server.js';
import { ADMIN_PASSWORD, startLab, waitFor, type LabQuarry } from './harness.js';

const ID = '5e1f0c3a-7d42-4b8e-a1c9-0f6d2e8b7a13';
const ROOTFS = bytesOf('rootfs', 3 * 1024 * 1024 + 123);
const KERNEL = bytesOf('kernel', 200_000);
const IMAGE: TestImage = {
  id: ID,
  name: 'testos-1',
  files: [
    { name: 'rootfs.tar', content: ROOTFS },
    { name: 'vmlinuz', content: KERNEL },
  ],
};
const TOTAL = ROOTFS.length + KERNEL.length;
const CUT = 1_000_000;

interface Progress {
  imageId: string;
  bytes: number;
  total: number;
  percent: number;
  done: boolean;
}

async function setUp(t: Parameters<typeof startLab>[0], images: TestImage[], faults: Faults, retryBaseMs = 20) {
  const server = await serveImages(t, images, faults);
  // stallMs is a deadline no test here reaches on purpose: a loaded process that stalls for
  // seconds must not fail a download as stalled and make an extra run.
  const q = await startLab(t, 0, {
    env: { IMAGE_REGISTRY: server.url },
    retryBaseMs,
    imageTiming: { progressEveryMs: 50, stallMs: 30_000 },
  });
  const c = new Client(q.url);
  await c.post('/user/login', { username: 'admin', password: ADMIN_PASSWORD });
  return { server, q, c };
}

/** Two requests, the second a Range from where the part ended (0 < start <= CUT): that start. */
function resumedFrom(ranges: Array<string | null>): number {
  const start = Number(/^bytes=(\d+)-$/.exec(ranges[1] ?? '')?.[1]);
  if (ranges.length !== 2 || ranges[0] !== null || !(start > 0 && start <= CUT))
    throw new Error(`expected a full request, then a Range from at most ${CUT}: ${JSON.stringify(ranges)}`);
  return start;
}

const image = (q: LabQuarry, id = ID) => q.store.mustGet<ImageSpec, ImageStatus>(ImageKind.Image, id);
const runs = async (q: LabQuarry) => (await q.tasks.recent(100)).filter((r) => r.spec.taskName === 'image.download').reverse();

test('image download: progress on the bus and over SSE, a cut connection resumed with Range from the part size', async (t) => {
  const { server, q, c } = await setUp(t, [IMAGE], { cutAfter: { bytes: CUT, times: 1 }, chunkDelayMs: 5 });
  const cookie = [...c.jar].map(([k, v]) => `${k}=${v}`).join('; ');
  const es = new EventSource(`${q.url}/events`, { fetch: (url, init) => fetch(url, { ...init, headers: { ...init.headers, cookie } }) });
  t.teardown(() => es.close());
  const overSse: Progress[] = [];
  es.onmessage = (m) => {
    const e = JSON.parse(m.data as string) as { type: string; payload: Progress };
    if (e.type === 'image.download.progress') overSse.push(e.payload);
  };
  await new Promise<void>((resolve, reject) => {
    es.onopen = () => resolve();
    es.onerror = (e) => reject(new Error(`EventSource error ${String((e as { code?: number }).code)}`));
  });

  t.deepEqual((await c.get(`/images/${ID.slice(0, 8)}/download`)).json, { status: 'downloading' });
  await waitFor('the final progress event over SSE', () => overSse.some((p) => p.done));
  const [first, second] = await waitFor('two runs', async () => {
    const r = await runs(q);
    return r.length === 2 && r[1]!.status.state === 'completed' ? r : undefined;
  });
  t.is(first!.status.state, 'failed', 'the cut connection failed the first attempt');
  t.is(second!.spec.attempt, 2);

  // The part holds what arrived before the cut: up to CUT bytes (the last ones in flight may be
  // lost with the socket), and the second request asks for exactly the rest.
  const rootfs = server.requests.filter((r) => r.path.endsWith('/rootfs.tar')).map((r) => r.range);
  const kept = resumedFrom(rootfs);
  t.like(second!.status.result, { resumedBytes: kept, bytes: TOTAL });
  t.true((await readFile(imageFilePath(q.config.stateDir, ID, 'rootfs.tar'))).equals(ROOTFS));
  t.true((await readFile(imageFilePath(q.config.stateDir, ID, 'vmlinuz'))).equals(KERNEL));
  t.deepEqual((await readdir(imageDir(q.config.stateDir, ID))).sort(), ['rootfs.tar', 'vmlinuz'], 'no .part left');

  const onBus = q.events.filter((e) => e.type === 'image.download.progress').map((e) => e.payload as Progress);
  t.deepEqual(overSse, onBus, 'SSE relays what the bus carried');
  t.true(onBus.every((p) => p.imageId === ID && p.total === TOTAL && p.bytes <= TOTAL));
  t.true(
    onBus.some((p) => !p.done && p.bytes > 0 && p.percent < 100),
    'progress before the end',
  );
  t.deepEqual(
    onBus.filter((p) => p.done),
    [{ imageId: ID, bytes: TOTAL, total: TOTAL, percent: 100, done: true, name: 'testos-1' }],
  );
  const resumed = onBus.slice(onBus.findIndex((p) => p.bytes >= CUT && p.bytes < TOTAL));
  t.true(
    resumed.every((p, i) => i === 0 || p.bytes >= resumed[i - 1]!.bytes),
    'the second attempt counts on from the resumed bytes',
  );
  t.like((await image(q)).status, { phase: 'downloaded', verified: true, bytes: TOTAL });
});

test('image download: a server that ignores Range is answered by starting the file over', async (t) => {
  const { server, q, c } = await setUp(t, [IMAGE], { cutAfter: { bytes: CUT, times: 1 }, ignoreRange: true });
  await c.get(`/images/${ID}/download`);
  await waitFor('downloaded', async () => (await image(q)).status.phase === 'downloaded');
  resumedFrom(server.requests.filter((r) => r.path.endsWith('/rootfs.tar')).map((r) => r.range));
  t.true((await readFile(imageFilePath(q.config.stateDir, ID, 'rootfs.tar'))).equals(ROOTFS));
  const [, second] = await runs(q);
  t.like(second!.status, { state: 'completed' });
  t.true((await q.tasks.logs(second!.id)).some((l) => /does not resume; starting over/.test(l.message)));
});

test('image download: a SHA-256 mismatch fails the run and keeps nothing, and the status says why', async (t) => {
  const bad: TestImage = {
    ...IMAGE,
    files: [
      { name: 'vmlinuz', content: KERNEL },
      { name: 'rootfs.tar', content: ROOTFS, sha256: sha(Buffer.from('something else')) },
    ],
  };
  // A long backoff: no retry may bring a .part back while the test looks.
  const { q, c } = await setUp(t, [bad], {}, 60_000);
  await c.get(`/images/${ID}/download`);
  const img = await waitFor('failure reported', async () => {
    const i = await image(q);
    return i.status.conditions?.some((x) => x.type === 'Degraded' && x.status === 'True') ? i : undefined;
  });
  const [run] = await runs(q);
  t.is(run!.status.state, 'failed');
  t.regex(run!.status.error ?? '', /SHA-256 mismatch/);
  t.is(await stat(imageDir(q.config.stateDir, ID)).catch(() => null), null, 'no file, no .part, not even the verified vmlinuz');
  t.like(
    img.status.conditions?.find((x) => x.type === 'Degraded'),
    { reason: 'ChecksumMismatch' },
  );
  t.like(img.status, { verified: false, bytes: 0, phase: 'downloading' });
  t.deepEqual((await c.get('/images/downloaded')).json, []);
  t.is((await c.post<ProblemBody>(`/images/${ID}/default`)).json.code, 'IMAGE_NOT_DOWNLOADED');
});

test('image download: deleting an image while it downloads stops the run and removes its parts', async (t) => {
  // Paced to take at least 5 s, so the deletion below lands in the middle of it on a loaded
  // machine too (20 ms a chunk left about a second).
  const { q, c } = await setUp(t, [IMAGE], { chunkDelayMs: 100 });
  await c.get(`/images/${ID}/download`);
  await waitFor('bytes arriving', () => q.events.some((e) => e.type === 'image.download.progress' && (e.payload as Progress).bytes > 0));
  t.deepEqual((await c.request('DELETE', `/images/${ID}`)).json, { status: 'deleted' });
  await waitFor('removed', async () => (await image(q)).status.phase === 'removed');
  t.is((await runs(q))[0]!.status.state, 'canceled');
  t.is(await stat(imageDir(q.config.stateDir, ID)).catch(() => null), null);
});

test('image download: a registry that answers no valid catalog is a 503 that says why', async (t) => {
  const { server, c } = await setUp(t, [IMAGE], {});
  server.catalogBody = JSON.stringify([
    { id: ID, name: 'x', distro: 'd', version: '1', arch: 'amd64', files: [{ name: '../etc/passwd', url: 'f', size: 1, sha256: 'ab' }] },
  ]);
  const r = await c.get<ProblemBody>('/images/available');
  t.is(r.status, 503);
  t.is(r.json.code, 'REGISTRY_INVALID');
  t.regex(r.json.detail, /\/0\/files\/0\/name/);
  server.catalogBody = '{ not json';
  t.like((await c.get(`/images/${ID}/download`)).json, { status: 503, code: 'REGISTRY_INVALID' });
  server.catalogBody = JSON.stringify(
    [IMAGE, IMAGE].map((i) => ({
      id: i.id,
      name: i.name,
      distro: 'd',
      version: '1',
      arch: 'a',
      files: [{ name: 'f', url: 'f', size: 1, sha256: sha(Buffer.from('x')) }],
    })),
  );
  t.regex((await c.get<ProblemBody>('/images/available')).json.detail, /listed twice/);
});

test('image download: an unreachable registry is a 503, and a short id shared by two images is 409', async (t) => {
  const twin = { ...IMAGE, id: `${ID.slice(0, 8)}-0000-4000-8000-000000000001` };
  const { c } = await setUp(t, [IMAGE, twin], {});
  const r = await c.get<ProblemBody>(`/images/${ID.slice(0, 8)}/download`);
  t.is(r.status, 409);
  t.is(r.json.code, 'AMBIGUOUS_ID');
  t.regex(r.json.detail, new RegExp(twin.id));
  const gone = await startLab(t, 0, { env: { IMAGE_REGISTRY: `http://reader:s3cret@127.0.0.1:${await closedPort()}/catalog.json` } });
  const g = new Client(gone.url);
  await g.post('/user/login', { username: 'admin', password: ADMIN_PASSWORD });
  const u = await g.get<ProblemBody>('/images/available');
  t.is(u.status, 503);
  t.is(u.json.code, 'REGISTRY_UNREACHABLE');
  t.is(u.json.detail, 'the image registry did not answer: ECONNREFUSED', 'the registry URL (it may hold credentials) is not shown');
});
