// Table-driven plan of the image loop, and the throttle of its progress events.
import test from 'ava';
import { ManualClock } from '../../src/model/clock.js';
import type { Doc } from '../../src/model/document.js';
import type { ImagePhase, ImageSpec, ImageStatus } from '../../src/model/image-kinds.js';
import { EventBus } from '../../src/tasks/bus.js';
import { planImage, type FileOnDisk, type ImageObserved } from '../../reconcilers/image/plan.js';
import { Progress } from '../../reconcilers/image/download.js';
import type { RunInfo } from '../../reconcilers/shared/runs.js';
import { T0 } from '../builders.js';

const NOW = T0 + 1_000_000;
const ISO = new Date(NOW).toISOString();
const meta = { generation: 2, resourceVersion: 1, createdAt: '', updatedAt: '', labels: {}, source: null };
const run = (state: RunInfo['state'], over: Partial<RunInfo> = {}): RunInfo => ({
  id: 'r1',
  state,
  attempt: 1,
  completedAt: state === 'pending' || state === 'running' ? null : NOW - 60_000,
  error: state === 'failed' ? 'connection reset' : null,
  args: {},
  result: null,
  ...over,
});
const files = [
  { name: 'vmlinuz', url: 'http://r/vmlinuz', size: 100, sha256: 'a'.repeat(64) },
  { name: 'rootfs.tar', url: 'http://r/rootfs.tar', size: 900, sha256: 'b'.repeat(64) },
];
const doc = (downloaded: boolean): Doc<ImageSpec, ImageStatus> => ({
  kind: 'Image',
  id: 'i1',
  name: 'testos',
  metadata: meta,
  spec: { id: 'i1', name: 'testos', distro: 'd', version: '1', arch: 'amd64', files, downloaded, default: false },
  status: {},
});
const none: FileOnDisk[] = files.map((f) => ({ name: f.name, size: null, partSize: null }));
const all: FileOnDisk[] = files.map((f) => ({ name: f.name, size: f.size, partSize: null }));
const half: FileOnDisk[] = [
  { name: 'vmlinuz', size: 100, partSize: null },
  { name: 'rootfs.tar', size: null, partSize: 300 },
];
const obs = (downloaded: boolean, over: Partial<ImageObserved> = {}): ImageObserved => ({
  image: doc(downloaded),
  files: none,
  dirExists: false,
  download: null,
  removal: null,
  now: NOW,
  nowIso: ISO,
  retryBaseMs: 1_000,
  ...over,
});

/** The step a plan starts, as the table names it. */
type StepKind = NonNullable<ReturnType<typeof planImage>['step']>['kind'];

const table: Array<[string, ImageObserved, ImagePhase, string, StepKind | null]> = [
  ['a wanted image with no files is downloaded', obs(true), 'downloading', 'Downloading', 'download'],
  [
    'a download under way starts nothing more',
    obs(true, { files: half, dirExists: true, download: run('running') }),
    'downloading',
    'Downloading',
    null,
  ],
  [
    'a failed download waits out its backoff',
    obs(true, { files: half, dirExists: true, download: run('failed', { completedAt: NOW - 10 }) }),
    'downloading',
    'RetryBackoff',
    null,
  ],
  [
    'a failed download is retried (and resumes from its parts)',
    obs(true, { files: half, dirExists: true, download: run('failed') }),
    'downloading',
    'Retrying',
    'download',
  ],
  [
    'three failed downloads show as failed and are still retried',
    obs(true, { download: run('failed', { attempt: 3 }) }),
    'failed',
    'Retrying',
    'download',
  ],
  [
    'every file in place: downloaded',
    obs(true, { files: all, dirExists: true, download: run('completed') }),
    'downloaded',
    'Downloaded',
    null,
  ],
  [
    'files removed behind its back are downloaded again',
    obs(true, { download: run('completed') }),
    'downloading',
    'Downloading',
    'download',
  ],
  ['a wanted image waits for a removal still running', obs(true, { removal: run('running') }), 'removing', 'Removing', null],
  ['an unwanted image with files has them removed', obs(false, { files: all, dirExists: true }), 'removing', 'Removing', 'remove'],
  [
    'an unwanted image whose download runs has it canceled first',
    obs(false, { files: half, dirExists: true, download: run('running') }),
    'removing',
    'Canceling',
    'cancel',
  ],
  [
    'a removal under way starts nothing more',
    obs(false, { files: all, dirExists: true, removal: run('running') }),
    'removing',
    'Removing',
    null,
  ],
  [
    'a failed removal waits out its backoff',
    obs(false, { dirExists: true, removal: run('failed', { completedAt: NOW - 10 }) }),
    'removing',
    'RetryBackoff',
    null,
  ],
  ['an unwanted image with nothing on disk: removed', obs(false, { removal: run('completed') }), 'removed', 'Removed', null],
];

for (const [title, input, phase, reason, step] of table) {
  test(`image plan: ${title}`, (t) => {
    const p = planImage(input);
    t.is(p.status.phase, phase);
    t.is(p.status.conditions?.find((c) => c.type === 'Ready')?.reason, reason);
    t.is(p.step?.kind ?? null, step);
    t.is(p.status.conditions?.find((c) => c.type === 'Ready')?.status, phase === 'downloaded' ? 'True' : 'False');
    t.is(p.status.observedGeneration, 2);
  });
}

test('image plan: status counts verified files and partial bytes', (t) => {
  const p = planImage(obs(true, { files: half, dirExists: true, download: run('running') }));
  t.deepEqual(p.status.files, [
    { name: 'vmlinuz', size: 100, present: true },
    { name: 'rootfs.tar', size: 900, present: false },
  ]);
  t.like(p.status, { bytes: 400, total: 1000, verified: false });
  t.like(planImage(obs(true, { files: all })).status, { bytes: 1000, verified: true });
  // A file of the wrong size under its final name is not counted as present.
  const wrong = planImage(obs(true, { files: [{ name: 'vmlinuz', size: 99, partSize: null }, all[1]!] }));
  t.is(wrong.step?.kind, 'download');
});

test('image plan: a failed attempt shows as Degraded with its error; a checksum mismatch has its own reason', (t) => {
  const reset = planImage(obs(true, { download: run('failed') }));
  t.like(
    reset.status.conditions?.find((c) => c.type === 'Degraded'),
    { status: 'True', reason: 'DownloadFailed', message: 'connection reset' },
  );
  const bad = planImage(obs(true, { download: run('failed', { error: 'SHA-256 mismatch for http://r/rootfs.tar: ...' }) }));
  t.like(
    bad.status.conditions?.find((c) => c.type === 'Degraded'),
    { status: 'True', reason: 'ChecksumMismatch' },
  );
  t.regex(bad.status.conditions?.find((c) => c.type === 'Ready')?.message ?? '', /attempt 1 failed: SHA-256 mismatch/);
  t.like(
    planImage(obs(true, { download: run('running') })).status.conditions?.find((c) => c.type === 'Degraded'),
    { status: 'False' },
  );
});

test('image plan: a second plan over its own status changes nothing (no wake-up loop)', (t) => {
  const first = planImage(obs(true, { files: all, download: run('completed') }));
  const again = planImage(obs(true, { files: all, download: run('completed'), image: { ...doc(true), status: first.status } }));
  t.deepEqual(again.status, first.status);
});

test('image progress: throttled to one event per interval, the first and the final one always sent', (t) => {
  const clock = new ManualClock(T0);
  const bus = new EventBus();
  const seen: unknown[] = [];
  bus.subscribe((e) => seen.push(e.payload));
  const p = new Progress({ bus, clock, stateDir: '/x', progressEveryMs: 250, stallMs: 1 }, 'i1', 1000);
  for (let bytes = 0; bytes <= 1000; bytes += 10) {
    p.report(bytes);
    clock.advance(10); // a chunk every 10 ms: 101 chunks over ~1 s
  }
  p.report(1000, true);
  t.deepEqual(seen, [
    { imageId: 'i1', bytes: 0, total: 1000, percent: 0, done: false },
    { imageId: 'i1', bytes: 250, total: 1000, percent: 25, done: false },
    { imageId: 'i1', bytes: 500, total: 1000, percent: 50, done: false },
    { imageId: 'i1', bytes: 750, total: 1000, percent: 75, done: false },
    { imageId: 'i1', bytes: 1000, total: 1000, percent: 100, done: false },
    { imageId: 'i1', bytes: 1000, total: 1000, percent: 100, done: true },
  ]);
});
