// Boots answered by a follower reach the leader, and survive it (#18): controllers in one process
// on one etcd. Machines ask only the follower for their boot scripts; the leader's node loop
// counts those boots (a boot loop) and shows the unapproved node's boot address. Then the
// follower stops, and so does the leader: the controller elected next, which answered no boot,
// knows them all from the store.
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { newNodeSpec } from '../../src/fleet/discovery.js';
import type { Quarry } from '../../src/main.js';
import { BootKind } from '../../src/model/boot-kinds.js';
import { nodeIdForMac } from '../../src/model/ids.js';
import { Kind, type NodeSpec, type NodeStatusFields } from '../../src/model/kinds.js';
import { waitFor } from '../helpers/wait.js';
import { etcdPrefix, useEtcd } from '../store/backends.js';
import { etcdMissing } from '../store/etcd-server.js';
import { startEtcdQuarry } from './etcd-quarry.js';

useEtcd(test);
const LOOPING_MAC = '52:54:00:b0:07:01';
const LOOPING = nodeIdForMac(LOOPING_MAC);
const NEW_MAC = '52:54:00:b0:07:02';
const NEW = nodeIdForMac(NEW_MAC);
const it = etcdMissing() ? test.skip : test.serial;

async function boot(q: Quarry, mac: string): Promise<string> {
  const r = await fetch(`${q.url}/boot/config?mac=${mac}`);
  const text = await r.text();
  if (r.status !== 200) throw new Error(`boot of ${mac}: ${r.status} ${text}`);
  return /set quarry-action (\S+)/.exec(text)?.[1] ?? text;
}

const node = (q: Quarry, id: string) => q.store.get<NodeSpec, NodeStatusFields>(Kind.Node, id);
const bootLoopOf = async (q: Quarry, id: string) => (await node(q, id))?.status.conditions?.find((c) => c.type === 'BootLoop');

it("boot records on etcd: a follower's boots count on the leader, and on the next one", async (t) => {
  const prefix = etcdPrefix();
  const secretsKey = randomBytes(32).toString('base64');
  const problems: string[] = [];
  const start = (): Promise<Quarry> => startEtcdQuarry(t, prefix, secretsKey, { env: { BOOT_LOOP_MAX_BOOTS: '3' }, problems });
  const first = await start();
  await waitFor('the first leads with its loops', () => first.leader.isLeader() && first.manager.running());
  const follower = await start();
  await waitFor("the follower knows the leader's URL", () => follower.leader.leaderUrl() === first.url);
  await follower.store.create<NodeSpec>({
    kind: Kind.Node,
    id: LOOPING,
    name: 'looping',
    spec: { ...newNodeSpec(LOOPING_MAC), approved: true },
  });
  // An installer that keeps failing: four network boots, no agent ever reports.
  for (let i = 0; i < 4; i++) t.is(await boot(follower, LOOPING_MAC), 'install');
  t.is(await boot(follower, NEW_MAC), 'wait', 'an unknown machine waits for approval');

  const looping = await waitFor('the BootLoop condition, set by the leader', () =>
    bootLoopOf(first, LOOPING).then((c) => c?.status === 'True' && c),
  );
  t.regex(looping.message, /^4 network boots within 10 min without an agent report/);
  t.is(first.fleet.observe(LOOPING).boots.length, 4);
  t.deepEqual(first.fleet.observe(LOOPING).boots, follower.fleet.observe(LOOPING).boots);
  const shown = await waitFor('the boot address on the unapproved node', () =>
    node(first, NEW).then((n) => n?.status.bootAddress !== undefined && n),
  );
  t.is(shown.status.bootAddress, '127.0.0.1');
  t.is(first.fleet.observe(NEW).seenAt, follower.fleet.observe(NEW).seenAt, 'its last seen');

  // The controller elected next answered no boot: what it knows, it read from the store.
  await follower.stop();
  const next = await start();
  await waitFor("the next knows the leader's URL", () => next.leader.leaderUrl() === first.url);
  t.deepEqual(next.fleet.observe(LOOPING).boots, [], 'a follower applies no record');
  const heard = { looping: first.fleet.observe(LOOPING), unapproved: first.fleet.observe(NEW) };
  await first.stop();
  await waitFor(
    () => `the next to lead with its loops; the controllers said:\n${problems.join('\n')}`,
    () => next.leader.isLeader() && next.manager.running(),
  );
  t.deepEqual(next.fleet.observe(LOOPING).boots, heard.looping.boots);
  t.is(next.fleet.observe(NEW).seenAt, heard.unapproved.seenAt);
  t.is(next.fleet.observe(NEW).bootAddress, '127.0.0.1');
  await next.manager.idle();
  t.is((await bootLoopOf(next, LOOPING))?.status, 'True');

  // A deleted node's record goes with it.
  t.truthy(await next.store.get(BootKind.NodeBoots, NEW));
  await next.store.delete(Kind.Node, NEW);
  await waitFor('its boot record deleted', async () => (await next.store.get(BootKind.NodeBoots, NEW)) === undefined);
});
