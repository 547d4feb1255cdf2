// What the agents said survives the leader (#18 part 3): two startQuarry on one etcd; the first
// leads and hears a node's agent, whose heartbeat record and inventory it writes to the store; it
// stops (handing the leadership over) and the second, which never heard that agent, knows at its
// election that the node is alive and what it reported, before any report reaches it, so the
// node is not taken for one awaiting its agent's report.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { newNodeSpec } from '../../src/fleet/discovery.js';
import type { Quarry } from '../../src/main.js';
import { FleetKind, type NodeHeartbeatStatus, type NodeInventoryStatus } from '../../src/model/fleet-kinds.js';
import { nodeIdForMac } from '../../src/model/ids.js';
import { Kind, type NodeSpec, type NodeStatusFields } from '../../src/model/kinds.js';
import { report } from '../builders.js';
import { waitFor } from '../helpers/wait.js';
import { etcdPrefix, useEtcd } from '../store/backends.js';
import { etcdMissing } from '../store/etcd-server.js';
import { startEtcdQuarry } from './etcd-quarry.js';

useEtcd(test);
// Long enough that a record renewed every half of it is still fresh at the second's election
// on a loaded machine; the test waits for no timeout.
const HEARTBEAT_TIMEOUT_MS = 20_000;
const MAC = '52:54:00:1e:ad:02';
const NODE = nodeIdForMac(MAC);
const it = etcdMissing() ? test.skip : test.serial;

it('heartbeat records on etcd: a new leader loads which nodes are alive and their inventory at its election', async (t) => {
  const prefix = etcdPrefix();
  const secretsKey = randomBytes(32).toString('base64');
  const start = (): Promise<Quarry> =>
    startEtcdQuarry(t, prefix, secretsKey, { env: { HEARTBEAT_TIMEOUT_MS: String(HEARTBEAT_TIMEOUT_MS), LEADER_LEASE_TTL_S: '2' } });
  const first = await start();
  await waitFor('the first leads with its loops', () => first.leader.isLeader() && first.manager.running());
  await first.store.create<NodeSpec>({ kind: Kind.Node, id: NODE, name: 'n1', spec: { ...newNodeSpec(MAC), approved: true } });
  const said = report('boot-9');
  // Through the gateway the HTTP route calls, with the address the master saw.
  const beat = () => first.gateway.report(NODE, said, { address: '192.0.2.77' });
  await beat();
  const heartbeat = setInterval(() => void beat().catch(() => undefined), 200);
  t.teardown(() => clearInterval(heartbeat));
  await waitFor(
    'the node active',
    async () => (await first.store.get<NodeSpec, NodeStatusFields>(Kind.Node, NODE))?.status.phase === 'active',
  );
  const stored = await waitFor('its heartbeat record and inventory in etcd', async () => {
    const hb = await first.store.get<unknown, NodeHeartbeatStatus>(FleetKind.NodeHeartbeat, NODE);
    const inv = await first.store.get<unknown, NodeInventoryStatus>(FleetKind.NodeInventory, NODE);
    return hb && inv && { hb, inv };
  });
  t.is((stored.inv.status.report as { bootId: string }).bootId, 'boot-9');
  t.is(stored.inv.status.address, '192.0.2.77');

  const second = await start();
  await waitFor("the second knows the leader's URL", () => second.leader.leaderUrl() === first.url);
  t.is(second.fleet.observe(NODE).lastReportAt, null, 'a follower hears no agent');
  const reasons: string[] = [];
  const unwatch = second.store.watch(second.store.revision(), (e) => {
    if (e.type === 'relist' || e.doc.kind !== Kind.Node || e.doc.id !== NODE) return;
    const ready = (e.doc.status as NodeStatusFields).conditions?.find((c) => c.type === 'Ready');
    reasons.push(ready?.reason ?? '-');
  });
  t.teardown(unwatch);
  // The agent falls silent as the leadership moves: the second hears nothing from it.
  clearInterval(heartbeat);
  await first.stop();
  await waitFor('the second leads with its loops', () => second.leader.isLeader() && second.manager.running());
  const heard = second.fleet.observe(NODE);
  const renewed = await second.store.get<unknown, NodeHeartbeatStatus>(FleetKind.NodeHeartbeat, NODE);
  t.is(heard.lastReportAt, Date.parse(renewed!.status.renewTime!), 'liveness: the record the first renewed');
  t.is(heard.report?.bootId, 'boot-9', 'inventory: what the agent reported to the first');
  t.deepEqual(heard.report, said);
  t.is(heard.address, '192.0.2.77');
  await second.manager.idle();
  t.is((await second.store.get<NodeSpec, NodeStatusFields>(Kind.Node, NODE))?.status.phase, 'active');
  t.false(reasons.includes('AwaitingReport'), `the node was known alive at the election: ${reasons.join(', ')}`);
});
