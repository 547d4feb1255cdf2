import test from 'ava';
import { bytes, duration, table } from '../../src/cli/format.js';
import { planLines } from '../../src/cli/commands/specs.js';
import { parseDuration } from '../../src/cli/commands/wait.js';
import { UsageError } from '../../src/cli/errors.js';
import { concerns, eventLine } from '../../src/cli/events.js';
import type { PlanView } from '../../src/cli/views.js';

test('cli table aligns columns to the widest cell and puts headers in capitals', (t) => {
  const out = table(
    ['name', 'state'],
    [
      ['node-1', 'active'],
      ['n2', 'offline'],
    ],
  );
  t.is(out, 'NAME    STATE\nnode-1  active\nn2      offline');
});

test('cli bytes and durations read as people say them', (t) => {
  t.is(bytes(4_000_000_000_000), '4.0TB');
  t.is(bytes(240_000_000_000), '240GB');
  t.is(bytes(null), '-');
  t.is(duration(59_000), '59s');
  t.is(duration(3 * 3600_000), '3h');
  t.is(parseDuration('10m'), 600_000);
  t.is(parseDuration('500ms'), 500);
  t.is(parseDuration('30'), 30_000);
  t.throws(() => parseDuration('soon'), { instanceOf: UsageError, message: /not a duration: soon/ });
});

const plan = (over: Partial<PlanView>): PlanView => ({
  file: 'f.yaml',
  valid: true,
  errors: [],
  created: [],
  updated: [],
  pruned: [],
  orphaned: [],
  pending: [],
  tasks: [],
  disruptions: [],
  ...over,
});

test('cli plan shows a diff: + created, ~ updated with fields, - pruned, ! orphaned, destructive steps marked', (t) => {
  const lines = planLines(
    plan({
      created: [{ kind: 'Network', id: 'n', name: '10.0.0.0/16', document: 1 }],
      updated: [{ kind: 'Node', id: 'a', name: 'node-1', document: 2, fields: ['daemons', 'osds'] }],
      pruned: [{ kind: 'Image', id: 'i', name: 'debian', document: null }],
      orphaned: [{ kind: 'Filesystem', id: 'f', name: 'cephfs', document: null }],
      pending: [{ kind: 'Node', name: 'node-9', reason: 'NodeNotDiscovered', message: 'no machine with 52:54:00:00:00:09 has booted' }],
      tasks: [
        { task: 'ceph.osd.create', kind: 'Disk', id: 'd', name: 'node-1/S1', destructive: true, wipes: '/dev/sdb (S1)' },
        { task: 'ceph.mgr.start', kind: 'Node', id: 'a', name: 'node-1', destructive: false },
      ],
    }),
  );
  t.true(lines.includes('+ Network 10.0.0.0/16'));
  t.true(lines.includes('~ Node node-1: daemons, osds'));
  t.true(lines.includes('- Image debian'));
  t.true(lines.some((l) => l.startsWith('! Filesystem cephfs orphaned')));
  t.true(lines.includes('  ? Node node-9: NodeNotDiscovered: no machine with 52:54:00:00:00:09 has booted'));
  t.true(lines.includes('  ! DESTRUCTIVE ceph.osd.create  Disk node-1/S1  (wipes /dev/sdb (S1))'));
  t.true(lines.includes('    ceph.mgr.start  Node node-1'));
  t.is(lines.at(-1), 'f.yaml: 1 to create, 1 to update, 1 to prune, 1 to orphan, 1 destructive step(s)');
});

test('cli plan of a refused file lists each error at file:line:column', (t) => {
  const lines = planLines(
    plan({
      valid: false,
      errors: [{ file: 'f.yaml', document: 0, line: 6, column: 12, field: '/spec/gateway', message: 'must match format "ipv4"' }],
    }),
  );
  t.deepEqual(lines, ['f.yaml:6:12: must match format "ipv4" (/spec/gateway)']);
  t.deepEqual(planLines(plan({})), ['no changes']);
});

test('cli an event line says when, what type, which object by name, and what happened', (t) => {
  const run = {
    id: '7',
    type: 'task.state.changed',
    at: '2026-11-25T06:57:00.550Z',
    payload: {
      taskName: 'disk.wipe',
      state: 'failed',
      error: 'wipefs exited with 1',
      target: { kind: 'Disk', id: 'd', name: 'node-3/SER', devicePath: '/dev/sdb', serial: 'SER' },
      node: { id: 'n', hostname: 'node-3' },
    },
  };
  t.is(eventLine(run), '06:57:00  task.state.changed      Disk node-3:/dev/sdb  disk.wipe failed: wipefs exited with 1');
  const node = {
    id: '8',
    type: 'node.state.changed',
    at: '2026-11-25T06:57:01.000Z',
    payload: {
      nodeId: 'n',
      hostname: 'node-3',
      yamlName: 'storage-3',
      status: 'active',
      reason: 'DisruptionBudget',
      message: 'waits its turn',
    },
  };
  t.is(eventLine(node), '06:57:01  node.state.changed      Node node-3 (storage-3)  active (DisruptionBudget: waits its turn)');
  t.true(concerns(run, 'd') && concerns(run, 'n') && concerns(node, 'n'));
  t.false(concerns(node, 'd'));
});
