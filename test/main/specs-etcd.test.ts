// The specs folder with two controllers on etcd: only the leader watches its folder (one
// applier, whose events /events streams); a follower relays the folder's routes to the leader;
// the controller that takes over applies its own checkout of the folder.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import type { Quarry } from '../../src/main.js';
import { StorageKind, filesystemId } from '../../src/model/storage-kinds.js';
import { deleteLeaderKey, etcdPrefix, useEtcd } from '../store/backends.js';
import { etcdMissing } from '../store/etcd-server.js';
import { waitFor } from '../helpers/wait.js';
import { Client } from '../http/client.js';
import { doc } from '../gitops/fixtures.js';
import { ETCD_ADMIN_PASSWORD, startEtcdQuarry } from './etcd-quarry.js';

useEtcd(test);
const it = etcdMissing() ? test.skip : test.serial;

const fsFile = (name: string): string => doc('Filesystem', name, `name: ${name}\nmetadataPool: ${name}_metadata\ndataPool: ${name}_data`);

it('specs folder on two controllers: the leader alone applies it, a follower relays its routes, the next leader applies its own checkout', async (t) => {
  const prefix = etcdPrefix();
  const secretsKey = randomBytes(32).toString('base64');
  const start = (specs: Record<string, string>): Promise<Quarry> => startEtcdQuarry(t, prefix, secretsKey, { specs });
  const shared = fsFile('shared');
  const first = await start({ 'shared.yaml': shared });
  await waitFor('the first leads', () => first.leader.isLeader() && first.manager.running());
  // The second's checkout has a file the first's has not: it must wait for the leadership.
  const second = await start({ 'shared.yaml': shared, 'later.yaml': fsFile('later') });
  await waitFor("the second knows the leader's URL", () => second.leader.leaderUrl() === first.url);
  await waitFor("the leader applied its folder's file", () =>
    first.specs.folder.status().some((s) => s.file === 'shared.yaml' && s.state === 'applied'),
  );

  const api = new Client(second.url);
  await api.post('/user/login', { username: 'admin', password: ETCD_ADMIN_PASSWORD });
  const relayed = await api.get<Array<{ file: string; state: string }>>('/specs/status');
  t.is(relayed.status, 200);
  t.deepEqual(
    relayed.json.map((s) => [s.file, s.state]),
    [['shared.yaml', 'applied']],
    "the follower answers with the leader's folder",
  );
  t.deepEqual(second.specs.folder.status(), [], 'the follower does not watch its folder');
  t.is(await second.store.get(StorageKind.Filesystem, filesystemId('later')), undefined);

  await deleteLeaderKey(t, prefix);
  await waitFor('the second leads with its loops', () => second.leader.isLeader() && second.manager.running());
  await waitFor("the new leader applied its folder's own file", async () =>
    (await second.store.get(StorageKind.Filesystem, filesystemId('later'))) ? true : undefined,
  );
  const after = await api.get<Array<{ file: string; state: string }>>('/specs/status');
  t.deepEqual(after.json.map((s) => s.file).sort(), ['later.yaml', 'shared.yaml']);
});
