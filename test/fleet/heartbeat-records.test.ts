import test from 'ava';
import { Fleet } from '../../src/fleet/fleet.js';
import { HeartbeatRecords, RENEW_FRACTION } from '../../src/fleet/heartbeat-records.js';
import { newNodeSpec } from '../../src/fleet/discovery.js';
import { ManualClock } from '../../src/model/clock.js';
import { FleetKind, type NodeHeartbeatStatus, type NodeInventoryStatus } from '../../src/model/fleet-kinds.js';
import { Kind } from '../../src/model/kinds.js';
import { createMemoryStore } from '../../src/store/index.js';
import { STATUS_BATCH_MAX, type Store } from '../../src/store/types.js';
import { report } from '../builders.js';

const HB = 10_000;
const RENEW = HB * RENEW_FRACTION;

/** A store that counts its writes: transactions of the batch path, and every other write. */
function counted(store: Store): { store: Store; batches: number[]; others: () => number } {
  const batches: number[] = [];
  let others = 0;
  const wrapped = Object.create(store) as Store;
  wrapped.writeStatuses = (writes) => {
    batches.push(writes.length);
    return store.writeStatuses(writes);
  };
  for (const m of ['create', 'updateSpec', 'updateStatus', 'mutateSpec', 'delete'] as const) {
    const inner = store[m].bind(store) as (...a: unknown[]) => Promise<unknown>;
    (wrapped as unknown as Record<string, unknown>)[m] = (...a: unknown[]) => {
      others++;
      return inner(...a);
    };
  }
  return { store: wrapped, batches, others: () => others };
}

async function setup(nodes: number) {
  const base = await createMemoryStore();
  const ids = Array.from({ length: nodes }, (_, i) => `node-${i}`);
  for (const [i, id] of ids.entries()) {
    const mac = `52:54:00:00:${(i >> 8).toString(16).padStart(2, '0')}:${(i & 0xff).toString(16).padStart(2, '0')}`;
    await base.create({ kind: Kind.Node, id, name: id, spec: newNodeSpec(mac, id), status: {} });
  }
  const clock = new ManualClock();
  const fleet = new Fleet(clock, HB);
  const c = counted(base);
  const records = new HeartbeatRecords({ store: c.store, fleet, clock, heartbeatTimeoutMs: HB, flushEveryMs: 1e9 });
  fleet.listen(records);
  await records.start();
  return { base, clock, fleet, records, ids, ...c };
}

const renewTime = async (store: Store, id: string) =>
  (await store.get<unknown, NodeHeartbeatStatus>(FleetKind.NodeHeartbeat, id))?.status.renewTime;

test('heartbeat records: a report that changed nothing writes nothing until the renewal is due', async (t) => {
  const { base, clock, fleet, records, batches, others } = await setup(1);
  fleet.report('node-0', report(), '192.0.2.10');
  await records.flush();
  t.deepEqual(batches, [2], 'the first report: its heartbeat record and its inventory, in one transaction');
  const first = await renewTime(base, 'node-0');
  t.is(first, clock.iso());
  clock.advance(RENEW - 1);
  fleet.report('node-0', report(), '192.0.2.10');
  await records.flush();
  t.deepEqual(batches, [2], 'nothing changed and the record is younger than the renewal interval');
  t.is(await renewTime(base, 'node-0'), first);
  clock.advance(1);
  fleet.report('node-0', report(), '192.0.2.10');
  await records.flush();
  t.deepEqual(batches, [2, 1], 'the renewal alone');
  t.is(await renewTime(base, 'node-0'), clock.iso());
  t.is(others(), 0, 'no write outside the batches');
});

test('heartbeat records: a changed inventory or source address is written at the next flush', async (t) => {
  const { base, clock, fleet, records, batches } = await setup(1);
  fleet.report('node-0', report(), '192.0.2.10');
  await records.flush();
  clock.advance(1_000);
  fleet.report('node-0', report('boot-2'), '192.0.2.10');
  await records.flush();
  t.deepEqual(batches, [2, 1]);
  const inv = await base.get<unknown, NodeInventoryStatus>(FleetKind.NodeInventory, 'node-0');
  t.is((inv?.status.report as { bootId: string }).bootId, 'boot-2');
  t.is(inv?.status.reportedAt, clock.iso());
  clock.advance(1_000);
  fleet.report('node-0', report('boot-2'), '192.0.2.11');
  await records.flush();
  t.deepEqual(batches, [2, 1, 1]);
  t.is((await base.get<unknown, NodeInventoryStatus>(FleetKind.NodeInventory, 'node-0'))?.status.address, '192.0.2.11');
});

test('heartbeat records: store writes per report, and transactions per flush, of a fleet that only heartbeats', async (t) => {
  const n = 250;
  const { clock, fleet, records, ids, batches, others } = await setup(n);
  // Reports every 4 s against a 10 s timeout (renewal after 5 s): as 5 s against 15 s, the
  // record is renewed at every other report.
  const PERIOD = 4_000;
  let reports = 0;
  // 48 s of reports, a flush after each round.
  for (let round = 0; round < 12; round++) {
    for (const id of ids) fleet.report(id, report(), '192.0.2.10');
    reports += n;
    await records.flush();
    clock.advance(PERIOD);
  }
  const writes = batches.reduce((a, b) => a + b, 0);
  t.is(records.written(), writes);
  // Renewed at 0, 8, 16, ... 40 s, the inventory written once.
  t.is(writes, n * 6 + n);
  t.true(writes / reports < 0.6, `${writes} writes for ${reports} reports`);
  t.true(
    batches.every((b) => b <= STATUS_BATCH_MAX),
    `batches ${batches.join(',')}`,
  );
  t.is(batches.length, Math.ceil((2 * n) / STATUS_BATCH_MAX) + 5 * Math.ceil(n / STATUS_BATCH_MAX));
  t.is(others(), 0);
});

test('heartbeat records: a new leader loads liveness and inventory into its Fleet; records of deleted nodes go', async (t) => {
  const { base, clock, fleet, records } = await setup(2);
  fleet.report('node-0', report('boot-7'), '192.0.2.10');
  fleet.report('node-1', report(), '192.0.2.11');
  await records.flush();
  const heardAt = clock.now();
  await records.stop();
  await base.delete(Kind.Node, 'node-1');
  clock.advance(2_000);
  const next = new Fleet(clock, HB);
  const again = new HeartbeatRecords({ store: base, fleet: next, clock, heartbeatTimeoutMs: HB, flushEveryMs: 1e9 });
  next.listen(again);
  t.is(await again.start(), 1);
  const o = next.observe('node-0');
  t.is(o.lastReportAt, heardAt);
  t.is(o.report?.bootId, 'boot-7');
  t.is(o.address, '192.0.2.10');
  t.is(next.observe('node-1').lastReportAt, null);
  await again.flush();
  t.is(await base.get(FleetKind.NodeHeartbeat, 'node-1'), undefined);
  t.is(await base.get(FleetKind.NodeInventory, 'node-1'), undefined);
  // The same report again changes nothing: no inventory write, no renewal yet.
  const before = base.revision();
  next.report('node-0', report('boot-7'), '192.0.2.10');
  await again.flush();
  t.is(base.revision(), before);
  await again.stop();
});

test('heartbeat records: a forgotten node loses its records', async (t) => {
  const { base, fleet, records } = await setup(1);
  fleet.report('node-0', report(), '192.0.2.10');
  await records.flush();
  t.truthy(await base.get(FleetKind.NodeHeartbeat, 'node-0'));
  fleet.forget('node-0');
  await records.flush();
  t.is(await base.get(FleetKind.NodeHeartbeat, 'node-0'), undefined);
  t.is(await base.get(FleetKind.NodeInventory, 'node-0'), undefined);
});

test('heartbeat records: a batch refused by a conflict is written again from what the store holds', async (t) => {
  const { base, fleet, records, clock } = await setup(1);
  fleet.report('node-0', report(), '192.0.2.10');
  await records.flush();
  // Someone else moved the record (a deposed leader's late write would be fenced instead).
  const doc = await base.mustGet(FleetKind.NodeHeartbeat, 'node-0');
  await base.updateStatus(
    FleetKind.NodeHeartbeat,
    'node-0',
    { renewTime: new Date(clock.now() - 1).toISOString() },
    {
      resourceVersion: doc.metadata.resourceVersion,
    },
  );
  clock.advance(RENEW);
  fleet.report('node-0', report(), '192.0.2.10');
  await records.flush();
  t.not(await renewTime(base, 'node-0'), clock.iso(), 'the first try conflicted');
  await records.flush();
  t.is(await renewTime(base, 'node-0'), clock.iso());
});
