// Boots answered by any controller reach the leader's Fleet through the store: controllers are a
// Fleet and its BootRecords each, over one memory store (test/main/boot-records-etcd.test.ts runs
// two real ones on etcd).
import test from 'ava';
import { BootRecords, SEEN_RENEW_FRACTION } from '../../src/fleet/boot-records.js';
import { newNodeSpec } from '../../src/fleet/discovery.js';
import { Fleet } from '../../src/fleet/fleet.js';
import { ManualClock } from '../../src/model/clock.js';
import { BootKind, MAX_BOOTS_KEPT, type NodeBootsStatus } from '../../src/model/boot-kinds.js';
import { Kind } from '../../src/model/kinds.js';
import { DocValidator } from '../../src/model/validate.js';
import { DocumentStore, MemoryBackend, type StoredDoc } from '../../src/store/index.js';
import type { Store } from '../../src/store/types.js';
import { bootLoop } from '../../reconcilers/node/boot-loop.js';
import { report } from '../builders.js';
import { waitFor } from '../helpers/wait.js';

const HB = 10_000;
const TTL = 100_000;
const RENEW = TTL * SEEN_RENEW_FRACTION;
const NODES = ['node-0', 'node-1', 'node-2'];

/** A store that counts the record writes it is asked for, and fails them while `failing`. */
function counted(store: Store): { store: Store; writes: () => number; fail: (on: boolean) => void } {
  let writes = 0;
  let failing = false;
  const wrapped = Object.create(store) as Store;
  for (const m of ['create', 'updateStatus'] as const) {
    const inner = store[m].bind(store) as (...a: unknown[]) => Promise<unknown>;
    (wrapped as unknown as Record<string, unknown>)[m] = (...a: unknown[]) => {
      writes++;
      return failing ? Promise.reject(new Error('etcd is away')) : inner(...a);
    };
  }
  return { store: wrapped, writes: () => writes, fail: (on) => (failing = on) };
}

async function setup() {
  const backend = new MemoryBackend<StoredDoc>();
  const store = new DocumentStore(backend);
  await store.open();
  // The same documents without the kinds' schemas: what anything with access to etcd may write.
  const raw = new DocumentStore(backend, { validator: new DocValidator({ [BootKind.NodeBoots]: { spec: {}, status: {} } }) });
  for (const [i, id] of NODES.entries()) {
    await store.create({ kind: Kind.Node, id, name: id, spec: newNodeSpec(`52:54:00:00:00:0${i}`, id), status: {} });
  }
  const clock = new ManualClock();
  const warnings: string[] = [];
  const controller = (t: { teardown(fn: () => Promise<void>): void }) => {
    const c = counted(store);
    const fleet = new Fleet(clock, HB);
    const woken: string[] = [];
    fleet.onChange((id) => woken.push(id));
    const boots = new BootRecords({
      store: c.store,
      leaderStore: c.store,
      fleet,
      unapprovedTtlMs: TTL,
      warn: (m, f) => warnings.push(`${m} ${JSON.stringify(f)}`),
    });
    fleet.listenBoots(boots);
    t.teardown(() => boots.stop());
    return { fleet, boots, woken, ...c };
  };
  const record = async (id: string) => (await store.get<unknown, NodeBootsStatus>(BootKind.NodeBoots, id))?.status;
  return { store, raw, clock, warnings, controller, record };
}

const node = (id: string) => ({ ...newNodeSpec('52:54:00:00:00:00', id), approved: true });
const boots = (fleet: Fleet, id: string) => fleet.observe(id).boots.map((b) => b.at);

test("boot records: a follower's boots reach the leader, which counts them toward a boot loop, its own once", async (t) => {
  const { clock, controller, record } = await setup();
  const leader = controller(t);
  const follower = controller(t);
  t.is(await leader.boots.lead(), 0);
  const at: number[] = [];
  for (let i = 0; i < 4; i++) {
    t.true(follower.fleet.recordBoot('node-0', 'pxe', '192.0.2.20'));
    at.push(clock.now());
    clock.advance(1_000);
  }
  await waitFor('the leader hears the four', () => boots(leader.fleet, 'node-0').length === 4);
  t.deepEqual(boots(leader.fleet, 'node-0'), at);
  t.is(leader.fleet.observe('node-0').bootAddress, '192.0.2.20');
  t.true(leader.woken.includes('node-0'), 'the node loop is woken');
  const verdict = bootLoop(node('node-0'), {}, leader.fleet.observe('node-0'), clock.now(), { maxBoots: 3, windowMs: 600_000 });
  t.is(verdict.state, 'detected');
  // The leader's own boot is written too, and comes back through the watch.
  leader.fleet.recordBoot('node-0', 'pxe');
  at.push(clock.now());
  await waitFor('its own boot in the record', async () => (await record('node-0'))?.boots.length === 5);
  clock.advance(1_000);
  follower.fleet.recordBoot('node-0', 'image');
  await waitFor('the next boot heard', () => leader.fleet.observe('node-0').boots.some((b) => b.stage === 'image'));
  t.deepEqual(boots(leader.fleet, 'node-0'), [...at, clock.now()], 'nothing counted twice');
});

test('boot records: a pxe boot while the agent reports does not count on the leader, though the follower wrote it', async (t) => {
  const { clock, controller, record } = await setup();
  const leader = controller(t);
  const follower = controller(t);
  await leader.boots.lead();
  leader.fleet.report('node-0', report(), '192.0.2.10');
  follower.fleet.recordBoot('node-0', 'pxe', '192.0.2.10');
  await waitFor('the record', async () => (await record('node-0'))?.boots.length === 1);
  clock.advance(HB + 1);
  follower.fleet.recordBoot('node-0', 'pxe', '192.0.2.10');
  await waitFor('the second boot heard', () => boots(leader.fleet, 'node-0').length === 1);
  t.deepEqual(boots(leader.fleet, 'node-0'), [clock.now()], 'only the boot after the agent fell silent');
  t.is((await record('node-0'))?.boots.length, 2);
});

test("boot records: an unapproved node's address and last seen reach the leader; a later last seen alone is written once the stored one is old", async (t) => {
  const { clock, controller, record } = await setup();
  const leader = controller(t);
  const follower = controller(t);
  await leader.boots.lead();
  follower.fleet.seen('node-1', '198.51.100.7');
  const first = clock.now();
  await waitFor('the address on the leader', () => leader.fleet.observe('node-1').bootAddress === '198.51.100.7');
  t.is(leader.fleet.observe('node-1').seenAt, first);
  t.deepEqual(leader.fleet.observe('node-1').boots, [], 'asking again is no boot');
  t.is(follower.writes(), 1);
  clock.advance(RENEW - 1);
  follower.fleet.seen('node-1', '198.51.100.7');
  await follower.boots.settled();
  t.is(follower.writes(), 1, 'not yet worth a write');
  t.is((await record('node-1'))?.seenAt, new Date(first).toISOString());
  clock.advance(1);
  follower.fleet.seen('node-1', '198.51.100.7');
  await waitFor('the renewed last seen on the leader', () => leader.fleet.observe('node-1').seenAt === clock.now());
  t.is(follower.writes(), 2);
  clock.advance(1);
  follower.fleet.seen('node-1', '198.51.100.8');
  await waitFor('a new address at once', () => leader.fleet.observe('node-1').bootAddress === '198.51.100.8');
  t.is(follower.writes(), 3);
});

test('boot records: requests heard while a write is under way go in one more write; a record keeps the newest boots', async (t) => {
  const { clock, controller, record } = await setup();
  const leader = controller(t);
  const follower = controller(t);
  await leader.boots.lead();
  const n = MAX_BOOTS_KEPT + 8;
  for (let i = 0; i < n; i++) {
    follower.fleet.recordBoot('node-0', 'pxe', '192.0.2.20');
    clock.advance(1);
  }
  await follower.boots.settled();
  t.is(follower.writes(), 2);
  const stored = await record('node-0');
  t.is(stored?.boots.length, MAX_BOOTS_KEPT);
  t.is(stored?.boots.at(-1)?.at, new Date(clock.now() - 1).toISOString());
  await waitFor('the leader holds them', () => boots(leader.fleet, 'node-0').length === MAX_BOOTS_KEPT);
  t.deepEqual(boots(leader.fleet, 'node-0'), boots(follower.fleet, 'node-0'));
});

test('boot records: two controllers writing one record at once keep both their boots', async (t) => {
  const { clock, controller, record } = await setup();
  const a = controller(t);
  const b = controller(t);
  a.fleet.recordBoot('node-0', 'pxe');
  clock.advance(1);
  b.fleet.recordBoot('node-0', 'pxe');
  await Promise.all([a.boots.settled(), b.boots.settled()]);
  t.is((await record('node-0'))?.boots.length, 2);
  t.true(a.writes() + b.writes() >= 3, 'one of the two was refused and written again');
});

test('boot records: a write that fails fails no boot, and is logged', async (t) => {
  const { controller, warnings, record } = await setup();
  const follower = controller(t);
  follower.fail(true);
  t.true(follower.fleet.recordBoot('node-0', 'pxe', '192.0.2.20'));
  await follower.boots.settled();
  t.true(warnings.some((w) => w.startsWith('recording a boot in the store failed')));
  t.is(await record('node-0'), undefined);
  follower.fail(false);
  follower.fleet.recordBoot('node-0', 'pxe', '192.0.2.20');
  await follower.boots.settled();
  t.is((await record('node-0'))?.boots.length, 1);
});

test('boot records: a new leader loads every record at its election; records of deleted nodes go; garbage is ignored, then replaced', async (t) => {
  const { store, raw, clock, controller, warnings, record } = await setup();
  const follower = controller(t);
  follower.fleet.recordBoot('node-0', 'pxe', '192.0.2.20');
  follower.fleet.seen('node-1', '198.51.100.7');
  await follower.boots.settled();
  await store.delete(Kind.Node, 'node-1');
  await raw.create({ kind: BootKind.NodeBoots, id: 'node-2', name: 'node-2', spec: { nodeId: 'node-2' }, status: { boots: 'many' } });
  clock.advance(1_000);
  const leader = controller(t);
  t.is(await leader.boots.lead(), 1);
  t.deepEqual(boots(leader.fleet, 'node-0'), [clock.now() - 1_000]);
  t.is(leader.fleet.observe('node-0').bootAddress, '192.0.2.20');
  t.deepEqual(leader.woken, [], 'the loops look at every node when they start');
  t.is(await record('node-1'), undefined, 'the record of a deleted node');
  t.deepEqual(leader.fleet.observe('node-2'), { lastReportAt: null, report: null, address: null, boots: [] });
  t.true(warnings.some((w) => w.startsWith('a boot record that is not one is ignored') && w.includes('node-2')));
  follower.fleet.recordBoot('node-2', 'pxe');
  await waitFor('the next boot replaces it', () => boots(leader.fleet, 'node-2').length === 1);
  t.deepEqual((await record('node-2'))?.boots, [{ at: clock.iso(), stage: 'pxe' }]);
});

test('boot records: while leading, a deleted node loses its record, and a record written after it went is deleted unheard', async (t) => {
  const { store, clock, controller, record } = await setup();
  const leader = controller(t);
  const follower = controller(t);
  await leader.boots.lead();
  follower.fleet.recordBoot('node-0', 'pxe');
  await waitFor('heard', () => boots(leader.fleet, 'node-0').length === 1);
  await store.delete(Kind.Node, 'node-0');
  await waitFor('its record deleted', async () => (await record('node-0')) === undefined);
  // Answered as the node went: the follower's write lands after the deletion.
  clock.advance(1_000);
  follower.fleet.recordBoot('node-0', 'pxe');
  await follower.boots.settled();
  await waitFor('the late record deleted', async () => (await record('node-0')) === undefined);
  t.is(boots(leader.fleet, 'node-0').length, 1);
});
