// The `ceph osd new` script: a first attempt registers without listing every OSD; a retry
// finds the uuid an earlier attempt registered and keeps its id instead of registering twice.
import test from 'ava';
import { osdNewScript } from '../../reconcilers/osd/scripts.js';
import { getKey } from '../../reconcilers/shared/keys.js';
import { systemClock } from '../../src/model/clock.js';
import { createMemoryStore } from '../../src/store/index.js';
import type { RunContext } from '../../src/tasks/types.js';

const NODE = '6f1c0a8e-0d2b-4c3e-9f4a-1b2c3d4e5f60';
const UUID = 'b2c3d4e5-f607-4182-9a3b-4c5d6e7f8091';
const KEY = 'AQBnbmRmAAAAABAAu2e5ZIbTj4b0dJq2m7xT9w==';

function ctx(): RunContext {
  return { runId: 'r', args: {}, signal: new AbortController().signal, log: () => {}, runner: undefined as never, ask: async () => 'no' };
}

function fakeCeph(listed: Array<{ id: number; uuid: string; state?: string[] }>) {
  const registered = listed.map((o) => ({ state: ['exists', 'up'], ...o }));
  const calls: string[] = [];
  const ceph = {
    osdDump: async () => (calls.push('osdDump'), { osds: registered }),
    osdNew: async (uuid: string) => (calls.push(`osdNew ${uuid}`), 7),
    authGet: async (entity: string) => (calls.push(`authGet ${entity}`), { entity, key: KEY, caps: {} }),
    authGetOrCreate: async (entity: string) => (calls.push(`authGetOrCreate ${entity}`), { entity, key: KEY, caps: {} }),
  };
  return { ceph: ceph as never, calls };
}

test('osd new script: a first attempt registers the OSD without listing the cluster, and keeps its key', async (t) => {
  const store = await createMemoryStore();
  const { ceph, calls } = fakeCeph([]);
  const result = await osdNewScript({ store, ceph, clock: systemClock }, UUID, NODE, 1)(ctx());
  t.deepEqual(result, { osdId: 7, uuid: UUID });
  t.deepEqual(calls, [`osdNew ${UUID}`]);
  t.truthy((await getKey(store, 'osd.7'))?.status.key);
});

test('osd new script: a retry finds the uuid already registered and keeps that id', async (t) => {
  const store = await createMemoryStore();
  const { ceph, calls } = fakeCeph([{ id: 3, uuid: UUID }]);
  const result = await osdNewScript({ store, ceph, clock: systemClock }, UUID, NODE, 2)(ctx());
  t.deepEqual(result, { osdId: 3, uuid: UUID });
  t.deepEqual(calls, ['osdDump', 'authGet osd.3']);
  t.is((await getKey(store, 'osd.3'))?.status.key, KEY);
});
