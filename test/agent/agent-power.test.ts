// The real agent's power steps (node.restart, node.shutdown) against a whole Quarry on a real
// port: the run is reported completed first, only then does the agent run the machine's reboot or
// poweroff command, and it claims nothing more from that boot. A command that fails leaves the
// agent working. Commands go to a scripted runner, so this machine is never rebooted.
import test, { type ExecutionContext } from 'ava';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from '../../src/agent/agent.js';
import { CephHost } from '../../src/agent/ceph-host.js';
import { HttpMasterFiles } from '../../src/agent/master.js';
import { agentSteps } from '../../src/agent/steps/index.js';
import type { Runner } from '../../src/exec/runner.js';
import { AgentSession } from '../../src/fleet/agent-session.js';
import { CredentialFile } from '../../src/fleet/credential-file.js';
import { silentLogger } from '../../src/log.js';
import { Kind } from '../../src/model/kinds.js';
import { enroll } from '../http/agent-helpers.js';
import { FakeRunner } from '../helpers/fake-runner.js';
import { startLab, waitFor, type LabQuarry } from '../lab/harness.js';

const POWER = { reboot: ['systemctl', 'reboot'], poweroff: ['systemctl', 'poweroff'] };

/** A whole Quarry, one enrolled node, and its agent with `runner`; stopped at the test's end. */
async function agentWith(t: ExecutionContext, runner: Runner) {
  const q = await startLab(t, 0);
  const e = await enroll(q, 1);
  const dir = await mkdtemp(join(tmpdir(), 'qceph-agent-power-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const credentialFile = join(dir, 'credential.json');
  await writeFile(credentialFile, JSON.stringify({ username: e.username, secret: e.initial, rotated: false }));
  const session = new AgentSession(q.url, new CredentialFile(credentialFile));
  const host = new CephHost({
    runner: new FakeRunner(),
    dataDir: join(dir, 'data'),
    runDir: join(dir, 'run'),
    logDir: join(dir, 'log'),
    publicAddr: null,
    portRange: null,
    extraConf: '',
  });
  const agent = new Agent({
    session,
    host,
    runner,
    steps: agentSteps(),
    log: silentLogger,
    master: new HttpMasterFiles(session, e.nodeId),
    inventory: async () => ({ disks: [], nics: [] }),
    identity: { bootId: 'boot-1', hostname: 'n1', ip: '192.0.2.9' },
    heartbeatMs: 100,
    claimWaitMs: 200,
    parallelSteps: 1,
    power: POWER,
  });
  agent.start();
  t.teardown(() => agent.stop());
  return { q, agent, nodeId: e.nodeId };
}

const startRun = (q: LabQuarry, nodeId: string, taskName: string, target: string, args: Record<string, unknown>) =>
  q.tasks.start({
    taskName,
    target: { kind: Kind.Node, id: target, generation: 1 },
    node: { id: nodeId, hostname: 'n1' },
    args,
    timeoutMs: 10_000,
  });

for (const [taskName, action] of [
  ['node.restart', 'reboot'],
  ['node.shutdown', 'poweroff'],
] as const) {
  test(`agent power: ${taskName} is reported completed before the ${action} command runs, and nothing is claimed after it`, async (t) => {
    const seen: Array<{ cmd: string; args: string[]; runState: string }> = [];
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    // Filled in once the agent exists; the runner reads it when called.
    const at: { q?: LabQuarry } = {};
    const runState = async (): Promise<string> =>
      (await at.q!.tasks.recent(10)).find((r) => r.spec.taskName === taskName)?.status.state ?? 'none';
    const runner: Runner = {
      run: async (cmd, args) => {
        seen.push({ cmd, args: args.map(String), runState: await runState() });
        // The machine is "going down": a run queued now must stay with the master.
        await held;
        return { stdout: '', stderr: '', exitCode: 0 };
      },
    };
    const a = await agentWith(t, runner);
    const q = (at.q = a.q);
    const run = await startRun(q, a.nodeId, taskName, a.nodeId, { request: 1, bootId: 'boot-1' });
    const done = await q.tasks.whenFinished(run.id);
    t.is(done.status.state, 'completed');
    await waitFor(`the ${action} command run`, async () => seen.length > 0);
    t.deepEqual(seen, [{ cmd: 'systemctl', args: [action], runState: 'completed' }]);
    const logs = (await q.tasks.logs(run.id)).map((l) => l.message);
    t.true(
      logs.some((l) => l.includes(`the machine ${action === 'reboot' ? 'reboots' : 'powers off'} once this run is reported completed`)),
      logs.join('\n'),
    );
    const later = await startRun(q, a.nodeId, 'ceph.rgw.stop', `${a.nodeId}-later`, { name: 'n1' });
    release();
    // Once its loops have ended, the run queued after the power step was never claimed.
    await a.agent.stop();
    t.is((await q.tasks.get(later.id)).status.state, 'pending');
    t.is(seen.length, 1);
  });
}

test('agent power: a reboot command that fails leaves the agent claiming and carrying out runs in the same boot', async (t) => {
  const runner = new FakeRunner()
    .expect('systemctl', ['reboot'], { exitCode: 1, stderr: 'Failed to reboot: access denied\n' })
    .expect('systemctl', ['reboot'], {});
  const { q, nodeId } = await agentWith(t, runner);
  const first = await q.tasks.whenFinished((await startRun(q, nodeId, 'node.restart', nodeId, { request: 1, bootId: 'boot-1' })).id);
  t.is(first.status.state, 'completed');
  // The next run is claimed: the loops started again after the failed command.
  const second = await q.tasks.whenFinished((await startRun(q, nodeId, 'node.restart', nodeId, { request: 2, bootId: 'boot-1' })).id);
  t.is(second.status.state, 'completed');
  await waitFor('the second reboot command', async () => runner.calls.length === 2);
  runner.verify();
});
