// The real agent program's loops against a whole Quarry on a real port (lab driver, no lab
// machines): it logs in with the credential its install wrote, rotates it into its file,
// reports inventory and daemons, and carries out node-level runs with their logs and results.
// Commands go to a FakeRunner, so nothing on this machine is touched.
import test, { type ExecutionContext } from 'ava';
import { readFileSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from '../../src/agent/agent.js';
import { CephHost } from '../../src/agent/ceph-host.js';
import { HttpMasterFiles } from '../../src/agent/master.js';
import { agentSteps, type AgentStep } from '../../src/agent/steps/index.js';
import { parseIpAddr, parseLsblk } from '../../src/clients/inventory.js';
import { disksFrom, nicsFrom } from '../../src/agent/inventory.js';
import { AgentSession } from '../../src/fleet/agent-session.js';
import { CredentialFile } from '../../src/fleet/credential-file.js';
import { silentLogger } from '../../src/log.js';
import { Kind } from '../../src/model/kinds.js';
import { enroll } from '../http/agent-helpers.js';
import { FakeRunner } from '../helpers/fake-runner.js';
import { startLab, waitFor } from '../lab/harness.js';

const fixture = (name: string): string => readFileSync(new URL(`../../../test/fixtures/inventory/${name}`, import.meta.url), 'utf8');

/** A whole Quarry and one enrolled node, whose install wrote the agent's first credential. */
async function enrolledNode(t: ExecutionContext) {
  const q = await startLab(t, 0);
  const e = await enroll(q, 1);
  const dir = await mkdtemp(join(tmpdir(), 'qceph-agent-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const credentialFile = join(dir, 'credential.json');
  await writeFile(credentialFile, JSON.stringify({ username: e.username, secret: e.initial, rotated: false }));
  return { q, e, dir, credentialFile };
}

test('agent program logs in, rotates its secret, reports, and runs steps with logs and results', async (t) => {
  const { q, e, dir, credentialFile } = await enrolledNode(t);
  const runner = new FakeRunner()
    .expect('ceph-authtool', ['--print-key', { secret: 'AQsecretsecret==' }], { stdout: 'printed AQsecretsecret==\n' })
    .expect('wipefs', ['--all', '/dev/vdz'], {
      exitCode: 1,
      stderr: 'wipefs: error: /dev/vdz: probing initialization failed: No such file or directory\n',
    });
  const session = new AgentSession(q.url, new CredentialFile(credentialFile));
  const host = new CephHost({
    runner,
    dataDir: join(dir, 'data'),
    runDir: join(dir, 'run'),
    logDir: join(dir, 'log'),
    publicAddr: null,
    portRange: null,
    extraConf: '',
  });
  const steps = new Map<string, AgentStep>([
    ...agentSteps(),
    [
      'test.hang',
      (ctx) =>
        new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('stopped: the agent is shutting down')))),
    ],
    [
      'test.secret',
      async (ctx) => {
        await ctx.runner.run('ceph-authtool', ['--print-key', { secret: 'AQsecretsecret==' }], { timeoutMs: 1_000 });
        return { done: true };
      },
    ],
  ]);
  const agent = new Agent({
    session,
    host,
    runner,
    steps,
    log: silentLogger,
    master: new HttpMasterFiles(session, e.nodeId),
    inventory: async () => ({ disks: disksFrom(parseLsblk(fixture('lsblk.json'))), nics: nicsFrom(parseIpAddr(fixture('ip-addr.json'))) }),
    identity: { bootId: 'boot-1', hostname: 'n1', ip: null },
    heartbeatMs: 100,
    claimWaitMs: 200,
  });
  agent.start();
  t.teardown(() => agent.stop());

  const start = (taskName: string, args: Record<string, unknown>) =>
    q.tasks.start({
      taskName,
      target: { kind: Kind.Node, id: e.nodeId, generation: 1 },
      node: { id: e.nodeId, hostname: 'n1' },
      args,
      timeoutMs: 10_000,
    });
  const ok = await q.tasks.whenFinished((await start('test.secret', {})).id);
  const failed = await q.tasks.whenFinished((await start('disk.wipe', { devicePath: '/dev/vdz' })).id);
  const unknown = await q.tasks.whenFinished((await start('ceph.iscsi.start', {})).id);
  const stopped = await q.tasks.whenFinished((await start('ceph.rgw.stop', { name: 'n1' })).id);

  t.like(ok.status, { state: 'completed', result: { done: true } });
  const okLogs = (await q.tasks.logs(ok.id)).map((l) => l.message);
  t.true(okLogs.includes('$ ceph-authtool --print-key ***'));
  t.true(okLogs.includes('printed ***'));
  t.false(okLogs.join('\n').includes('AQsecretsecret'));
  t.is(failed.status.state, 'failed');
  t.regex(failed.status.error ?? '', /wipefs --all \/dev\/vdz exited with 1: wipefs: error: \/dev\/vdz: probing initialization failed/);
  t.like(unknown.status, { state: 'failed', error: 'this agent has no step ceph.iscsi.start' });
  t.like(stopped.status, { state: 'completed', result: { name: 'n1' } });
  runner.verify();

  // The installed secret was replaced in the file; the master has the agent's report.
  const saved = JSON.parse(await readFile(credentialFile, 'utf8')) as { secret: string; rotated: boolean };
  t.true(saved.rotated);
  t.not(saved.secret, e.initial);
  const seen = q.fleet.observe(e.nodeId).report;
  t.like(seen, { hostname: 'n1', ip: '192.0.2.2', daemons: { mon: false, mgr: false, mds: false, rgw: false, osds: [] } });
  t.deepEqual(
    seen?.disks.map((d) => d.devicePath),
    ['/dev/loop0', '/dev/vda'],
  );
  // An agent that stops in the middle of a step kills it and reports the run failed at once.
  const hanging = await start('test.hang', {});
  // Claimed is not enough: the claim's answer may still be on its way when the agent stops.
  await waitFor('the hanging step started on the node', async () =>
    (await q.tasks.logs(hanging.id)).some((l) => l.message === 'test.hang started'),
  );
  await agent.stop();
  const hung = await q.tasks.whenFinished(hanging.id);
  t.like(hung.status, { state: 'failed', error: 'stopped: the agent is shutting down' });

  // What the Ceph steps fetch: the cluster's conf, this node's keyrings (none yet), no monmap yet.
  const master = new HttpMasterFiles(session, e.nodeId);
  t.regex(await master.config(), /^fsid = [0-9a-f-]{36}$/m);
  t.deepEqual(await master.keyrings(), []);
  await t.throwsAsync(master.monmap(), { message: 'GET /ceph/monmap: HTTP 503 CLUSTER_UNAVAILABLE' });
});

test('agent program carries out runs for different things at once, up to parallelSteps', async (t) => {
  const { q, e, dir, credentialFile } = await enrolledNode(t);
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
  // Each step waits until two steps are in progress: with one at a time, neither would end.
  let inProgress = 0;
  let most = 0;
  const together: AgentStep = async (ctx) => {
    most = Math.max(most, ++inProgress);
    while (most < 2 && !ctx.signal.aborted) await new Promise((r) => setTimeout(r, 20));
    inProgress--;
    return { most };
  };
  const agent = new Agent({
    session,
    host,
    runner: new FakeRunner(),
    steps: new Map([['test.together', together]]),
    log: silentLogger,
    master: new HttpMasterFiles(session, e.nodeId),
    inventory: async () => ({ disks: [], nics: [] }),
    identity: { bootId: 'boot-1', hostname: 'n1', ip: null },
    heartbeatMs: 100,
    claimWaitMs: 200,
    parallelSteps: 3,
  });
  agent.start();
  t.teardown(() => agent.stop());
  const start = (k: number) =>
    q.tasks.start({
      taskName: 'test.together',
      target: { kind: Kind.Node, id: `${e.nodeId}-${k}`, generation: 1 },
      node: { id: e.nodeId, hostname: 'n1' },
      args: {},
      timeoutMs: 10_000,
    });
  const runs = await Promise.all([start(1), start(2)]);
  const done = await Promise.all(runs.map((r) => q.tasks.whenFinished(r.id)));
  t.deepEqual(
    done.map((r) => r.status.state),
    ['completed', 'completed'],
  );
  t.is(most, 2);
});

test('agent program refuses a run whose arguments do not match its step schema: failed, the field named in its log, nothing run', async (t) => {
  const { q, e, dir, credentialFile } = await enrolledNode(t);
  const runner = new FakeRunner();
  const session = new AgentSession(q.url, new CredentialFile(credentialFile));
  const host = new CephHost({
    runner,
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
    identity: { bootId: 'boot-1', hostname: 'n1', ip: null },
    heartbeatMs: 100,
    claimWaitMs: 200,
  });
  agent.start();
  t.teardown(() => agent.stop());
  // Started as a loop with a bug would start them: the master hands them on as they are.
  const start = (taskName: string, args: Record<string, unknown>) =>
    q.tasks.start({
      taskName,
      target: { kind: Kind.Node, id: e.nodeId, generation: 1 },
      node: { id: e.nodeId, hostname: 'n1' },
      args,
      timeoutMs: 10_000,
    });
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['ceph.rgw.start', { name: 'n1', port: '7480 --rgw-dns-name evil' }, 'argument port must be a TCP port'],
    ['disk.wipe', { devicePath: '/dev/vdz; reboot' }, 'argument devicePath must be an absolute device path'],
    ['ceph.mgr.start', { name: 'n1', fsid: 'x', extra: '--debug' }, 'argument extra is not taken by ceph.mgr.start'],
    ['ceph.mon.join', { addr: '10.0.0.1' }, 'argument monName is required'],
  ];
  for (const [step, args, message] of cases) {
    const run = await q.tasks.whenFinished((await start(step, args)).id);
    t.like(run.status, { state: 'failed', error: message }, step);
    t.true(
      (await q.tasks.logs(run.id)).some((l) => l.level === 'error' && l.message === message),
      `${step}: the refusal is in the run's log`,
    );
  }
  t.deepEqual(runner.calls, [], 'no command ran');
  t.deepEqual(await host.daemons(), [], 'no daemon was started');
});
