// Fencing a hung node through its BMC (`fencing: bmc`, #15 part 4), in the lab: a machine hung
// with its power on (SimMachine.hang) is power-cycled under a `fence` lease and comes back
// active; one without fencing stays offline; two hung nodes in two failure domains are cycled one
// at a time; a machine its BMC reads off is left alone.
import test from 'ava';
import { Step } from '../../src/catalogue/index.js';
import { Kind, type NodeStatusFields } from '../../src/model/kinds.js';
import type { AnyBusEvent } from '../../src/tasks/bus.js';
import { Client } from '../http/client.js';
import { ADMIN_PASSWORD, allActive, startLab, waitFor, type LabQuarry } from './harness.js';

// Past the lab's heartbeat timeout (5 s): the node is offline for a while before it is fenced.
const FENCE_AFTER_MS = 6_000;
const env = { FENCE_AFTER_MS: String(FENCE_AFTER_MS) };

async function admin(q: LabQuarry): Promise<Client> {
  const c = new Client(q.url);
  const r = await c.post('/user/login', { username: 'admin', password: ADMIN_PASSWORD });
  if (r.status !== 200) throw new Error(`login: ${r.status}`);
  return c;
}

/** Declares machine i's BMC on its node, with fencing or not; answers the node's id. */
async function declareBmc(q: LabQuarry, c: Client, i: number, fencing: 'bmc' | 'none'): Promise<string> {
  const id = (await q.nodeOf(i)).id;
  const r = await c.request('PUT', `/nodes/${id}/bmc`, { json: { ...q.lab!.bmc(i), fencing } });
  if (r.status !== 200) throw new Error(`PUT bmc: ${r.status} ${JSON.stringify(r.json)}`);
  return id;
}

const statusOf = async (q: LabQuarry, id: string): Promise<NodeStatusFields> =>
  (await q.store.get(Kind.Node, id))!.status as NodeStatusFields;
const cycles = (q: LabQuarry, i: number): number =>
  q.lab!.bmcs.calls.filter((x) => x.address === q.lab!.bmc(i).address && x.verb === 'cycle').length;
const fenceLeaseEvents = (events: AnyBusEvent[]) =>
  events.filter(
    (e) =>
      (e.type === 'disruption.lease.taken' || e.type === 'disruption.lease.released') && (e.payload as { kind: string }).kind === 'fence',
  );

/** The most fence leases held at once, from the lease events in order. */
function mostHeldAtOnce(events: AnyBusEvent[]): number {
  const held = new Set<string>();
  let most = 0;
  for (const e of fenceLeaseEvents(events)) {
    const holder = (e.payload as { holderId: string }).holderId;
    if (e.type === 'disruption.lease.taken') held.add(holder);
    else held.delete(holder);
    most = Math.max(most, held.size);
  }
  return most;
}

test('fencing a hung node with fencing: bmc is power-cycled under a fence lease and comes back active; one without stays offline', async (t) => {
  const q = await startLab(t, 2, { env, power: { bmcPollMs: 20 } });
  await allActive(q, 2);
  const c = await admin(q);
  const fenced = await declareBmc(q, c, 1, 'bmc');
  const plain = await declareBmc(q, c, 2, 'none');
  const bootBefore = (await statusOf(q, fenced)).bootId;
  // The one without fencing hangs first: its grace has run out before the other's cycle.
  q.lab!.machine(2).hang();
  await waitFor('the unfenced node offline', async () => (await statusOf(q, plain)).phase === 'offline');
  q.lab!.machine(1).hang();
  await waitFor('the fenced node offline', async () => (await statusOf(q, fenced)).phase === 'offline');
  const back = await waitFor('the fenced node active from a new boot', async () => {
    const s = await statusOf(q, fenced);
    return s.phase === 'active' && s.bootId !== bootBefore ? s : undefined;
  });
  t.is(cycles(q, 1), 1, 'one power-cycle');
  t.is(back.disruption, undefined, 'the lease is given back');
  const run = await q.tasks.latestFor(Kind.Node, fenced, Step.bmcPowerCycle);
  t.is(run?.status.state, 'completed');
  const log = (await q.tasks.logs(run!.id)).map((l) => l.message).join('\n');
  t.regex(log, /fencing: the agent has been silent since \S+ \(more than 6000 ms\); its BMC said the power is on/);
  t.regex(log, /admitted by the disruption budget: lease "fence \(power-cycle\) of /);
  t.regex(log, /power cycled/);
  const fencedEvents = q.events.filter((e) => e.type === 'node.fenced');
  t.is(fencedEvents.length, 1);
  t.like(fencedEvents[0]!.payload, { nodeId: fenced, attempt: 1 });
  t.deepEqual(
    fenceLeaseEvents(q.events).map((e) => [e.type, (e.payload as { holderId: string }).holderId]),
    [
      ['disruption.lease.taken', fenced],
      ['disruption.lease.released', fenced],
    ],
  );
  // The unfenced node was silent longer than the fenced one, and is only offline.
  t.is(cycles(q, 2), 0);
  t.is(await q.tasks.latestFor(Kind.Node, plain, Step.bmcPowerStatus), undefined);
  t.is((await statusOf(q, plain)).phase, 'offline');
  t.false(JSON.stringify(q.events).includes(q.lab!.bmc(1).password));
  t.false(log.includes(q.lab!.bmc(1).password));
});

test('fencing two hung nodes in two failure domains with maxUnavailable 1 are power-cycled one at a time', async (t) => {
  const q = await startLab(t, 2, { env, power: { bmcPollMs: 20 } });
  await allActive(q, 2);
  const c = await admin(q);
  const ids = [await declareBmc(q, c, 1, 'bmc'), await declareBmc(q, c, 2, 'bmc')];
  const boots = await Promise.all(ids.map(async (id) => (await statusOf(q, id)).bootId));
  // The first machine cycled stays dark until the other is seen waiting: on a loaded machine
  // the two silences can end far enough apart for the first fence to be over before the second
  // asks, and then nobody waits.
  const release = q.lab!.bmcs.holdCycles();
  t.teardown(release);
  q.lab!.machine(1).hang();
  q.lab!.machine(2).hang();
  // One of them waits for the other's lease, and says so.
  const waiting = await waitFor('a node waiting for the fence lease', async () => {
    for (const id of ids) {
      const s = await statusOf(q, id);
      if (s.disruption?.state === 'waiting') return s;
    }
    return undefined;
  });
  t.like(waiting.disruption, { kind: 'fence' });
  t.regex(waiting.disruption?.reason ?? '', /at most 1 failure domain .*held by fence \(power-cycle\) of /);
  t.is(q.lab!.bmcs.calls.filter((x) => x.verb === 'cycle').length, 1, 'the waiting node is not cycled');
  release();
  await waitFor('both nodes active from a new boot', async () => {
    const ss = await Promise.all(ids.map((id) => statusOf(q, id)));
    return ss.every((s, i) => s.phase === 'active' && s.bootId !== boots[i]);
  });
  t.is(cycles(q, 1), 1);
  t.is(cycles(q, 2), 1);
  t.is(fenceLeaseEvents(q.events).length, 4, 'two leases taken and given back');
  t.is(mostHeldAtOnce(q.events), 1, 'never two fence leases at once');
});

test('fencing a silent machine its BMC reads off is not power-cycled: Blocked MachineOff', async (t) => {
  const q = await startLab(t, 1, { env, power: { bmcPollMs: 20 } });
  await allActive(q, 1);
  const c = await admin(q);
  const id = await declareBmc(q, c, 1, 'bmc');
  // The plug pulled: silent, and off.
  q.lab!.machine(1).powerOff();
  const blocked = await waitFor('Blocked: MachineOff', async () => {
    const s = await statusOf(q, id);
    const b = s.conditions?.find((x) => x.type === 'Blocked' && x.status === 'True');
    return b?.reason === 'MachineOff' ? { s, b } : undefined;
  });
  t.is(blocked.s.phase, 'offline');
  t.regex(
    blocked.b.message,
    /its BMC says the power is off: it is not power-cycled; powering it on \(node\.power-on\) is the operator's call/,
  );
  const check = await q.tasks.latestFor(Kind.Node, id, Step.bmcPowerStatus);
  t.deepEqual(check?.status.result, { was: 'off' });
  t.false(q.lab!.bmcs.calls.some((x) => x.verb === 'cycle' || x.verb === 'on'));
  t.false(q.lab!.machine(1).powered);
  t.is(fenceLeaseEvents(q.events).length, 0, 'no lease');
});
