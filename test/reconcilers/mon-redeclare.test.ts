// A monitor declared again after a removal began (#16): made afresh (the old store off the node,
// then a join from the current monmap), never restarted from a store that was removed.
import test from 'ava';
import type { ClusterSpec, ClusterStatus } from '../../src/model/ceph-kinds.js';
import type { Doc } from '../../src/model/document.js';
import type { DiskDoc, NodeDoc } from '../../src/model/operations.js';
import { planMon, type MonObserved } from '../../reconcilers/mon/plan.js';
import type { RemovalObserved } from '../../reconcilers/mon/removal.js';
import type { RunInfo } from '../../reconcilers/shared/runs.js';
import { NOW, run } from './plan-fixtures.js';
import { node } from '../builders.js';

const DISK_ID = '9c1a0f3e-2b4d-5c6e-8f70-1a2b3c4d5e6f';
const cluster = { spec: { fsid: 'f', monPort: 3300 }, status: { bootstrapped: true } } as unknown as Doc<ClusterSpec, ClusterStatus>;
const monDisk = { id: DISK_ID, status: { present: true, devicePath: '/dev/sdb' } } as unknown as DiskDoc;

function monNode(hostname: string, running: boolean): NodeDoc {
  const n = node('active').build();
  n.id = `00000000-0000-4000-8000-00000000000${hostname}`;
  n.spec.hostname = hostname;
  n.spec.daemons = { mon: { diskId: DISK_ID } };
  n.status.ip = '192.0.2.2';
  n.status.daemons = { mon: running };
  return n;
}

/** Runs in store order: the revision says which came after which. */
const at = (revision: number, state: RunInfo['state'] = 'completed', over: Partial<RunInfo> = {}): RunInfo =>
  run(state, { id: `run-${revision}`, revision, ...over });

function redeclared(removal: Partial<RemovalObserved>, over: Partial<MonObserved> & { running?: boolean } = {}): MonObserved {
  const self = monNode('b', over.running ?? false);
  return {
    node: self,
    cluster,
    monNodes: [self, monNode('a', true)],
    monDisk,
    quorum: true,
    bootstrapKeys: true,
    adminKeyImported: true,
    gatherEndsAt: null,
    bootstrap: null,
    createRun: at(10),
    createdBy: 'join',
    restartRun: null,
    now: NOW,
    retryBaseMs: 1_000,
    startGraceMs: 5_000,
    removal: { monmap: null, othersRemoving: [], monmapRun: null, nodeRun: null, ...removal },
    ...over,
  };
}

const table: Array<[string, MonObserved, string, NonNullable<ReturnType<typeof planMon>['step']>['kind'] | null]> = [
  ['its store was removed: it joins afresh, not restarted', redeclared({ monmapRun: at(20), nodeRun: at(30) }), 'Starting', 'join'],
  [
    'a first monitor of the bootstrap whose store was removed joins, never bootstraps again',
    redeclared(
      { monmapRun: at(20), nodeRun: at(30) },
      {
        createdBy: 'bootstrap',
        createRun: at(10, 'completed', { args: { initialMembers: [{ nodeId: monNode('b', false).id, name: 'b', addr: 'x' }] } }),
        bootstrap: {
          owner: monNode('a', true),
          run: at(9),
          members: ['a', 'b'].map((h) => ({ nodeId: monNode(h, false).id, name: h, addr: '192.0.2.2' })),
        },
      },
    ),
    'Starting',
    'join',
  ],
  ['a removal still running: it waits for it', redeclared({ monmapRun: at(20), nodeRun: at(30, 'running') }), 'RemovalInProgress', null],
  ['out of the monmap, its store still there: the store goes first', redeclared({ monmapRun: at(20) }), 'RemovingOldStore', 'remove'],
  [
    'out of the monmap and still reported running: the stale daemon goes first',
    redeclared({ monmapRun: at(20) }, { running: true }),
    'RemovingOldStore',
    'remove',
  ],
  [
    'a node-level removal that failed is tried again before the join',
    redeclared({ monmapRun: at(20), nodeRun: at(30, 'failed') }),
    'RemovingOldStore',
    'remove',
  ],
  [
    'a removal from an earlier cycle than its join: the running monitor is kept',
    redeclared({ monmapRun: at(2), nodeRun: at(3) }, { running: true }),
    'Running',
    null,
  ],
  [
    'only a failed `ceph mon remove`: the monitor is the cluster’s still and is started',
    redeclared({ monmapRun: at(20, 'failed') }, { createRun: at(10, 'completed', { completedAt: NOW - 60_000 }) }),
    'Starting',
    'restart',
  ],
  [
    'the join after a removal failed: retried as a join',
    redeclared({ monmapRun: at(20), nodeRun: at(30) }, { createRun: at(40, 'failed') }),
    'Retrying',
    'join',
  ],
  ['no quorum: the new join waits for it', redeclared({ monmapRun: at(20), nodeRun: at(30) }, { quorum: false }), 'WaitingForQuorum', null],
];

for (const [title, o, reason, step] of table) {
  test(`mon plan: declared again, ${title}`, (t) => {
    const p = planMon(o);
    t.is(p.status?.reason, reason);
    t.is(p.step?.kind ?? null, step);
    if (step === 'remove') t.deepEqual(p.step && 'args' in p.step ? p.step.args : null, { monName: 'b' });
  });
}
