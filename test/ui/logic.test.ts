// The dashboard's pure rules (src/ui/logic.ts), run in Node.
import test from 'ava';
import {
  NO_RACK,
  VIEWS,
  age,
  eventLine,
  failureDomains,
  formatBytes,
  linePoints,
  osdLook,
  pathOf,
  refreshDelayMs,
  viewOf,
  viewsAffectedBy,
} from '../../src/ui/logic.js';
import type { DiskView, NodeDetail } from '../../src/ui/types.js';

const node = (id: string, hostname: string, rack?: string): NodeDetail => ({
  id,
  hostname,
  name: '',
  role: 'storage',
  ip: '',
  ...(rack ? { labels: { rack } } : {}),
  status: 'active',
  diskCount: 0,
  osdCount: 0,
  approved: true,
  blocked: null,
  disruption: null,
  ready: { ready: true, reason: '', message: '' },
  daemonsReady: [],
});

const disk = (nodeId: string, osdId: number | null, osdState: string | null): DiskView => ({
  id: `${nodeId}-${String(osdId)}`,
  nodeId,
  nodeHostname: '',
  devicePath: `/dev/sd${String(osdId)}`,
  capacityBytes: 0,
  serial: 'S',
  deviceClass: 'hdd',
  isOsd: osdId !== null,
  isMon: false,
  hasFilesystem: false,
  osdId,
  osdState,
  message: '',
  eligible: false,
  reasons: [],
  reason: null,
  progress: null,
});

test('ui logic paths and views map both ways; an unknown path is the overview', (t) => {
  for (const v of VIEWS) t.is(viewOf(pathOf(v)), v);
  t.is(pathOf('overview'), '/ui');
  t.is(viewOf('/ui/'), 'overview');
  t.is(viewOf('/ui/nodes/'), 'nodes');
  t.is(viewOf('/ui/no-such-view'), 'overview');
  t.is(viewOf('/elsewhere'), 'overview');
});

test('ui logic events wake the views they concern; resync wakes them all, an unknown type the overview', (t) => {
  t.deepEqual(new Set(viewsAffectedBy('resync')), new Set(VIEWS));
  t.true(viewsAffectedBy('task.question.asked').includes('questions'));
  t.true(viewsAffectedBy('task.question.answered').includes('questions'));
  t.false(viewsAffectedBy('node.state.changed').includes('questions'));
  t.true(viewsAffectedBy('task.state.changed').includes('runs'));
  t.true(viewsAffectedBy('specs.applied').includes('specs'));
  t.true(viewsAffectedBy('specs.pending.cleared').includes('overview'));
  t.deepEqual(viewsAffectedBy('something.new'), ['overview']);
});

test('ui logic an OSD phase maps to its look on the map', (t) => {
  const table: Array<[string | null, ReturnType<typeof osdLook>]> = [
    ['running', 'up'],
    ['draining', 'draining'],
    ['pending', 'starting'],
    ['starting', 'starting'],
    [null, 'starting'],
    ['failed', 'down'],
    ['stopping', 'down'],
    ['orphaned', 'down'],
    ['blocked', 'down'],
    ['purging', 'out'],
    ['destroyed', 'out'],
    ['replaced', 'out'],
  ];
  for (const [phase, look] of table) t.is(osdLook(phase), look, String(phase));
});

test('ui logic failure domains: racks in name order with the rackless last, hosts by name, OSDs by id, disks without OSD left out', (t) => {
  const nodes = [node('a', 'h3', 'r2'), node('b', 'h2', 'r1'), node('c', 'h1', 'r1'), node('d', 'h9')];
  const disks = [disk('b', 7, 'running'), disk('b', 2, 'draining'), disk('b', null, null), disk('a', 1, 'failed')];
  const map = failureDomains(nodes, disks);
  t.deepEqual(
    map.map((r) => [r.rack, r.hosts.map((h) => h.hostname)]),
    [
      ['r1', ['h1', 'h2']],
      ['r2', ['h3']],
      [NO_RACK, ['h9']],
    ],
  );
  t.deepEqual(
    map[0]!.hosts[1]!.osds.map((o) => [o.osdId, o.look]),
    [
      [2, 'draining'],
      [7, 'up'],
    ],
  );
  t.deepEqual(map[0]!.hosts[0]!.osds, []);
  t.is(map[1]!.hosts[0]!.osds[0]!.look, 'down');
  t.deepEqual(failureDomains([], disks), []);
});

test('ui logic an event line names the task, the node, the state and the file it carries', (t) => {
  t.is(
    eventLine({ id: '1', type: 'task.state.changed', payload: { taskName: 'disk.wipe', state: 'running', target: { name: 'SER1' } } }),
    'task.state.changed: disk.wipe · SER1 · running',
  );
  t.is(
    eventLine({ id: '2', type: 'node.state.changed', payload: { hostname: 'h1', status: 'active', reason: '' } }),
    'node.state.changed: h1 · active',
  );
  t.is(eventLine({ id: '3', type: 'resync' }), 'resync');
});

test('ui logic bytes, refresh delays, ages and chart points', (t) => {
  t.is(formatBytes(0), '0 B');
  t.is(formatBytes(1_500_000_000), '1.5 GB');
  t.is(formatBytes(12_000_000_000_000), '12 TB');
  t.is(refreshDelayMs(900), 675_000, 'three quarters of a 15-minute token');
  t.is(refreshDelayMs(1), 1_000, 'never sooner than a second');
  const now = Date.parse('2026-01-01T00:10:00Z');
  t.is(age('2026-01-01T00:09:50Z', now), '10 s ago');
  t.is(age('2026-01-01T00:00:00Z', now), '10 min ago');
  t.is(age(null, now), '');
  t.is(linePoints([0, 50, 100], 100, 200, 100), '0.0,100.0 100.0,50.0 200.0,0.0');
  t.is(linePoints([150], 100, 200, 100), '0.0,0.0', 'clamped to the top');
  t.is(linePoints([], 100, 200, 100), '');
});
