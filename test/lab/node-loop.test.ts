import test from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kind, type DiskSpec, type DiskStatusFields, type NodeSpec } from '../../src/model/kinds.js';
import { isEvent } from '../../src/tasks/bus.js';
import { allActive, startLab, waitFor, type LabQuarry } from './harness.js';

async function request(q: LabQuarry, machine: number, counter: 'restartGeneration' | 'shutdownGeneration') {
  const node = await q.nodeOf(machine);
  await q.store.mutateSpec<NodeSpec>(Kind.Node, node.id, (d) => ({ ...d.spec, [counter]: d.spec[counter] + 1 }));
  return node.id;
}

async function runsOf(q: LabQuarry, nodeId: string, taskName: string) {
  return (await q.tasks.recent(1000)).filter((r) => r.spec.targetId === nodeId && r.spec.taskName === taskName).reverse();
}

test('node loop brings every lab machine from discovered through booting to active', async (t) => {
  const q = await startLab(t, 4);
  const nodes = await allActive(q, 4);
  const first = nodes[0]!;
  const phases = q.events
    .filter((e) => isEvent(e, 'node.state.changed') && e.payload.nodeId === first.id)
    .map((e) => (e.payload as { status: string }).status);
  t.deepEqual(phases.slice(0, 3), ['discovered', 'booting', 'active']);
  const disks = await q.store.list<DiskSpec, DiskStatusFields>(Kind.Disk);
  const reported = q.lab!.specs().reduce((n, m) => n + m.disks.length, 0);
  t.is(disks.length, reported);
  t.true(disks.every((d) => d.status.present === true && typeof d.status.capacityBytes === 'number'));
  t.is(disks.filter((d) => d.status.isSystem).length, 4);
});

test('node loop restarts a node through a run and confirms it by the new boot', async (t) => {
  const q = await startLab(t, 2);
  await allActive(q, 2);
  const before = await q.nodeOf(1);
  await request(q, 1, 'restartGeneration');
  const after = await waitFor('restart acknowledged', async () => {
    const n = await q.nodeOf(1);
    return n.status.observedRestartGeneration === 1 && n.status.phase === 'active' ? n : undefined;
  });
  t.not(after.status.bootId, before.status.bootId);
  const runs = await runsOf(q, before.id, 'node.restart');
  t.deepEqual(
    runs.map((r) => r.status.state),
    ['completed'],
  );
  const states = q.events
    .filter((e) => isEvent(e, 'task.state.changed') && e.payload.runId === runs[0]!.id)
    .map((e) => (e.payload as { state: string }).state);
  t.deepEqual(states, ['pending', 'running', 'completed']);
});

test('node loop retries a restart that fails twice, with backoff, then succeeds', async (t) => {
  const q = await startLab(t, 1);
  await allActive(q, 1);
  q.lab!.failNext(1, 'node.restart', 2);
  const id = await request(q, 1, 'restartGeneration');
  await waitFor('restart acknowledged', async () => (await q.nodeOf(1)).status.observedRestartGeneration === 1);
  const runs = await runsOf(q, id, 'node.restart');
  t.deepEqual(
    runs.map((r) => [r.spec.attempt, r.status.state]),
    [
      [1, 'failed'],
      [2, 'failed'],
      [3, 'completed'],
    ],
  );
  t.regex(runs[0]!.status.error ?? '', /simulated fault/);
  t.is((await q.nodeOf(1)).status.phase, 'active');
});

test('node loop puts a node in error after three failed restarts, and a new request retries', async (t) => {
  const q = await startLab(t, 1);
  await allActive(q, 1);
  q.lab!.failNext(1, 'node.restart', 3);
  await request(q, 1, 'restartGeneration');
  const errored = await waitFor('error phase', async () => ((await q.nodeOf(1)).status.phase === 'error' ? q.nodeOf(1) : undefined));
  t.is(errored.status.conditions?.find((c) => c.type === 'Degraded')?.reason, 'RestartFailed');
  await request(q, 1, 'restartGeneration');
  await waitFor('second request acknowledged', async () => (await q.nodeOf(1)).status.observedRestartGeneration === 2);
  t.is((await q.nodeOf(1)).status.phase, 'active');
});

test('node loop: a node that falls silent mid-restart goes offline, is blocked, and converges when it returns', async (t) => {
  const q = await startLab(t, 2);
  await allActive(q, 2);
  // Silent for longer than both the lab's heartbeat timeout and its run timeout (test/lab/harness.ts),
  // with room for a loaded machine to notice.
  q.lab!.offlineDuringNext(1, 'node.restart', 15_000);
  const id = await request(q, 1, 'restartGeneration');
  const blocked = await waitFor('blocked while offline', async () => {
    const n = await q.nodeOf(1);
    const c = n.status.conditions?.find((x) => x.type === 'Blocked');
    return n.status.phase === 'offline' && c?.status === 'True' ? c : undefined;
  });
  t.is(blocked.reason, 'NodeOffline');
  const first = (await runsOf(q, id, 'node.restart'))[0]!;
  t.is(first.status.state, 'failed');
  t.regex(first.status.error ?? '', /timed out/);
  await waitFor('restart acknowledged after return', async () => (await q.nodeOf(1)).status.observedRestartGeneration === 1);
  t.is((await q.nodeOf(2)).status.phase, 'active', 'the other node was untouched');
});

test('node loop sends nothing to an offline node until it reports again', async (t) => {
  const q = await startLab(t, 1);
  await allActive(q, 1);
  q.lab!.machine(1).partition();
  await waitFor('offline', async () => (await q.nodeOf(1)).status.phase === 'offline');
  const id = await request(q, 1, 'restartGeneration');
  await waitFor('blocked', async () => (await q.nodeOf(1)).status.conditions?.some((c) => c.type === 'Blocked' && c.status === 'True'));
  t.deepEqual(await runsOf(q, id, 'node.restart'), []);
  q.lab!.machine(1).heal();
  await waitFor('restart acknowledged', async () => (await q.nodeOf(1)).status.observedRestartGeneration === 1);
  t.is((await runsOf(q, id, 'node.restart')).length, 1);
});

test('node loop shuts a node down and keeps it offline as powered off', async (t) => {
  const q = await startLab(t, 1);
  await allActive(q, 1);
  await request(q, 1, 'shutdownGeneration');
  const off = await waitFor('powered off', async () => {
    const n = await q.nodeOf(1);
    return n.status.observedShutdownGeneration === 1 && n.status.phase === 'offline' ? n : undefined;
  });
  t.is(off.status.conditions?.find((c) => c.type === 'Ready')?.reason, 'PoweredOff');
  t.false(q.lab!.machine(1).powered);
  q.lab!.machine(1).powerOn();
  await waitFor('back after power-on', async () => (await q.nodeOf(1)).status.phase === 'active');
  t.pass();
});

test('node loop marks a disk that died as absent and keeps its document', async (t) => {
  const q = await startLab(t, 1);
  await allActive(q, 1);
  const victim = q.lab!.machine(1).spec.disks[1]!;
  q.lab!.killDisk(1, victim.serial);
  const disk = await waitFor('disk absent', async () => {
    const ds = await q.store.list<DiskSpec, DiskStatusFields>(Kind.Disk);
    return ds.find((d) => d.spec.serial === victim.serial && d.status.present === false);
  });
  t.is(disk.spec.osd, false);
});

test('node loop retries a run that a Quarry restart interrupted', async (t) => {
  const stateDir = await mkdtemp(join(tmpdir(), 'quarry-restart-'));
  t.teardown(() => rm(stateDir, { recursive: true, force: true }));
  // The first Quarry's agents take a minute per step, so the restart is still running when it stops.
  const q1 = await startLab(t, 1, { stateDir, lab: { stepMs: 60_000 } });
  await allActive(q1, 1);
  const id = await request(q1, 1, 'restartGeneration');
  await waitFor('restart running', async () => (await runsOf(q1, id, 'node.restart'))[0]?.status.state === 'running');
  await q1.stop();

  const q2 = await startLab(t, 1, { stateDir });
  await waitFor('restart acknowledged', async () => (await q2.nodeOf(1)).status.observedRestartGeneration === 1);
  const runs = await runsOf(q2, id, 'node.restart');
  t.deepEqual(
    runs.map((r) => r.status.state),
    ['failed', 'completed'],
  );
  t.regex(runs[0]!.status.error ?? '', /interrupted/);
});
