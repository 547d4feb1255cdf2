// The agent's configuration, from the environment and flags (--master-url http://… is
// MASTER_URL=http://…), read once and frozen. Paths default to Ceph's own, so a production
// node needs only the master's address; a test points every path into its temp dir.
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { envInt as int } from '../config.js';
import { InputError } from '../errors.js';
import type { CephPaths } from './ceph-conf.js';

/** With the paths, address and port window of CephPaths (ceph-conf.ts). */
export interface AgentConfig extends CephPaths {
  masterUrl: string;
  /** JSON {username, secret, rotated} written at install; the rotated secret replaces it. */
  credentialFile: string;
  hostname: string;
  /** Report only these devices (DISKS=/dev/sdb,/dev/sdc); null: every disk. */
  disks: string[] | null;
  heartbeatMs: number;
  claimWaitMs: number;
  /** Steps carried out at once. */
  parallelSteps: number;
  /** What node.restart / node.shutdown run once their run is reported completed (argv, no shell). */
  rebootCommand: readonly string[];
  poweroffCommand: readonly string[];
  /** Where this boot's id is read: it changes with every boot, which is how the master knows the
   * node restarted (a test's network-namespace "nodes" share the host's, and get a file each). */
  bootIdFile: string;
}

type Env = Record<string, string | undefined>;

/** How often an agent reports by default; the master keeps its connection open longer (KEEP_ALIVE_TIMEOUT_MS). */
export const DEFAULT_HEARTBEAT_MS = 5_000;

export function loadAgentConfig(env: Env): Readonly<AgentConfig> {
  const masterUrl = env.MASTER_URL ?? '';
  if (!/^https?:\/\/[^/]+/.test(masterUrl)) throw new InputError(`MASTER_URL must be the master's http(s) address, got "${masterUrl}"`);
  const portMin = int(env, 'CEPH_PORT_MIN', 0, 0, 65535);
  const portMax = int(env, 'CEPH_PORT_MAX', 0, 0, 65535);
  if ((portMin === 0) !== (portMax === 0) || portMin > portMax)
    throw new InputError('CEPH_PORT_MIN and CEPH_PORT_MAX go together, the minimum first');
  return Object.freeze({
    masterUrl,
    credentialFile: env.CREDENTIAL_FILE || '/var/lib/quarry-agent/credential.json',
    dataDir: env.CEPH_DATA_DIR || '/var/lib/ceph',
    runDir: env.CEPH_RUN_DIR || '/run/ceph',
    logDir: env.CEPH_LOG_DIR || '/var/log/ceph',
    publicAddr: env.PUBLIC_ADDR || null,
    portRange: portMin ? { min: portMin, max: portMax } : null,
    extraConf: env.CEPH_EXTRA_CONF ? readFileSync(env.CEPH_EXTRA_CONF, 'utf8') : '',
    hostname: env.NODE_HOSTNAME || hostname(),
    disks: env.DISKS
      ? env.DISKS.split(',')
          .map((d) => d.trim())
          .filter(Boolean)
      : null,
    heartbeatMs: int(env, 'HEARTBEAT_MS', DEFAULT_HEARTBEAT_MS, 10, 600_000),
    claimWaitMs: int(env, 'CLAIM_WAIT_MS', 25_000, 0, 30_000),
    parallelSteps: int(env, 'PARALLEL_STEPS', 4, 1, 16),
    rebootCommand: argv(env, 'AGENT_REBOOT_COMMAND', ['systemctl', 'reboot']),
    poweroffCommand: argv(env, 'AGENT_POWEROFF_COMMAND', ['systemctl', 'poweroff']),
    bootIdFile: env.AGENT_BOOT_ID_FILE || '/proc/sys/kernel/random/boot_id',
  });
}

/** A command as argv, never through a shell: a JSON array of strings (`["systemctl","reboot"]`),
 * or words separated by spaces when none needs quoting. */
function argv(env: Env, key: string, fallback: readonly string[]): readonly string[] {
  const raw = env[key]?.trim();
  if (!raw) return Object.freeze([...fallback]);
  let words: unknown;
  if (raw.startsWith('[')) {
    try {
      words = JSON.parse(raw);
    } catch {
      words = null;
    }
  } else words = raw.split(/\s+/);
  if (!Array.isArray(words) || words.length === 0 || !words.every((w) => typeof w === 'string' && w !== ''))
    throw new InputError(`${key} must be a command: words separated by spaces, or a JSON array of strings`);
  return Object.freeze(words as string[]);
}
