// The boot-loop rule of the node plan, table-tested: which boots count, when the condition
// comes, that it holds, and that a restart request resets it without a run.
import test from 'ava';
import { planNode, type NodeObserved } from '../../reconcilers/node/plan.js';
import { countedBoots } from '../../reconcilers/node/boot-loop.js';
import type { BootStage } from '../../src/fleet/types.js';
import type { Condition } from '../../src/model/conditions.js';
import type { NodeStatus } from '../../src/model/kinds.js';
import { T0, node, nodeObserved, observation, report } from '../builders.js';

const now = T0 + 3_600_000;
const nowIso = new Date(now).toISOString();
const limits = { maxBoots: 3, windowMs: 600_000 };
const pxe = (...agoMs: number[]): BootStage[] => agoMs.map((a) => ({ at: now - a, stage: 'pxe' as const }));
const looping: Condition = {
  type: 'BootLoop',
  status: 'True',
  reason: 'TooManyBoots',
  message: '4 network boots',
  lastTransitionTime: nowIso,
  observedGeneration: 1,
};

function observed(over: Partial<NodeObserved>): NodeObserved {
  return nodeObserved({ bootLoop: limits, ...over }, now);
}

const bootLoopOf = (o: NodeObserved) => planNode(o).status.conditions?.find((c) => c.type === 'BootLoop');

test('boot loop counts network boots in the window, after the last report and after a reset', (t) => {
  const status = { bootLoopResetAt: new Date(now - 100).toISOString() };
  t.is(countedBoots(observation({ boots: pxe(700_000, 500, 400, 50) }), {}, now, 600_000), 3);
  t.is(countedBoots(observation({ boots: pxe(500, 400, 50), lastReportAt: now - 450 }), {}, now, 600_000), 2);
  t.is(countedBoots(observation({ boots: pxe(500, 400, 50) }), status, now, 600_000), 1);
  t.is(countedBoots(observation({ boots: [{ at: now - 5, stage: 'image' }] }), {}, now, 600_000), 0);
});

const table: Array<{
  title: string;
  input: Partial<NodeObserved>;
  loop: Condition['status'] | undefined;
  phase: NodeStatus;
  run?: boolean;
}> = [
  {
    title: 'as many boots as allowed are no loop',
    input: { obs: observation({ boots: pxe(40, 30, 20) }) },
    loop: undefined,
    phase: 'discovered',
  },
  { title: 'one boot more is a loop', input: { obs: observation({ boots: pxe(40, 30, 20, 10) }) }, loop: 'True', phase: 'error' },
  {
    title: 'boots with agent reports between them are no loop',
    input: { obs: observation({ boots: pxe(40, 30, 20, 10), lastReportAt: now - 5, report: report() }) },
    loop: undefined,
    phase: 'active',
  },
  {
    title: 'a loop holds with no new boots',
    input: {
      node: node()
        .withStatus({ conditions: [looping] })
        .build(),
    },
    loop: 'True',
    phase: 'error',
  },
  {
    title: 'a restart request resets a loop without a run',
    input: {
      node: node()
        .withStatus({ conditions: [looping] })
        .restartRequested()
        .build(),
      obs: observation({ boots: pxe(40, 30, 20, 10) }),
    },
    loop: 'False',
    phase: 'discovered',
    run: false,
  },
];

for (const row of table) {
  test(`boot loop: ${row.title}`, (t) => {
    const o = observed(row.input);
    const plan = planNode(o);
    t.is(bootLoopOf(o)?.status, row.loop);
    t.is(plan.status.phase, row.phase);
    if (row.loop === 'True') t.is(plan.status.conditions?.find((c) => c.type === 'Degraded')?.reason, 'BootLoop');
    if (row.run === false) {
      t.is(plan.step, null);
      t.is(plan.status.observedRestartGeneration, o.node.spec.restartGeneration);
      t.is(plan.status.bootLoopResetAt, nowIso);
    }
  });
}
