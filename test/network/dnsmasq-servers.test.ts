// DnsmasqServers against a scripted supervisor: the command line it runs, how a failed start
// is classified, an unexpected exit reported, and a dnsmasq left by a crashed Quarry stopped.
import test, { type ExecutionContext } from 'ava';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DhcpStartError } from '../../src/clients/dhcp.js';
import { DnsmasqServers } from '../../src/clients/dnsmasq.js';
import type { ExitInfo, ProcessSupervisor, SpawnOptions, Supervised } from '../../src/exec/supervisor.js';
import { alive } from '../helpers/process.js';
import { waitFor } from '../lab/harness.js';

/** Each spawn prints `lines` and then, if `exit` is given, exits with it; stop() ends it. */
class ScriptedSupervisor implements ProcessSupervisor {
  readonly spawned: Array<{ cmd: string; args: string[]; end(info: ExitInfo): void }> = [];
  constructor(private readonly script: { lines: string[]; exit?: ExitInfo }) {}
  spawn(cmd: string, args: string[], opts: SpawnOptions = {}): Supervised {
    let end: (info: ExitInfo) => void = () => undefined;
    const exited = new Promise<ExitInfo>((resolve) => (end = resolve));
    this.spawned.push({ cmd, args, end });
    setImmediate(() => {
      for (const l of this.script.lines) opts.onLine?.('stderr', l);
      if (this.script.exit) end(this.script.exit);
    });
    return {
      pid: 70_000 + this.spawned.length,
      exited,
      stop: async () => {
        end({ code: null, signal: 'SIGTERM' });
        return exited;
      },
    };
  }
}

async function dir(t: ExecutionContext): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'qnet-dnsmasq-'));
  t.teardown(() => rm(d, { recursive: true, force: true }));
  return d;
}

const req = { nic: 'qnet0', config: 'interface=qnet0\n', configHash: 'f'.repeat(64) };
const STARTED = ['dnsmasq[1]: started, version 2.90 DNS disabled'];

test('dnsmasq servers run dnsmasq -k on the written file inside the namespace, and report a death', async (t) => {
  const d = await dir(t);
  const sup = new ScriptedSupervisor({ lines: STARTED });
  const servers = new DnsmasqServers({ supervisor: sup, dir: d, netns: 'qnet-a-1', now: () => 5 });
  const died: string[] = [];
  servers.onExit((id) => died.push(id));
  const state = await servers.start('n1', req, () => undefined);
  t.deepEqual(
    sup.spawned.map((s) => [s.cmd, ...s.args]),
    [['ip', 'netns', 'exec', 'qnet-a-1', 'dnsmasq', '-k', `--conf-file=${d}/n1.conf`]],
  );
  t.is(await readFile(join(d, 'n1.conf'), 'utf8'), req.config);
  t.deepEqual(servers.running('n1'), state);
  t.deepEqual(servers.networks(), ['n1']);
  sup.spawned[0]!.end({ code: 139, signal: null });
  await waitFor('the death is reported', () => died.length === 1);
  t.is(servers.running('n1'), null);
  t.like(servers.lastExit('n1'), { reason: 'Exited', configHash: req.configHash, at: 5 });
  t.regex(servers.lastExit('n1')!.message, /started, version/);
});

test('dnsmasq servers classify a start that fails and do not report it as a death', async (t) => {
  const sup = new ScriptedSupervisor({ lines: ['', 'dnsmasq: unknown interface qnet0'], exit: { code: 2, signal: null } });
  const servers = new DnsmasqServers({ supervisor: sup, dir: await dir(t) });
  let deaths = 0;
  servers.onExit(() => deaths++);
  const lines: string[] = [];
  const err = await t.throwsAsync(
    servers.start('n1', req, (l) => lines.push(l)),
    { instanceOf: DhcpStartError },
  );
  t.is(err.reason, 'NicMissing');
  t.true(lines.includes('dnsmasq: unknown interface qnet0'), 'dnsmasq own words reach the run log');
  t.like(servers.lastExit('n1'), { reason: 'NicMissing', message: 'interface qnet0 does not exist' });
  t.is(servers.running('n1'), null);
  t.is(deaths, 0);
});

test('dnsmasq servers stop a dnsmasq a crashed Quarry left behind, found by its pid file', async (t) => {
  const d = await dir(t);
  const servers = new DnsmasqServers({ supervisor: new ScriptedSupervisor({ lines: STARTED }), dir: d });
  const files = servers.files('n1');
  // Stands for the old dnsmasq: its command line names the same configuration file.
  const old = spawn('sh', ['-c', 'while :; do sleep 0.05; done', 'dnsmasq', `--conf-file=${files.conf}`], { stdio: 'ignore' });
  t.teardown(() => old.kill('SIGKILL'));
  await writeFile(files.pidFile, `${old.pid}\n`);
  // Long enough to outlast a slow test: it must still run at the end (the teardown kills it).
  const other = spawn('sleep', ['600'], { stdio: 'ignore' });
  t.teardown(() => other.kill('SIGKILL'));
  const lines: string[] = [];
  await servers.start('n1', req, (l) => lines.push(l));
  await waitFor('the old one is gone', () => !alive(old.pid!));
  t.true(lines.some((l) => l.includes(`stopping dnsmasq pid ${old.pid} left by an earlier run`)));
  // A pid file naming a process that is not this network's dnsmasq is left alone.
  await writeFile(files.pidFile, `${other.pid}\n`);
  await servers.start('n1', req, () => undefined);
  t.true(alive(other.pid!));
});
