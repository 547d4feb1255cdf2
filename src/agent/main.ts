// The node agent: `node dist/src/agent/main.js --master-url http://master:8080` (or
// `npm run agent`). Logs in as agent:<nodeId> with the credential its install wrote, rotates
// it, then reports and works until SIGTERM. The Ceph daemons it started keep running when it
// stops: they are not its children (see ceph-host.ts).
import { readFile } from 'node:fs/promises';
import { pathToFileURL } from 'node:url';
import { envFromArgs } from '../config.js';
import { readInventory } from './inventory.js';
import { ZxRunner } from '../exec/zx-runner.js';
import { AgentSession } from '../fleet/agent-session.js';
import { CredentialFile } from '../fleet/credential-file.js';
import { createLogger, type Logger } from '../log.js';
import { Agent } from './agent.js';
import { CephHost } from './ceph-host.js';
import { loadAgentConfig, type AgentConfig } from './config.js';
import { HttpMasterFiles } from './master.js';
import { agentSteps } from './steps/index.js';

/** The node id is in the credential's username (agent:<nodeId>). */
export function nodeIdOf(username: string): string {
  const m = /^agent:(.+)$/.exec(username);
  if (!m?.[1]) throw new Error(`the credential's username "${username}" is not agent:<nodeId>`);
  return m[1];
}

export async function startAgent(config: Readonly<AgentConfig>, log: Logger): Promise<Agent> {
  const credentials = new CredentialFile(config.credentialFile);
  const own = credentials.agentSecret;
  if (!own) throw new Error(`no agent credential in ${config.credentialFile}`);
  const nodeId = nodeIdOf(own.username);
  const runner = new ZxRunner();
  const session = new AgentSession(config.masterUrl, credentials);
  const host = new CephHost({ runner, ...config });
  // A boot leaves the monitors' disks unmounted: mounted again before any step starts one.
  await host.mountDisks(log);
  const bootId = (await readFile(config.bootIdFile, 'utf8').catch(() => `pid-${process.pid}`)).trim() || `pid-${process.pid}`;
  const agent = new Agent({
    session,
    host,
    runner,
    log,
    steps: agentSteps(),
    master: new HttpMasterFiles(session, nodeId),
    inventory: async () => {
      const inv = await readInventory(runner);
      return config.disks ? { ...inv, disks: inv.disks.filter((d) => config.disks!.includes(d.devicePath)) } : inv;
    },
    identity: { bootId, hostname: config.hostname, ip: config.publicAddr },
    heartbeatMs: config.heartbeatMs,
    claimWaitMs: config.claimWaitMs,
    parallelSteps: config.parallelSteps,
    power: { reboot: config.rebootCommand, poweroff: config.poweroffCommand },
  });
  agent.start();
  log('info', 'agent started', { nodeId, master: config.masterUrl });
  return agent;
}

async function main(): Promise<void> {
  const log = createLogger();
  const agent = await startAgent(loadAgentConfig(envFromArgs(process.argv.slice(2), process.env)), log);
  const stop = (signal: string): void => {
    log('info', 'agent stopping; its daemons keep running', { signal });
    agent.stop().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.once('SIGINT', () => stop('SIGINT'));
  process.once('SIGTERM', () => stop('SIGTERM'));
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`quarry-agent: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
