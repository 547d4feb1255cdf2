// startQuarry on etcd, two in one process (#18 parts 3–4): the first leads (its loops run, its
// /readyz and /leaderz say so); the second follows and is ready without loops; a leader whose
// election key goes is deposed — its loops stop, onDeposed is told, its writes are fenced — and
// the follower takes over.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Etcd3 } from 'etcd3';
import { silentLogger } from '../../src/log.js';
import { startQuarry, type Quarry } from '../../src/main.js';
import { LEADER_KEY } from '../../src/store/index.js';
import { etcdEndpoints, etcdPrefix, useEtcd } from '../store/backends.js';
import { etcdMissing } from '../store/etcd-server.js';
import { until } from '../store/helpers.js';
import { etcdQuarryConfig } from './etcd-quarry.js';

useEtcd(test);
const it = etcdMissing() ? test.skip : test.serial;

it('leadership in startQuarry: one leads and runs the loops, the other follows ready; a deposed leader stops its loops and the other takes over', async (t) => {
  const prefix = etcdPrefix();
  const secretsKey = randomBytes(32).toString('base64');
  const deposed: string[] = [];
  const start = async (): Promise<Quarry> => {
    const dir = await mkdtemp(join(tmpdir(), 'quarry-leadership-'));
    t.teardown(() => rm(dir, { recursive: true, force: true }));
    const q = await startQuarry({
      config: etcdQuarryConfig(dir, prefix, secretsKey),
      log: silentLogger,
      print: () => {},
      auth: { scrypt: { N: 2 ** 10, r: 8, p: 1 } },
      onDeposed: (why) => deposed.push(why),
    });
    t.teardown(() => q.stop());
    return q;
  };
  const first = await start();
  await until(() => first.leader.isLeader() && first.manager.running(), 'the first leads with its loops');
  const second = await start();
  await until(() => second.leader.leaderUrl() === first.url, "the second knows the leader's URL");
  t.false(second.leader.isLeader());
  t.false(second.manager.running(), 'a follower runs no loops');
  const probe = async (q: Quarry, path: string): Promise<number> => (await fetch(`${q.url}${path}`)).status;
  t.is(await probe(first, '/leaderz'), 200);
  t.is(await probe(second, '/leaderz'), 503);
  t.is(await probe(second, '/readyz'), 200, 'a follower is ready');

  // The first's key deleted behind its back (what the end of its lease does).
  const raw = new Etcd3({ hosts: etcdEndpoints() });
  t.teardown(() => raw.close());
  await raw
    .delete()
    .key(prefix + LEADER_KEY)
    .exec();
  await until(() => deposed.length === 1, 'the first is told it was deposed');
  t.regex(deposed[0] ?? '', /deleted/);
  await until(() => !first.manager.running(), 'its loops stop');
  await until(() => second.leader.isLeader() && second.manager.running(), 'the second leads with its loops');
  t.is(await probe(second, '/leaderz'), 200);
  t.is(second.leader.leaderUrl(), second.url);
});
