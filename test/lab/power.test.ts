// Power that means what it says (#15 part 4), in the lab: a node's BMC declared through the API
// powers it off after the agent's soft shutdown and on again (it network-boots to active); a
// node without one says Blocked: NoPowerControl; a BMC that refuses the login fails the run,
// naming the BMC and never its password.
import test from 'ava';
import { Step } from '../../src/catalogue/index.js';
import { Kind } from '../../src/model/kinds.js';
import type { TaskRun } from '../../src/tasks/types.js';
import { Client } from '../http/client.js';
import { ADMIN_PASSWORD, allActive, startLab, waitFor, type LabQuarry } from './harness.js';

interface Detail {
  id: string;
  status: string;
  bmc: { address: string; port: number; username: string; passwordSet: boolean } | null;
  fencing: string;
  blocked: { reason: string; message: string } | null;
}

async function admin(q: LabQuarry): Promise<Client> {
  const c = new Client(q.url);
  const r = await c.post('/user/login', { username: 'admin', password: ADMIN_PASSWORD });
  if (r.status !== 200) throw new Error(`login: ${r.status}`);
  return c;
}

const detail = async (c: Client, id: string): Promise<Detail> =>
  ((await c.get('/nodes/details')).json as Detail[]).find((d) => d.id === id)!;

async function invoke(c: Client, operation: string, id: string): Promise<void> {
  const r = await c.post('/invoke/node', { operation, nodeIds: [id] });
  const results = (r.json as { results: Array<{ status: string; reason?: string }> }).results;
  if (results[0]?.status !== 'scheduled') throw new Error(`${operation}: ${JSON.stringify(r.json)}`);
}

/** The latest run of a BMC step for the node, once it finished. */
async function finishedRun(q: LabQuarry, nodeId: string, taskName: string, state: 'completed' | 'failed'): Promise<TaskRun> {
  return waitFor(`a ${state} ${taskName} run`, async () => {
    const r = await q.tasks.latestFor(Kind.Node, nodeId, taskName);
    return r?.status.state === state ? r : undefined;
  });
}

const shutDown = async (q: LabQuarry, c: Client, id: string): Promise<void> => {
  await invoke(c, 'node.shutdown', id);
  await waitFor('the node off on request', async () => {
    const n = await q.store.get(Kind.Node, id);
    const s = n?.status as { phase?: string; observedShutdownGeneration?: number } | undefined;
    return s?.phase === 'offline' && s.observedShutdownGeneration === 1;
  });
};

test('power node.shutdown with a BMC ends with the power read off, and node.power-on boots it back to active', async (t) => {
  const q = await startLab(t, 1, { power: { bmcPollMs: 20 } });
  const [n] = await allActive(q, 1);
  const id = n!.id;
  const c = await admin(q);
  const bmc = q.lab!.bmc(1);
  t.deepEqual((await c.request('PUT', `/nodes/${id}/bmc`, { json: bmc })).json, { status: 'updated' });
  t.deepEqual((await detail(c, id)).bmc, { address: bmc.address, port: 623, username: bmc.username, passwordSet: true });
  await shutDown(q, c, id);
  const off = await finishedRun(q, id, Step.bmcPowerOff, 'completed');
  const offLog = (await q.tasks.logs(off.id)).map((l) => l.message).join('\n');
  t.regex(offLog, /chassis power is off \(soft power-off ended/);
  t.false(q.lab!.machine(1).powered);
  t.deepEqual((await c.get(`/nodes/${id}/operations`)).json, ['node.power-on']);
  await invoke(c, 'node.power-on', id);
  await waitFor('the node active again', async () => (await detail(c, id)).status === 'active');
  const on = await finishedRun(q, id, Step.bmcPowerOn, 'completed');
  t.deepEqual(on.status.result, { was: 'off' });
  t.true(q.lab!.machine(1).powered);
  await waitFor('the power-on acknowledged', async () => {
    const s = (await q.store.get(Kind.Node, id))?.status as { observedPowerOnGeneration?: number } | undefined;
    return s?.observedPowerOnGeneration === 1;
  });
  // The lab's BMC saw the status checks, the power-on and no hard power-off (the soft one ended).
  t.false(q.lab!.bmcs.calls.some((x) => x.verb === 'off'));
  t.true(q.lab!.bmcs.calls.some((x) => x.verb === 'on'));
  const everything = JSON.stringify(q.events) + offLog + (await q.tasks.logs(on.id)).map((l) => l.message).join('\n');
  t.false(everything.includes(bmc.password), 'the password is in no event and no log');
  t.false(JSON.stringify((await c.get('/nodes/details')).json).includes(bmc.password));
});

test('power a node without a BMC says Blocked: NoPowerControl on node.power-on, and powers on once one is declared', async (t) => {
  const q = await startLab(t, 1, { power: { bmcPollMs: 20 } });
  const [n] = await allActive(q, 1);
  const id = n!.id;
  const c = await admin(q);
  await shutDown(q, c, id);
  t.is((await detail(c, id)).bmc, null);
  const said: Array<Record<string, unknown>> = [];
  t.teardown(
    q.bus.subscribe((e) => {
      if (e.type === 'node.state.changed') said.push(e.payload as Record<string, unknown>);
    }),
  );
  await invoke(c, 'node.power-on', id);
  const blocked = await waitFor('Blocked: NoPowerControl', async () => {
    const d = await detail(c, id);
    return d.blocked?.reason === 'NoPowerControl' ? d : undefined;
  });
  t.is(blocked.status, 'offline');
  t.regex(blocked.blocked!.message, /declare a BMC or power the machine on by hand/);
  const cond = ((await q.store.get(Kind.Node, id))?.status as { conditions: Array<{ type: string; status: string; reason: string }> })
    .conditions;
  t.like(
    cond.find((x) => x.type === 'Blocked'),
    { status: 'True', reason: 'NoPowerControl' },
  );
  t.is(await q.tasks.latestFor(Kind.Node, id, Step.bmcPowerOn), undefined, 'no run without a BMC');
  // Said on /events too, with the node's names, though its phase (offline) did not change.
  const held = await waitFor('node.state.changed saying NoPowerControl', async () => said.find((p) => p.reason === 'NoPowerControl'));
  t.like(held, { nodeId: id, status: 'offline', hostname: n!.spec.hostname });
  t.regex(String(held.message), /declare a BMC/);
  // The request waits, not lost: a BMC declared now powers the node on.
  await c.request('PUT', `/nodes/${id}/bmc`, { json: q.lab!.bmc(1) });
  await waitFor('the node active again', async () => (await detail(c, id)).status === 'active');
  t.is((await detail(c, id)).blocked, null);
});

test('power a BMC that refuses the login or does not answer fails the run, naming the BMC and never the password', async (t) => {
  const q = await startLab(t, 1, { power: { bmcPollMs: 20 } });
  const [n] = await allActive(q, 1);
  const id = n!.id;
  const c = await admin(q);
  const bmc = q.lab!.bmc(1);
  await c.request('PUT', `/nodes/${id}/bmc`, { json: bmc });
  await shutDown(q, c, id);
  const wrong = 'not-the-pw-9731';
  t.is((await c.request('PUT', `/nodes/${id}/bmc`, { json: { ...bmc, password: wrong } })).status, 200);
  await invoke(c, 'node.power-on', id);
  const failed = await finishedRun(q, id, Step.bmcPowerOn, 'failed');
  const log = (await q.tasks.logs(failed.id)).map((l) => l.message).join('\n');
  t.regex(failed.status.error ?? '', /BMC 198\.51\.100\.2:623 \(user quarry\): login refused/);
  t.regex(log, /BMC 198\.51\.100\.2:623/);
  const errored = await waitFor('PowerOnFailed after three tries', async () => {
    const d = await detail(c, id);
    return d.blocked?.reason === 'PowerOnFailed' ? d : undefined;
  });
  t.is(errored.status, 'offline');
  t.regex(errored.blocked!.message, /power-on failed 3 times: BMC 198\.51\.100\.2:623/);
  t.false(q.lab!.machine(1).powered);
  // A BMC that does not answer: another request, the right password, the reason in the run.
  q.lab!.bmcs.faults.unreachable.add(bmc.address);
  await c.request('PUT', `/nodes/${id}/bmc`, { json: bmc });
  await invoke(c, 'node.power-on', id);
  const unreachable = await waitFor('a run failed for no answer', async () => {
    const r = await q.tasks.latestFor(Kind.Node, id, Step.bmcPowerOn);
    return r?.status.state === 'failed' && /no answer/.test(r.status.error ?? '') ? r : undefined;
  });
  const texts = [
    JSON.stringify(q.events),
    JSON.stringify(errored),
    log,
    unreachable.status.error ?? '',
    JSON.stringify((await c.get('/task/runs/recent')).json),
    JSON.stringify((await c.get(`/nodes/${id}/bmc`)).json),
  ];
  for (const text of texts) {
    t.false(text.includes(wrong));
    t.false(text.includes(bmc.password));
  }
});

test('power a soft power-off that does not end within the grace is forced through the BMC, both in the run log', async (t) => {
  const q = await startLab(t, 1, { power: { bmcPollMs: 20, softOffGraceMs: 300 } });
  const [n] = await allActive(q, 1);
  const id = n!.id;
  const c = await admin(q);
  const bmc = q.lab!.bmc(1);
  await c.request('PUT', `/nodes/${id}/bmc`, { json: bmc });
  q.lab!.bmcs.faults.hangOnPowerOff.add(bmc.address);
  await shutDown(q, c, id);
  const off = await finishedRun(q, id, Step.bmcPowerOff, 'completed');
  t.deepEqual(off.status.result, { was: 'on', forced: true });
  const log = (await q.tasks.logs(off.id)).map((l) => l.message).join('\n');
  t.regex(log, /still on after 300 ms; hard power-off/);
  t.regex(log, /chassis power is off \(forced\)/);
  t.true(q.lab!.bmcs.calls.some((x) => x.verb === 'off'));
  t.false(log.includes(bmc.password));
});
