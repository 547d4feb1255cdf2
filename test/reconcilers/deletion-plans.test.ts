// The questions before a data-bearing deletion, and the pure plans that ask them: a filesystem's
// and an RGW user's `state: absent` (reconcilers/shared/deletion.ts, reconcilers/fs/plan.ts,
// reconcilers/rgw-user/plan.ts, src/model/deletion.ts).
import test from 'ava';
import type { Doc } from '../../src/model/document.js';
import type { FilesystemSpec, FilesystemStatus, RgwUserSpec, RgwUserStatus } from '../../src/model/storage-kinds.js';
import { bytesText, fsDeletionQuestion, rgwUserDeletionQuestion } from '../../src/model/deletion.js';
import { planDeletion, type DeletionObserved, type DeletionOutcome, type DeletionStep } from '../../reconcilers/shared/deletion.js';
import { planFs, type FsObserved } from '../../reconcilers/fs/plan.js';
import { planRgwUser, type RgwUserObserved } from '../../reconcilers/rgw-user/plan.js';
import { NOW, run } from './plan-fixtures.js';

const ISO = new Date(NOW).toISOString();

test('deletion question bytesText reads bytes in binary units', (t) => {
  t.is(bytesText(0), '0 B');
  t.is(bytesText(1023), '1023 B');
  t.is(bytesText(1536), '1.5 KiB');
  t.is(bytesText(5 * 2 ** 30), '5.0 GiB');
  t.is(bytesText(300 * 2 ** 40), '300 TiB');
});

test('deletion question of a filesystem names its pools with objects and bytes, and the total', (t) => {
  const q = fsDeletionQuestion('cephfs', [
    { name: 'cephfs_metadata', objects: 22, bytes: 2306 },
    { name: 'cephfs_data', objects: 1, bytes: 4096 },
  ]);
  t.is(
    q,
    'Delete filesystem cephfs with its pools? This destroys the filesystem and pool cephfs_metadata (22 objects, 2.3 KiB) and pool cephfs_data (1 object, 4.0 KiB), every file in them. In all 23 objects, 6.3 KiB. "no" keeps it.',
  );
});

test('deletion question of a filesystem without numbers names the pools and says why', (t) => {
  const q = fsDeletionQuestion('fs1', [{ name: 'm' }, { name: 'd' }], 'Ceph did not say what they hold: timed out');
  t.regex(q, /pool m and pool d, every file in them\. \(Ceph did not say what they hold: timed out\)/);
  t.notRegex(q, /In all/);
});

test('deletion question of an RGW user names its buckets, or says it owns none, or that RGW was not asked', (t) => {
  t.regex(
    rgwUserDeletionQuestion('alice', [
      { name: 'photos', objects: 2, bytes: 5000 },
      { name: 'empty', objects: 0, bytes: 0 },
    ]),
    /its keys and 2 buckets: bucket photos \(2 objects, 4\.9 KiB\), bucket empty \(0 objects, 0 B\), every object in them\. In all 2 objects, 4\.9 KiB\./,
  );
  t.regex(rgwUserDeletionQuestion('bob', []), /no buckets \(it owns none\)/);
  t.regex(rgwUserDeletionQuestion('carol', null), /its buckets \(as RGW lists them when asked\)/);
});

const obs = (over: Partial<DeletionObserved> = {}): DeletionObserved => ({
  generation: 4,
  confirmRun: null,
  deleteRun: null,
  now: NOW,
  retryBaseMs: 1_000,
  ...over,
});
const mine = { args: { generation: 4 } };

const table: Array<[string, DeletionObserved, DeletionOutcome['state'], string, DeletionStep['kind'] | null]> = [
  ['asks first', obs(), 'asking', 'Asking', 'confirm'],
  [
    'a question of an earlier request does not count: asks again',
    obs({ confirmRun: run('completed', { args: { generation: 2 }, result: { answer: 'no' } }) }),
    'asking',
    'Asking',
    'confirm',
  ],
  ['waits for the answer', obs({ confirmRun: run('running', mine) }), 'asking', 'AwaitingAnswer', null],
  ['"yes" deletes', obs({ confirmRun: run('completed', { ...mine, result: { answer: 'yes' } }) }), 'deleting', 'Deleting', 'delete'],
  ['"no" keeps it', obs({ confirmRun: run('completed', { ...mine, result: { answer: 'no' } }) }), 'declined', 'DeletionDeclined', null],
  ['a canceled question keeps it', obs({ confirmRun: run('canceled', mine) }), 'canceled', 'DeletionCanceled', null],
  ['a deletion under way starts nothing more', obs({ deleteRun: run('running', mine) }), 'deleting', 'Deleting', null],
  [
    'a failed deletion waits out its backoff',
    obs({ deleteRun: run('failed', { ...mine, completedAt: NOW - 10 }) }),
    'deleting',
    'RetryBackoff',
    null,
  ],
  ['a failed deletion is retried', obs({ deleteRun: run('failed', mine) }), 'deleting', 'Deleting', 'delete'],
  ['a completed deletion: deleted', obs({ deleteRun: run('completed', mine) }), 'deleted', 'Deleted', null],
];
for (const [title, o, state, reason, step] of table) {
  test(`deletion plan ${title}`, (t) => {
    const d = planDeletion(o, 'filesystem cephfs');
    t.is(d.state, state);
    t.is(d.reason, reason);
    t.is(d.step?.kind ?? null, step);
  });
}

test('deletion plan says who declined and when, and how to ask again', (t) => {
  const confirmRun = {
    ...run('completed', { ...mine, result: { answer: 'no' } }),
    answeredBy: 'ops',
    answeredAt: '2026-01-02T03:04:05.000Z',
  };
  const d = planDeletion(obs({ confirmRun }), 'filesystem cephfs');
  t.is(
    d.message,
    'the operator (ops, at 2026-01-02T03:04:05.000Z) declined to delete filesystem cephfs; it is kept with its data. To ask again, declare it present and then absent again',
  );
});

const meta = { generation: 4, resourceVersion: 1, createdAt: '', updatedAt: '', labels: {}, source: null };
const fsDoc = (status: FilesystemStatus): Doc<FilesystemSpec, FilesystemStatus> => ({
  kind: 'Filesystem',
  id: 'f1',
  name: 'cephfs',
  metadata: meta,
  spec: { name: 'cephfs', metadataPool: 'meta', metadataPG: 16, dataPool: 'data', dataPG: 32, absent: true },
  status,
});
const fsObs = (over: Partial<FsObserved> = {}): FsObserved => ({
  fs: fsDoc({ created: true, pools: [{ name: 'meta', pgNum: 16 }] }),
  quorum: true,
  ceph: { pools: [{ name: 'meta', pgNum: 16 }], listed: { metadataPool: 'meta', dataPools: ['data'] }, mdsUp: 1, activeMds: 'a' },
  run: run('completed'),
  now: NOW,
  nowIso: ISO,
  retryBaseMs: 1_000,
  ...over,
});

test('deletion plan of a filesystem asks while it is in Ceph, and never creates it again', (t) => {
  const p = planFs(fsObs());
  t.like(p, { step: { kind: 'confirm', attempt: 1 }, remove: false });
  t.like(p.status, { phase: 'blocked' });
  t.like(planFs(fsObs({ deletion: { confirmRun: run('completed', { ...mine, result: { answer: 'no' } }), deleteRun: null } })), {
    step: null,
    remove: false,
    reason: 'DeletionDeclined',
  });
});

test('deletion plan of a filesystem removes the declaration once deleted, or when Ceph has none of it', (t) => {
  t.like(planFs(fsObs({ deletion: { confirmRun: null, deleteRun: run('completed', mine) } })), { remove: true, step: null });
  t.like(planFs(fsObs({ ceph: { pools: [], listed: null, mdsUp: 1, activeMds: null } })), { remove: true, step: null });
  // Never started making it: goes even without quorum.
  t.like(planFs(fsObs({ fs: fsDoc({}), run: null, quorum: false, ceph: null })), { remove: true });
  // Started, and no quorum to look: waits.
  t.like(planFs(fsObs({ quorum: false, ceph: null })), { remove: false, reason: 'WaitingForQuorum', step: null });
});

const userDoc: Doc<RgwUserSpec, RgwUserStatus> = {
  kind: 'RgwUser',
  id: 'u1',
  name: 'alice',
  metadata: meta,
  spec: { userId: 'alice', displayName: 'Alice', absent: true },
  status: {},
};
const userObs = (over: Partial<RgwUserObserved> = {}): RgwUserObserved => ({
  user: userDoc,
  quorum: true,
  gatewayRunning: true,
  issued: 'AK',
  run: run('completed'),
  now: NOW,
  nowIso: ISO,
  retryBaseMs: 1_000,
  ...over,
});

test('deletion plan of an RGW user asks when it was made, and goes at once when it never was', (t) => {
  t.like(planRgwUser(userObs()), { step: { kind: 'confirm' }, remove: false });
  t.like(planRgwUser(userObs({ deletion: { confirmRun: run('completed', { ...mine, result: { answer: 'yes' } }), deleteRun: null } })), {
    step: { kind: 'delete' },
  });
  t.like(planRgwUser(userObs({ deletion: { confirmRun: null, deleteRun: run('completed', mine) } })), { remove: true });
  t.like(planRgwUser(userObs({ issued: null, run: null, quorum: false })), { remove: true, step: null });
});
