// Configuration is read once, validated, and passed down frozen; nothing else reads env.
import { resolve } from 'node:path';
import { InputError } from './errors.js';

export interface Config {
  port: number;
  host: string;
  stateDir: string;
  specsDir: string;
  adminPassword: string | null;
  driver: 'lab' | 'real';
  labNodes: number;
  imageRegistry: string | null;
  /** How long without an agent report before a node is offline. */
  heartbeatTimeoutMs: number;
  /** Every loop looks at every object this often, whatever the watches said. */
  resyncMs: number;
  reconcileConcurrency: number;
  /** DRIVER=real: the network namespace the master's interfaces and dnsmasq live in (tests, containers). */
  masterNetns: string | null;
  /** A template render running longer than this is stopped. */
  templateTimeoutMs: number;
  /** More network boots than this within the window, with no agent report, is a boot loop. */
  bootLoopMaxBoots: number;
  bootLoopWindowMs: number;
  /** Enrollment (src/fleet/enrollment.ts): how long an unclaimed install credential is good for. */
  installCredentialTtlMs: number;
  /** Unapproved nodes kept at most; discoveries beyond are refused (429). */
  maxUnapprovedNodes: number;
  /** Discoveries (unknown MACs) one source address may make at once, then per minute. */
  discoveryBurst: number;
  discoveryPerMinute: number;
  /** An unapproved node not seen booting for this long is forgotten. */
  unapprovedNodeTtlMs: number;
  /** How long a machine that waits for approval sleeps before it asks again. */
  approvalRetrySeconds: number;
  /** A spec naming a MAC plus a boot from the address Quarry's DHCP leased it approves the node. */
  autoApproveDeclared: boolean;
}

type Env = Record<string, string | undefined>;

/** An integer variable within [min, max]; unset or empty: the default. */
export function envInt(env: Env, name: string, dflt: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new InputError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`, [
      { path: `/env/${name}`, message: `must be an integer from ${min} to ${max}` },
    ]);
  }
  return n;
}

function envBool(env: Env, name: string, dflt: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new InputError(`${name} must be true or false, got "${raw}"`, [{ path: `/env/${name}`, message: 'must be true or false' }]);
}

function netns(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null;
  // A name `ip netns` accepts, and nothing a command line could misread.
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/.test(raw)) {
    throw new InputError(`MASTER_NETNS must be a network namespace name, got "${raw}"`, [{ path: '/env/MASTER_NETNS', message: 'letters, digits, _ . -' }]);
  }
  return raw;
}

/** Flags mirror the variables: --port 9000 is PORT=9000, --lab-nodes 3 is LAB_NODES=3. */
export function envFromArgs(argv: string[], env: Env): Env {
  const out: Env = { ...env };
  for (let i = 0; i < argv.length; i++) {
    const m = /^--([a-z][a-z-]*)(?:=(.*))?$/.exec(argv[i] ?? '');
    if (!m || !m[1]) throw new InputError(`unknown argument "${argv[i]}"`);
    const name = m[1].replace(/-/g, '_').toUpperCase();
    out[name] = m[2] ?? argv[++i];
  }
  return out;
}

export function loadConfig(env: Env = process.env, cwd = process.cwd()): Readonly<Config> {
  const driver = env.DRIVER ?? 'lab';
  if (driver !== 'lab' && driver !== 'real') {
    throw new InputError(`DRIVER must be "lab" or "real", got "${driver}"`, [{ path: '/env/DRIVER', message: 'must be lab or real' }]);
  }
  return Object.freeze({
    port: envInt(env, 'PORT', 8080, 0, 65535),
    host: env.HOST || '0.0.0.0',
    stateDir: resolve(cwd, env.STATE_DIR || './state'),
    specsDir: resolve(cwd, env.SPECS_DIR || './specs'),
    adminPassword: env.ADMIN_PASSWORD || null,
    driver,
    labNodes: envInt(env, 'LAB_NODES', 6, 0, 100_000),
    imageRegistry: env.IMAGE_REGISTRY || null,
    heartbeatTimeoutMs: envInt(env, 'HEARTBEAT_TIMEOUT_MS', 15_000, 10, 3_600_000),
    resyncMs: envInt(env, 'RESYNC_MS', 300_000, 100, 86_400_000),
    reconcileConcurrency: envInt(env, 'RECONCILE_CONCURRENCY', 16, 1, 1024),
    masterNetns: netns(env.MASTER_NETNS),
    templateTimeoutMs: envInt(env, 'TEMPLATE_TIMEOUT_MS', 2_000, 10, 60_000),
    bootLoopMaxBoots: envInt(env, 'BOOT_LOOP_MAX_BOOTS', 5, 1, 30),
    bootLoopWindowMs: envInt(env, 'BOOT_LOOP_WINDOW_MS', 600_000, 1_000, 86_400_000),
    installCredentialTtlMs: envInt(env, 'INSTALL_CREDENTIAL_TTL_MS', 1_800_000, 1_000, 86_400_000),
    maxUnapprovedNodes: envInt(env, 'MAX_UNAPPROVED_NODES', 256, 0, 100_000),
    discoveryBurst: envInt(env, 'DISCOVERY_BURST', 16, 1, 100_000),
    discoveryPerMinute: envInt(env, 'DISCOVERY_PER_MINUTE', 6, 0, 100_000),
    unapprovedNodeTtlMs: envInt(env, 'UNAPPROVED_NODE_TTL_MS', 86_400_000, 1_000, 31_536_000_000),
    approvalRetrySeconds: envInt(env, 'APPROVAL_RETRY_SECONDS', 10, 1, 3_600),
    autoApproveDeclared: envBool(env, 'AUTO_APPROVE_DECLARED', true),
  });
}
