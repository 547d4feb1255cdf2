// Monitors of the simulated cluster: quorum forms from a majority, survives one loss, and
// without it every call fails the way the real CLI does.
import test from 'ava';
import { CommandError } from '../../src/errors.js';
import { SimCephApi } from '../../src/sim/ceph/api.js';
import { apiOf, FSID, newCluster, withMons } from './ceph-helpers.js';

test('bootstrap and two joins give three monitors in quorum', async (t) => {
  const { cluster } = newCluster();
  withMons(cluster);
  const api = apiOf(cluster);
  const q = await api.quorumStatus();
  t.deepEqual(q.quorumNames, ['a', 'b', 'c']);
  t.deepEqual(q.quorum, [0, 1, 2]);
  t.is(q.leader, 'a');
  const dump = await api.monDump();
  t.is(dump.fsid, FSID);
  t.is(dump.epoch, 3, 'one monmap epoch per monitor added');
  t.deepEqual(
    dump.mons.map((m) => [m.name, m.rank, m.addr]),
    [
      ['a', 0, '10.0.0.1:6789/0'],
      ['b', 1, '10.0.0.2:6789/0'],
      ['c', 2, '10.0.0.3:6789/0'],
    ],
  );
  t.deepEqual(dump.mons[0]?.addrs, [
    { type: 'v2', addr: '10.0.0.1:3300' },
    { type: 'v1', addr: '10.0.0.1:6789' },
  ]);
  const s = await api.status();
  t.is(s.monCount, 3);
  t.deepEqual(s.quorumNames, ['a', 'b', 'c']);
});

test('killing one of three monitors keeps quorum and warns MON_DOWN', async (t) => {
  const { cluster } = newCluster();
  withMons(cluster);
  cluster.killMon('b');
  const api = apiOf(cluster);
  t.deepEqual((await api.quorumStatus()).quorumNames, ['a', 'c']);
  const h = await api.health();
  t.is(h.status, 'HEALTH_WARN');
  const monDown = h.checks.find((c) => c.code === 'MON_DOWN');
  t.is(monDown?.message, '1/3 mons down, quorum a,c');
  t.is(monDown?.severity, 'HEALTH_WARN');
  t.deepEqual(monDown?.detail, ['mon.b (rank 1) addr [v2:10.0.0.2:3300/0,v1:10.0.0.2:6789/0] is down (out of quorum)']);
});

test('killing two of three monitors loses quorum: calls fail like the CLI after --connect-timeout', async (t) => {
  const { cluster } = newCluster();
  withMons(cluster);
  cluster.killMon('b');
  cluster.killMon('c');
  t.false(cluster.hasQuorum());
  const api = apiOf(cluster);
  const err = await t.throwsAsync(api.status(), { instanceOf: CommandError });
  t.is(err.exitCode, 1);
  t.regex(err.stderr, /monclient\(hunting\): authenticate timed out after 20\n\[errno 110\] RADOS timed out/);
  await t.throwsAsync(api.poolCreate('p', 8), { instanceOf: CommandError });
  t.is(cluster.osdmap.pools.size, 0, 'nothing changed without quorum');
});

test('without quorum a deadline shorter than the connect timeout kills the call', async (t) => {
  const { cluster } = newCluster();
  withMons(cluster, 1);
  cluster.killMon('a');
  const err = await t.throwsAsync(apiOf(cluster).status({ timeoutMs: 500 }), { instanceOf: CommandError });
  t.is(err.signal, 'SIGTERM');
  t.is(err.exitCode, null);
  t.regex(err.message, /timed out after 500 ms/);
});

test('a call waiting to connect succeeds once a monitor restarts and quorum is back', async (t) => {
  const { cluster } = newCluster();
  withMons(cluster);
  cluster.killMon('b');
  cluster.killMon('c');
  // The restart happens while the CLI is hunting for a monitor.
  const api = new SimCephApi(cluster, { sleep: async () => cluster.startMon('c') });
  t.deepEqual((await api.status()).quorumNames, ['a', 'c']);
});

test('adding a monitor that is not started yet can cost the quorum, as on a real cluster', (t) => {
  const { cluster } = newCluster();
  withMons(cluster, 1);
  t.true(cluster.hasQuorum());
  cluster.addMonToMap('b', '10.0.0.2');
  t.false(cluster.hasQuorum(), '1 of 2 is no majority');
  cluster.startMon('b');
  t.true(cluster.hasQuorum());
  const before = cluster.mons.electionEpoch;
  cluster.killMon('b');
  cluster.startMon('b');
  t.true(cluster.mons.electionEpoch > before, 'every quorum change is an election');
});

test('mon getmap writes a map file carrying the epoch and reports the epoch', async (t) => {
  const { cluster } = newCluster();
  withMons(cluster);
  const writes = new Map<string, Uint8Array>();
  t.deepEqual(await apiOf(cluster, writes).monGetmap('/tmp/monmap'), { epoch: 3 });
  const blob = Buffer.from(writes.get('/tmp/monmap') ?? new Uint8Array());
  t.is(blob.readUInt32LE(8), 3);
  t.true(blob.length > 12);
});

test('bootstrapping again with another fsid is refused; the same again is a no-op', (t) => {
  const { cluster } = newCluster();
  withMons(cluster, 1);
  t.notThrows(() => cluster.bootstrap(FSID, { name: 'a', addr: '10.0.0.1' }));
  t.throws(() => cluster.bootstrap('11111111-2222-4333-8444-555555555555', { name: 'a', addr: '10.0.0.1' }), {
    message: /already bootstrapped/,
  });
  t.throws(() => cluster.addMonToMap('z', '10.0.0.1'), { message: /already used by mon.a/ });
});

test('first monitors bootstrapped together share monmap epoch 1 and have quorum once a majority runs', async (t) => {
  const { cluster } = newCluster();
  const first = [
    { name: 'a', addr: '10.0.0.1' },
    { name: 'b', addr: '10.0.0.2' },
    { name: 'c', addr: '10.0.0.3' },
  ];
  cluster.bootstrap(FSID, { ...first[0]!, host: 'h1' }, first);
  cluster.startMon('a');
  t.false(cluster.hasQuorum(), 'one of three is no majority');
  cluster.bootstrap(FSID, { ...first[1]!, host: 'h2' }, first);
  cluster.startMon('b');
  t.true(cluster.hasQuorum());
  const dump = await apiOf(cluster).monDump();
  t.is(dump.epoch, 1, 'nobody joined: the map is the first one');
  t.deepEqual(
    dump.mons.map((m) => m.name),
    ['a', 'b', 'c'],
  );
  t.is(cluster.mons.get('b')?.host, 'h2');
  t.is(cluster.monStores.get('b'), 'h2');
  t.throws(
    () => cluster.bootstrap(FSID, { name: 'd', addr: '10.0.0.4' }, first),
    { message: /already bootstrapped/ },
    'd is not a first monitor',
  );
});

test('per-verb latency is spent before the answer; a deadline shorter than it kills the call', async (t) => {
  const { cluster } = newCluster();
  withMons(cluster);
  const slept: number[] = [];
  const api = new SimCephApi(cluster, {
    latencyMs: (verb) => (verb.startsWith('osd pool create') ? 5_000 : 10),
    sleep: async (ms) => void slept.push(ms),
  });
  await api.status();
  t.deepEqual(slept, [10]);
  const err = await t.throwsAsync(api.poolCreate('p', 8, { timeoutMs: 2_000 }), { instanceOf: CommandError });
  t.is(err.signal, 'SIGTERM');
  t.is(cluster.osdmap.pools.size, 0, 'killed before the mon answered');
});

test('mon remove answers as recorded: out of the map, quorum re-formed; absent is success; never the last', async (t) => {
  const { cluster } = newCluster();
  withMons(cluster);
  const api = apiOf(cluster);
  const epoch = cluster.mons.epoch;
  t.deepEqual(await api.monRemove('b'), { removed: true });
  const q = await api.quorumStatus();
  t.deepEqual(q.quorumNames, ['a', 'c']);
  t.deepEqual(
    q.monmap.mons.map((m) => [m.name, m.rank]),
    [
      ['a', 0],
      ['c', 1],
    ],
  );
  t.is(q.monmap.epoch, epoch + 1);
  t.is(cluster.monStores.get('b'), 'h2', 'the store stays on its host until the node removes it');
  t.deepEqual(await api.monRemove('b'), { removed: false });
  t.deepEqual(await api.monRemove('c'), { removed: true });
  const err = await t.throwsAsync(api.monRemove('a'), { instanceOf: CommandError });
  t.is(err.exitCode, 22);
  t.is(err.stderr, 'Error EINVAL: error: refusing removal of last monitor a\n');
  t.true(cluster.hasQuorum());
});
