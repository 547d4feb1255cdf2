// A node for the agent's unit tests: a CephHost over a temp dir and a FakeRunner (every command
// scripted), a master that serves fixed files, and a step context that records log lines.
import type { ExecutionContext } from 'ava';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CephHost } from '../../src/agent/ceph-host.js';
import type { Keyring, MasterFiles } from '../../src/agent/master.js';
import type { AgentStepContext } from '../../src/agent/steps/context.js';
import type { LogLine } from '../../src/tasks/types.js';
import { FakeRunner } from '../helpers/fake-runner.js';
import { FakeDisks } from './fake-disks.js';

export const FSID = '6e1b7a52-0a51-4bb3-9c0a-6f0d1a2b3c4d';
export const MASTER_CONF = `[global]\nfsid = ${FSID}\nmon_host = [v2:10.0.0.1:3300,v1:10.0.0.1:6789]\n`;
export const MON_KEY = 'AQBAbAJrAAAAABAAmonmonmonmonmonmonmonmonmon==';
export const ADMIN_KEY = 'AQBAbAJrAAAAABAAadminadminadminadminadmin0==';

export const keyring = (entity: string, key: string): Keyring => ({ entity, keyring: `[${entity}]\n\tkey = ${key}\n` });

export class StaticMaster implements MasterFiles {
  constructor(
    public keys: Keyring[] = [keyring('mon.', MON_KEY), keyring('client.admin', ADMIN_KEY)],
    public monmapBytes = Buffer.from('monmap'),
  ) {}
  conf = MASTER_CONF;
  config = async (): Promise<string> => this.conf;
  configHash = async (): Promise<string> => createHash('sha256').update(this.conf).digest('hex');
  keyrings = async (): Promise<Keyring[]> => this.keys;
  monmap = async (): Promise<Buffer> => this.monmapBytes;
}

export interface Node {
  dir: string;
  runner: FakeRunner;
  host: CephHost;
  master: StaticMaster;
  lines: LogLine[];
  /** Its block devices: /dev/vdb, blank, to start with. */
  disks: FakeDisks;
  ctx(args: Record<string, unknown>): AgentStepContext;
}

export async function fakeNode(t: ExecutionContext): Promise<Node> {
  const dir = await mkdtemp(join(tmpdir(), 'qceph-unit-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const runner = new FakeRunner();
  const disks = new FakeDisks(join(dir, 'disks')).install(runner);
  disks.add('/dev/vdb');
  const host = new CephHost({
    runner,
    dataDir: join(dir, 'data'),
    runDir: join(dir, 'run'),
    logDir: join(dir, 'log'),
    publicAddr: '10.0.0.1',
    portRange: { min: 6800, max: 6899 },
    extraConf: 'osd_memory_target = 939524096',
    sleep: async () => undefined,
    blockDevice: disks.blockDevice,
  });
  const master = new StaticMaster();
  const lines: LogLine[] = [];
  const ctx = (args: Record<string, unknown>): AgentStepContext => ({
    args,
    signal: new AbortController().signal,
    runner,
    host,
    master,
    log: (level, message) => lines.push({ timestamp: new Date().toISOString(), level, message }),
  });
  return { dir, runner, host, master, lines, disks, ctx };
}
