// Data-bearing deletions against the lab, through a specs file and the HTTP API: a filesystem's
// or an RGW user's `state: absent` is planned with its question, asks before anything goes,
// keeps everything on "no" (and says who declined), and on "yes" leaves nothing behind in the
// lab's Ceph: no filesystem and no pools, no user and no buckets.
import test from 'ava';
import type { Client } from '../http/client.js';
import type { ClusterMetrics } from '../http/bodies.js';
import { StorageKind, filesystemId, rgwUserId } from '../../src/model/storage-kinds.js';
import { allActive, waitFor } from './harness.js';
import { monsAndManager } from './ceph-cluster.js';
import { specsLab, type SpecsLab } from '../gitops/helpers.js';

interface Pending {
  id: string;
  taskName: string;
  prompt: string;
  options: string[];
}
interface Cond {
  type: string;
  status: string;
  reason: string;
  message: string;
}
interface PlannedTask {
  task: string;
  destructive: boolean;
  question?: string;
  pools?: Array<{ name: string; objects?: number; bytes?: number }>;
}

const FS = (state: 'present' | 'absent') =>
  `apiVersion: quarry/v1\nkind: Filesystem\nmetadata: { name: cephfs }\nspec:\n  name: cephfs\n  metadataPool: cephfs_metadata\n  dataPool: cephfs_data\n  state: ${state}\n`;
const USER = (state: 'present' | 'absent') =>
  `apiVersion: quarry/v1\nkind: RgwUser\nmetadata: { name: alice }\nspec:\n  userId: alice\n  displayName: Alice\n  state: ${state}\n`;

async function labWithQuorum(t: Parameters<typeof specsLab>[0]): Promise<{ q: SpecsLab; c: Client; ids: string[] }> {
  const q = await specsLab(t, 3);
  const nodes = await allActive(q, 3);
  const c = await q.admin();
  await monsAndManager(q, c, nodes);
  return { q, c, ids: nodes.map((n) => n.id) };
}

const question = (c: Client, taskName: string): Promise<Pending> =>
  waitFor(
    `a question of ${taskName}`,
    async () => ((await c.get('/task/questions/pending')).json as Pending[]).find((p) => p.taskName === taskName),
    30_000,
  );

const plannedTasks = async (c: Client, file: string, text: string): Promise<PlannedTask[]> =>
  (
    (await c.request('POST', `/specs/plan?file=${file}`, { body: text, headers: { 'content-type': 'application/yaml' } })).json as {
      tasks: PlannedTask[];
    }
  ).tasks;

const fsConds = async (c: Client): Promise<Cond[] | undefined> =>
  ((await c.get('/ceph/fs')).json as Array<{ name: string; status: { conditions: Cond[] } }>).find((f) => f.name === 'cephfs')?.status
    .conditions;

test('deletion: a filesystem declared absent is planned with its question, kept on "no" and said so, and gone with its pools on "yes"', async (t) => {
  const { q, c, ids } = await labWithQuorum(t);
  await c.post('/ceph/mds', { nodeId: ids[1] });
  await q.put('fs.yaml', FS('present'));
  await waitFor(
    'filesystem ready',
    async () => ((await c.get('/ceph/fs')).json as Array<{ status: { phase: string } }>)[0]?.status.phase === 'ready',
    30_000,
  );
  const ceph = q.lab!.ceph;
  // The metrics are the cluster loop's last look: wait until it has seen the filesystem's pools.
  const poolsBefore = await waitFor('metrics count the pools', async () => {
    const n = (await c.get<ClusterMetrics>('/ceph/metrics')).json.poolCount;
    return n === ceph.osdmap.pools.size ? n : undefined;
  });

  // The plan lists the question and the deletion, destructive, naming the pools.
  const tasks = await plannedTasks(c, 'fs.yaml', FS('absent'));
  const [ask, del] = [tasks.find((x) => x.task === 'ceph.fs.delete.confirm'), tasks.find((x) => x.task === 'ceph.fs.delete')];
  t.like(del, { destructive: true });
  t.like(ask, { destructive: false });
  // With what Ceph says the pools hold (ceph df at plan time), as the run will ask.
  t.regex(
    del!.question!,
    /Delete filesystem cephfs with its pools\? .*pool cephfs_metadata \(\d+ objects, [\d.]+ [KMG]?i?B\) and pool cephfs_data \(0 objects, 0 B\)/,
  );
  t.deepEqual(
    del!.pools?.map((p) => [p.name, typeof p.objects, typeof p.bytes]),
    [
      ['cephfs_metadata', 'number', 'number'],
      ['cephfs_data', 'number', 'number'],
    ],
  );
  t.is(ask!.question, del!.question);

  // Applied: a question naming what Ceph says the pools hold; "no" keeps everything.
  await q.put('fs.yaml', FS('absent'));
  const first = await question(c, 'ceph.fs.delete.confirm');
  t.regex(first.prompt, /pool cephfs_metadata \(\d+ objects, [\d.]+ [KMG]?i?B\) and pool cephfs_data \(0 objects, 0 B\)/);
  t.deepEqual(first.options, ['yes', 'no']);
  t.true(ceph.fsmap.get('cephfs') !== undefined, 'nothing is deleted while the question is open');
  t.is((await c.post(`/task/question/${first.id}/answer`, { answer: 'no' })).status, 200);
  const declined = await waitFor('declined and said so', async () =>
    (await fsConds(c))?.find((x) => x.type === 'Blocked' && x.reason === 'DeletionDeclined'),
  );
  t.regex(declined.message, /the operator \(admin, at \d{4}-[^)]+\) declined to delete filesystem cephfs/);
  t.regex(declined.message, /declare it present and then absent again/);
  t.like(
    (await fsConds(c))?.find((x) => x.type === 'Ready'),
    { status: 'False', reason: 'DeletionDeclined' },
  );
  t.truthy(ceph.fsmap.get('cephfs'));
  t.truthy(ceph.osdmap.poolByName('cephfs_data'));
  t.false(
    (await q.tasks.recent(1000)).some((r) => r.spec.taskName === 'ceph.fs.delete'),
    'no deletion ran',
  );

  // Declared present, then absent again: asked again; "yes" deletes the filesystem and its pools.
  await q.put('fs.yaml', FS('present'));
  await waitFor(
    'present again',
    async () => (await q.store.get<{ absent?: boolean }>(StorageKind.Filesystem, filesystemId('cephfs')))?.spec.absent !== true,
  );
  await waitFor('ready again', async () => (await fsConds(c))?.find((x) => x.type === 'Ready')?.status === 'True');
  await q.put('fs.yaml', FS('absent'));
  const second = await question(c, 'ceph.fs.delete.confirm');
  t.not(second.id, first.id);
  t.is((await c.post(`/task/question/${second.id}/answer`, { answer: 'yes' })).status, 200);
  await waitFor(
    'the declaration gone',
    async () => (await q.store.get(StorageKind.Filesystem, filesystemId('cephfs'))) === undefined,
    30_000,
  );
  t.is(ceph.fsmap.get('cephfs'), undefined);
  t.is(ceph.osdmap.poolByName('cephfs_metadata'), undefined);
  t.is(ceph.osdmap.poolByName('cephfs_data'), undefined);
  await waitFor('poolCount drops by two', async () => (await c.get<ClusterMetrics>('/ceph/metrics')).json.poolCount === poolsBefore - 2);
  t.is(ceph.config.get('mon mon_allow_pool_delete'), undefined, 'pool deletion is not left allowed');
  const run = (await q.tasks.recent(1000)).find((r) => r.spec.taskName === 'ceph.fs.delete' && r.status.state === 'completed')!;
  const lines = ((await c.get(`/task/run/${run.id}/logs`)).json as Array<{ message: string }>).map((l) => l.message).join('\n');
  t.regex(lines, /filesystem cephfs removed/);
  t.regex(lines, /pool cephfs_data removed with every object in it/);
  // The file still says absent: nothing more is planned or done.
  t.deepEqual(await plannedTasks(c, 'fs.yaml', FS('absent')), []);
});

test('deletion: an RGW user declared absent names its buckets, is kept on "no", and goes with its buckets on "yes"', async (t) => {
  const { q, c, ids } = await labWithQuorum(t);
  await c.post('/gateways/rgw/deploy', { nodeId: ids[0] });
  await q.put('users.yaml', USER('present'));
  await waitFor('keys issued', async () => (await q.store.get(StorageKind.RgwUserSecret, rgwUserId('alice'))) !== undefined, 30_000);
  const buckets = q.lab!.ceph.buckets;
  buckets.create('alice', 'photos');
  buckets.put('alice', 'photos', 'a.jpg', Buffer.alloc(3000), 'image/jpeg');
  buckets.put('alice', 'photos', 'b.jpg', Buffer.alloc(2000), 'image/jpeg');

  const tasks = await plannedTasks(c, 'users.yaml', USER('absent'));
  t.like(
    tasks.find((x) => x.task === 'ceph.rgw.user.delete'),
    { destructive: true },
  );
  t.regex(tasks.find((x) => x.task === 'ceph.rgw.user.delete.confirm')!.question!, /Delete RGW user alice with its data\?/);

  await q.put('users.yaml', USER('absent'));
  const first = await question(c, 'ceph.rgw.user.delete.confirm');
  t.regex(first.prompt, /1 bucket: bucket photos \(2 objects, 4\.9 KiB\)/);
  await c.post(`/task/question/${first.id}/answer`, { answer: 'no' });
  const kept = await waitFor('declined and said so', async () => {
    const [u] = (await c.get('/gateways/rgw/users')).json as Array<{ state: string; message: string }>;
    return u && /declined to delete RGW user alice/.test(u.message) ? u : undefined;
  });
  t.is(kept.state, 'blocked');
  t.truthy(q.lab!.ceph.accounts.user('alice'));
  t.is(buckets.owned('alice').length, 1);

  await q.put('users.yaml', USER('present'));
  await waitFor(
    'present again',
    async () => (await q.store.get<{ absent?: boolean }>(StorageKind.RgwUser, rgwUserId('alice')))?.spec.absent !== true,
  );
  await q.put('users.yaml', USER('absent'));
  const second = await question(c, 'ceph.rgw.user.delete.confirm');
  await c.post(`/task/question/${second.id}/answer`, { answer: 'yes' });
  await waitFor('the user gone', async () => (await q.store.get(StorageKind.RgwUser, rgwUserId('alice'))) === undefined, 30_000);
  t.is(await q.store.get(StorageKind.RgwUserSecret, rgwUserId('alice')), undefined, 'its key pair is gone too');
  t.throws(() => q.lab!.ceph.accounts.user('alice'));
  t.deepEqual(buckets.owned('alice'), []);
});
