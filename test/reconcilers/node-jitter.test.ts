import test from 'ava';
import { nodeLoop } from '../../reconcilers/node/loop.js';
import { STALE_JITTER } from '../../reconcilers/node/plan.js';
import { EventBus } from '../../src/tasks/bus.js';
import { ManualClock } from '../../src/model/clock.js';
import { Kind } from '../../src/model/kinds.js';
import { newNodeSpec } from '../../src/fleet/discovery.js';
import { createMemoryStore } from '../../src/store/index.js';
import type { Result } from '../../src/runtime/types.js';
import { observation } from '../builders.js';

const HB = 10_000;

// After a master restart every node shares one deadline (startedAt + the heartbeat timeout):
// without jitter all of them would be looked at again in the same millisecond.
test('node loop spreads the staleness rechecks of nodes that share a deadline', async (t) => {
  const store = await createMemoryStore();
  const clock = new ManualClock();
  const draws = [0, 0.25, 0.5, 0.999];
  let i = 0;
  const loop = nodeLoop({
    store,
    fleet: { observe: () => observation() },
    tasks: { start: () => Promise.reject(new Error('no run expected')), latestFor: () => undefined },
    bus: new EventBus(),
    clock,
    startedAt: clock.now(),
    heartbeatTimeoutMs: HB,
    retryBaseMs: 1_000,
    runTimeoutMs: 60_000,
    ceph: {
      osdOkToStop: () => Promise.reject(new Error('not asked')),
      monOkToStop: () => Promise.reject(new Error('not asked')),
      mdsOkToStop: () => Promise.reject(new Error('not asked')),
    },
    cephQueryTimeoutMs: 1_000,
    random: () => draws[i++ % draws.length]!,
  });
  const results: Result[] = [];
  for (let n = 0; n < draws.length; n++) {
    const mac = `52:54:00:00:00:0${n + 1}`;
    const id = `node-${n}`;
    await store.create({ kind: Kind.Node, id, name: id, spec: newNodeSpec(mac, id), status: { phase: 'active' } });
    const o = await loop.observe(id, { signal: new AbortController().signal });
    t.truthy(o, `node ${n} observed`);
    results.push(await loop.apply(o!, loop.plan(o!), { signal: new AbortController().signal }));
  }
  const after = results.map((r) => (r.type === 'requeue' ? r.afterMs : -1));
  // Never before the deadline (nothing new to see then), spread over a fifth of the timeout.
  t.deepEqual(
    after,
    draws.map((d) => HB + 1 + Math.floor(d * STALE_JITTER * HB)),
  );
  t.is(new Set(after).size, draws.length);
  t.true(Math.max(...after) - Math.min(...after) >= 0.19 * HB);
  await store.close();
});
