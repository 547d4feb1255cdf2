// startQuarry on etcd, two in one process (#18 parts 3–4): the first leads (its loops run, its
// /readyz and /leaderz say so); the second follows and is ready without loops; a leader whose
// election key goes is deposed — its loops stop, onDeposed is told — and the follower takes
// over, without taking the agents it never heard (they reported to the old leader) for dead.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import type { Quarry } from '../../src/main.js';
import { deleteLeaderKey, etcdPrefix, useEtcd } from '../store/backends.js';
import { etcdMissing } from '../store/etcd-server.js';
import { until } from '../store/helpers.js';
import { startEtcdQuarry } from './etcd-quarry.js';
import { waitFor } from '../helpers/wait.js';
import { report } from '../builders.js';
import { newNodeSpec } from '../../src/fleet/discovery.js';
import { nodeIdForMac } from '../../src/model/ids.js';
import { Kind, type NodeSpec, type NodeStatusFields } from '../../src/model/kinds.js';

useEtcd(test);
const HEARTBEAT_TIMEOUT_MS = 3_000;
const MAC = '52:54:00:1e:ad:01';
const NODE = nodeIdForMac(MAC);
const phase = async (q: Quarry): Promise<string | undefined> =>
  (await q.store.get<NodeSpec, NodeStatusFields>(Kind.Node, NODE))?.status.phase;
const it = etcdMissing() ? test.skip : test.serial;

it('leadership in startQuarry: one leads and runs the loops, the other follows ready; a deposed leader stops its loops and the other takes over', async (t) => {
  const prefix = etcdPrefix();
  const secretsKey = randomBytes(32).toString('base64');
  const deposed: string[] = [];
  const start = (): Promise<Quarry> =>
    startEtcdQuarry(t, prefix, secretsKey, {
      env: { HEARTBEAT_TIMEOUT_MS: String(HEARTBEAT_TIMEOUT_MS), LEADER_LEASE_TTL_S: '2' },
      onDeposed: (why) => deposed.push(why),
    });
  const first = await start();
  await until(() => first.leader.isLeader() && first.manager.running(), 'the first leads with its loops');
  // A node whose agent reports to the leader, as agents do (a follower relays them there).
  const node = await first.store.create<NodeSpec>({ kind: Kind.Node, id: NODE, name: 'n1', spec: { ...newNodeSpec(MAC), approved: true } });
  let reportTo = first;
  const heartbeat = setInterval(() => reportTo.fleet.report(node.id, report('boot-1')), 200);
  t.teardown(() => clearInterval(heartbeat));
  await waitFor('the node active', async () => (await phase(first)) === 'active');
  const second = await start();
  const secondStarted = Date.now();
  await until(() => second.leader.leaderUrl() === first.url, "the second knows the leader's URL");
  t.false(second.leader.isLeader());
  t.false(second.manager.running(), 'a follower runs no loops');
  const probe = async (q: Quarry, path: string): Promise<number> => (await fetch(`${q.url}${path}`)).status;
  t.is(await probe(first, '/leaderz'), 200);
  t.is(await probe(second, '/leaderz'), 503);
  t.is(await probe(second, '/readyz'), 200, 'a follower is ready');

  // The follower has heard no agent for longer than the heartbeat timeout: that must not make
  // the node offline once it leads.
  await until(() => Date.now() - secondStarted > HEARTBEAT_TIMEOUT_MS, 'the follower older than a heartbeat timeout');
  const phases: string[] = [];
  const unwatch = second.store.watch(second.store.revision(), (e) => {
    if (e.type !== 'relist' && e.doc.id === NODE) phases.push(String((e.doc.status as { phase?: string }).phase));
  });
  t.teardown(unwatch);
  // The first's key deleted behind its back (what the end of its lease does).
  await deleteLeaderKey(t, prefix);
  await until(() => deposed.length === 1, 'the first is told it was deposed');
  t.regex(deposed[0] ?? '', /deleted/);
  await until(() => !first.manager.running(), 'its loops stop');
  await until(() => second.leader.isLeader() && second.manager.running(), 'the second leads with its loops');
  reportTo = second;
  const ledAt = Date.now();
  await until(() => Date.now() - ledAt > HEARTBEAT_TIMEOUT_MS && second.manager.stats().reconciles > 0, 'a heartbeat timeout of leading');
  t.false(phases.includes('offline'), `the node stayed up through the failover: ${phases.join(', ')}`);
  t.is(await phase(second), 'active');
  t.is(await probe(second, '/leaderz'), 200);
  t.is(second.leader.leaderUrl(), second.url);
});
