// The monitor loop's removal of a monitor no longer desired: the quorum gate, one at a time,
// never the last, then the node-level cleanup.
import test from 'ava';
import type { DaemonState } from '../../src/model/kinds.js';
import type { NodeDoc } from '../../src/model/operations.js';
import { planMon, type MonObserved } from '../../reconcilers/mon/plan.js';
import { quorumAfterRemoval, REMOVING_FROM_MONMAP, type RemovalObserved } from '../../reconcilers/mon/removal.js';
import { NOW, run } from './plan-fixtures.js';
import { node } from '../builders.js';

function undesired(opts: { running?: boolean; phase?: 'active' | 'offline'; hostname?: string } = {}): NodeDoc {
  const n = node(opts.phase ?? 'active').build();
  n.spec.hostname = opts.hostname ?? 'b';
  n.spec.daemons = {};
  n.status.daemons = { mon: opts.running ?? true };
  n.status.ceph = { mon: { phase: 'running', reason: 'Running', message: '' } };
  return n;
}

const created = run('completed', { id: 'create', completedAt: NOW - 600_000 });
const map = (names: string[], quorum = names) => ({ names, quorum });

function removing(removal: Partial<RemovalObserved>, over: Partial<MonObserved> = {}): MonObserved {
  return {
    node: undesired(),
    cluster: undefined as unknown as MonObserved['cluster'],
    monNodes: [],
    monDisk: undefined,
    quorum: true,
    bootstrapKeys: true,
    gatherEndsAt: null,
    bootstrap: null,
    createRun: created,
    restartRun: null,
    now: NOW,
    retryBaseMs: 1_000,
    startGraceMs: 5_000,
    removal: { monmap: map(['a', 'b', 'c']), othersRemoving: [], monmapRun: null, nodeRun: null, ...removal },
    ...over,
  };
}

const table: Array<[string, MonObserved, DaemonState['phase'] | undefined, string | null, string | undefined]> = [
  ['three up: the undesired one is taken out of the monmap', removing({}), 'orphaned', 'monmap-remove', REMOVING_FROM_MONMAP],
  [
    'two of three up, removing a down one keeps quorum',
    removing({ monmap: map(['a', 'b', 'c'], ['a', 'c']) }),
    'orphaned',
    'monmap-remove',
    REMOVING_FROM_MONMAP,
  ],
  [
    'two of three up, removing an up one leaves 1 of 2: blocked',
    removing({ monmap: map(['a', 'b', 'c'], ['a', 'b']) }),
    'blocked',
    null,
    'QuorumWouldBreak',
  ],
  [
    'two monitors, both up: the other alone is a majority of one',
    removing({ monmap: map(['a', 'b']) }),
    'orphaned',
    'monmap-remove',
    REMOVING_FROM_MONMAP,
  ],
  ['two monitors, the other down: blocked', removing({ monmap: map(['a', 'b'], ['b']) }), 'blocked', null, 'QuorumWouldBreak'],
  [
    'four, one down, removing an up one leaves 2 of 3 up',
    removing({ monmap: map(['a', 'b', 'c', 'd'], ['a', 'b', 'c']) }),
    'orphaned',
    'monmap-remove',
    REMOVING_FROM_MONMAP,
  ],
  [
    'five, two down, removing an up one leaves 2 of 4: blocked',
    removing({ monmap: map(['a', 'b', 'c', 'd', 'e'], ['a', 'b', 'c']) }),
    'blocked',
    null,
    'QuorumWouldBreak',
  ],
  ['never the last monitor', removing({ monmap: map(['b']) }), 'blocked', null, 'LastMonitor'],
  ['never two at once', removing({ othersRemoving: ['c'] }), 'blocked', null, 'RemovalInProgress'],
  ['Ceph not answering blocks', removing({ monmap: { error: 'timed out' } }), 'blocked', null, 'MonmapUnknown'],
  ['a removal under way starts nothing more', removing({ monmapRun: run('running') }), 'orphaned', null, REMOVING_FROM_MONMAP],
  [
    'a failed removal waits out its backoff',
    removing({ monmapRun: run('failed', { completedAt: NOW - 10 }) }),
    'orphaned',
    null,
    REMOVING_FROM_MONMAP,
  ],
  ['a failed removal is retried', removing({ monmapRun: run('failed') }), 'orphaned', 'monmap-remove', REMOVING_FROM_MONMAP],
  ['out of the monmap: the node stops it and deletes its store', removing({ monmap: map(['a', 'c']) }), 'orphaned', 'remove', 'Removing'],
  [
    'out of the monmap, node offline: nothing is done to it',
    removing({ monmap: map(['a', 'c']) }, { node: undesired({ phase: 'offline' }) }),
    'blocked',
    null,
    'NodeNotActive',
  ],
  [
    'a node-level removal under way starts nothing more',
    removing({ monmap: map(['a', 'c']), nodeRun: run('running') }),
    'orphaned',
    null,
    'Removing',
  ],
  [
    'right after the cleanup the agent gets time to report',
    removing({ monmap: map(['a', 'c']), nodeRun: run('completed', { completedAt: NOW - 100 }) }),
    'orphaned',
    null,
    'WaitingForAgent',
  ],
  [
    'cleaned and not running: the state goes away',
    removing({ monmap: map(['a', 'c']), nodeRun: run('completed') }, { node: undesired({ running: false }) }),
    undefined,
    null,
    undefined,
  ],
  [
    'still running long after the cleanup: cleaned again',
    removing({ monmap: map(['a', 'c']), nodeRun: run('completed') }),
    'orphaned',
    'remove',
    'Removing',
  ],
  [
    'never created and not running: nothing to remove',
    removing({}, { createRun: null, node: undesired({ running: false }) }),
    undefined,
    null,
    undefined,
  ],
  [
    'never created but named in the first monmap: taken out of it',
    removing({ inFirstMonmap: true }, { createRun: null, node: undesired({ running: false }) }),
    'orphaned',
    'monmap-remove',
    REMOVING_FROM_MONMAP,
  ],
];

for (const [title, input, phase, step, reason] of table) {
  test(`mon removal plan: ${title}`, (t) => {
    const p = planMon(input);
    t.is(p.status?.phase, phase);
    t.is(p.status?.reason, reason);
    t.is((p.step?.kind as string | undefined) ?? null, step);
    t.is(p.gate !== null, phase === 'blocked');
  });
}

test('mon removal plan: both steps name the monitor; the gate says why it holds', (t) => {
  t.deepEqual(planMon(removing({})).step, { kind: 'monmap-remove', attempt: 1, args: { monName: 'b' } });
  t.deepEqual(planMon(removing({ monmap: map(['a', 'c']) })).step, { kind: 'remove', attempt: 1, args: { monName: 'b' } });
  const held = planMon(removing({ monmap: map(['a', 'b', 'c'], ['a', 'b']) }));
  t.is(held.status?.message, 'removing mon.b would leave 1 of 2 monitors up, no majority; start the others first');
});

test('mon removal: quorum after removal counts only monitors that are up', (t) => {
  t.deepEqual(quorumAfterRemoval(['a', 'b', 'c'], ['a', 'b', 'c'], 'a'), { ok: true, up: 2, left: 2 });
  t.deepEqual(quorumAfterRemoval(['a', 'b', 'c'], ['a', 'b'], 'a'), { ok: false, up: 1, left: 2 });
  t.deepEqual(quorumAfterRemoval(['a'], ['a'], 'a'), { ok: false, up: 0, left: 0 });
  t.deepEqual(quorumAfterRemoval(['a', 'b'], [], 'x'), { ok: false, up: 0, left: 2 });
});
