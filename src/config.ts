// Configuration is read once, validated, and passed down frozen; nothing else reads env.
import { resolve } from 'node:path';
import { InputError } from './errors.js';
import { LEVELS, type Level } from './log.js';

export interface Config {
  port: number;
  host: string;
  stateDir: string;
  specsDir: string;
  adminPassword: string | null;
  driver: 'lab' | 'real';
  labNodes: number;
  /** LAB_URL: a lab in its own process (src/sim/serve.ts) on loopback, shared by controllers. */
  labUrl: string | null;
  imageRegistry: string | null;
  /** IMAGE_REGISTRY_INSECURE_HTTP: a plain-http registry on another host is accepted. */
  imageRegistryInsecureHttp: boolean;
  /** IMAGE_REGISTRY_SHA256: the catalog's bytes must have this SHA-256 (lower-case hex). */
  imageRegistrySha256: string | null;
  /** How long without an agent report before a node is offline. */
  heartbeatTimeoutMs: number;
  /** Every loop looks at every object this often, whatever the watches said. */
  resyncMs: number;
  reconcileConcurrency: number;
  /** DRIVER=real: the network namespace the master's interfaces and dnsmasq live in (tests, containers). */
  masterNetns: string | null;
  /** A template render running longer than this is stopped. */
  templateTimeoutMs: number;
  /** The heap of each template render process, in MB. */
  templateMemoryMb: number;
  /** Renders of non-boot templates waiting before more are refused (503 TEMPLATE_BUSY). */
  templateQueue: number;
  /** More network boots than this within the window, with no agent report, is a boot loop. */
  bootLoopMaxBoots: number;
  bootLoopWindowMs: number;
  /** TRUST_PROXY: proxies (addresses, CIDR ranges, `loopback`) whose X-Forwarded-For/-Proto are believed; empty: none. */
  trustProxy: readonly string[];
  /** EXTERNAL_URL: the URL machines are sent back to, instead of the request's Host. */
  externalUrl: string | null;
  /** ALLOWED_HOSTS: Host names served besides loopback, the connection's own address and EXTERNAL_URL's host; null: HOST and the hostname. */
  allowedHosts: readonly string[] | null;
  /** Concurrent /events streams per user. */
  sseStreamsPerUser: number;
  /** AUDIT_MAX_ENTRIES: audit entries kept in the store; the oldest go first. */
  auditMaxEntries: number;
  /** The key that encrypts secrets at rest, base64 (SECRETS_KEY); taken out of process.env at start. */
  secretsKey: string | null;
  /** Where the key is kept when SECRETS_KEY is not set: outside STATE_DIR, made on first start. */
  secretsKeyFile: string;
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
  /** An OSD's disk gone from its (active) node this long is taken as dead: out, then destroyed
   * keeping the id for the disk that replaces it. */
  diskGoneGraceMs: number;
  /** A soft power-off of a node with a BMC that has not ended this long is forced (IPMI). */
  bmcSoftOffGraceMs: number;
  /** A node powered on through its BMC that has not reported this long is powered on again. */
  powerOnBootMs: number;
  /** A node with `fencing: bmc` whose agent is silent this long (its power on) is power-cycled. */
  fenceAfterMs: number;
  /** A node a specs file declares that no machine has matched this long is `NotSeen`. */
  nodeUnseenGraceMs: number;
  /** Task-run retention (src/tasks/retention.ts): finished runs older than this go (0: no age limit). */
  runRetentionDays: number;
  /** The run history's size above which the oldest finished runs go (0: no count limit). */
  runRetentionMaxRuns: number;
  /** Newest runs kept per object and step, whatever their age. */
  runRetentionKeepPerStep: number;
  /** How often the run history is pruned. */
  runPruneEveryMs: number;
  /** LOG_LEVEL: the lowest level written (debug, info, warn, error). */
  logLevel: Level;
  /** STORE: where the documents live: the embedded store under STATE_DIR, or an etcd cluster. */
  store: 'embedded' | 'etcd';
  /** STORE=etcd: ETCD_ENDPOINTS, ETCD_PREFIX and the TLS files (null for plain http). */
  etcd: EtcdConfig | null;
}

export interface EtcdConfig {
  /** Client URLs of the members, http:// or https:// (all the same). */
  endpoints: readonly string[];
  /** Every key of Quarry's under it; ends with "/". */
  prefix: string;
  /** ETCD_CA_FILE, ETCD_CERT_FILE, ETCD_KEY_FILE: absolute paths, read at start. */
  caFile: string | null;
  certFile: string | null;
  keyFile: string | null;
  /** LEADER_LEASE_TTL_S: the leader's etcd lease; a dead leader is replaced within about it. */
  leaderLeaseTtlS: number;
  /** ADVERTISE_URL: the API URL the other controllers forward agents and task actions to when
   * this one leads; null: the URL it listens on. */
  advertiseUrl: string | null;
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
    throw new InputError(`MASTER_NETNS must be a network namespace name, got "${raw}"`, [
      { path: '/env/MASTER_NETNS', message: 'letters, digits, _ . -' },
    ]);
  }
  return raw;
}

/** LAB_URL: where the lab process listens. Loopback only: the lab's Ceph CLI and BMCs are
 * reached over plain HTTP, with the client.admin key and the BMC passwords in the requests. */
function labUrl(raw: string | undefined, driver: string): string | null {
  if (raw === undefined || raw === '') return null;
  const problem = (why: string) => new InputError(`LAB_URL ${why}, got "${raw}"`, [{ path: '/env/LAB_URL', message: why }]);
  if (driver !== 'lab') throw problem('needs DRIVER=lab');
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw problem('must be a URL');
  }
  const loopback = /^127(\.\d{1,3}){3}$/.test(u.hostname) || u.hostname === 'localhost' || u.hostname === '[::1]';
  if (u.protocol !== 'http:' || !loopback || u.username || u.password) throw problem('must be an http URL on loopback');
  return u.origin;
}

const list = (raw: string | undefined): string[] =>
  (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');

function trustProxy(raw: string | undefined): string[] {
  const entries = list(raw);
  const cidr = /^(?:\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f:.]*:[0-9A-Fa-f:.]*)(?:\/\d{1,3})?$/;
  const bad = entries.find((e) => e !== 'loopback' && !cidr.test(e));
  if (bad !== undefined)
    throw new InputError(`TRUST_PROXY must list proxy addresses, CIDR ranges or "loopback", got "${bad}"`, [
      { path: '/env/TRUST_PROXY', message: 'addresses, CIDR ranges or loopback, comma-separated' },
    ]);
  return entries;
}

function externalUrl(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null;
  let url: URL | null = null;
  try {
    url = new URL(raw);
  } catch {
    url = null;
  }
  if (!url || !/^https?:$/.test(url.protocol) || url.username || url.password || url.search || url.hash) {
    throw new InputError(`EXTERNAL_URL must be an http(s) URL without credentials, query or fragment, got "${raw}"`, [
      { path: '/env/EXTERNAL_URL', message: 'http(s)://host[:port][/path]' },
    ]);
  }
  return url.href.replace(/\/+$/, '');
}

function allowedHosts(raw: string | undefined): string[] | null {
  if (raw === undefined || raw === '') return null;
  const hosts = list(raw).map((h) => h.toLowerCase());
  const bad = hosts.find((h) => !/^[a-z0-9.-]+$|^\[?[0-9a-f:.]+\]?$/.test(h));
  if (bad !== undefined)
    throw new InputError(`ALLOWED_HOSTS must list host names or addresses, got "${bad}"`, [
      { path: '/env/ALLOWED_HOSTS', message: 'host names or addresses, comma-separated' },
    ]);
  return hosts;
}

/** A yes/no variable: true, 1 or yes; unset, empty, false, 0 or no; anything else is refused. */
function flag(env: Env, name: string): boolean {
  const raw = (env[name] ?? '').toLowerCase();
  if (['true', '1', 'yes'].includes(raw)) return true;
  if (['', 'false', '0', 'no'].includes(raw)) return false;
  throw new InputError(`${name} must be true or false, got "${env[name]}"`, [{ path: `/env/${name}`, message: 'must be true or false' }]);
}

function sha256Pin(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null;
  if (!/^[0-9a-fA-F]{64}$/.test(raw)) {
    throw new InputError('IMAGE_REGISTRY_SHA256 must be 64 hex digits', [
      { path: '/env/IMAGE_REGISTRY_SHA256', message: 'must be 64 hex digits' },
    ]);
  }
  return raw.toLowerCase();
}

function logLevel(raw: string | undefined): Level {
  if (raw === undefined || raw === '') return 'info';
  const level = LEVELS.find((l) => l === raw);
  if (!level)
    throw new InputError(`LOG_LEVEL must be one of ${LEVELS.join(', ')}, got "${raw}"`, [
      { path: '/env/LOG_LEVEL', message: `one of ${LEVELS.join(', ')}` },
    ]);
  return level;
}

const ETCD_VARS = [
  'ETCD_ENDPOINTS',
  'ETCD_PREFIX',
  'ETCD_CA_FILE',
  'ETCD_CERT_FILE',
  'ETCD_KEY_FILE',
  'LEADER_LEASE_TTL_S',
  'ADVERTISE_URL',
] as const;

const refuse = (name: string, message: string, hint: string): InputError =>
  new InputError(message, [{ path: `/env/${name}`, message: hint }]);

function storeKind(env: Env): 'embedded' | 'etcd' {
  const raw = env.STORE;
  if (raw === undefined || raw === '' || raw === 'embedded') return 'embedded';
  if (raw === 'etcd') return 'etcd';
  throw refuse('STORE', `STORE must be "embedded" or "etcd", got "${raw}"`, 'embedded or etcd');
}

/** STORE=etcd's settings; with the embedded store none of them may be set (a forgotten
 * STORE=etcd would otherwise start a second, empty state quietly). */
function etcdConfig(env: Env, store: 'embedded' | 'etcd', cwd: string): EtcdConfig | null {
  if (store === 'embedded') {
    const stray = ETCD_VARS.find((v) => (env[v] ?? '') !== '');
    if (stray)
      throw refuse(stray, `${stray} is set but STORE is not "etcd": set STORE=etcd to use etcd, or unset ${stray}`, 'needs STORE=etcd');
    return null;
  }
  const endpoints = list(env.ETCD_ENDPOINTS);
  if (endpoints.length === 0)
    throw refuse('ETCD_ENDPOINTS', 'STORE=etcd needs ETCD_ENDPOINTS: the client URLs of the etcd members, comma-separated', 'required');
  const schemes = new Set<string>();
  for (const e of endpoints) {
    let url: URL | null;
    try {
      url = new URL(e);
    } catch {
      url = null;
    }
    if (
      !url ||
      !/^https?:$/.test(url.protocol) ||
      !url.port ||
      url.username ||
      url.password ||
      url.pathname !== '/' ||
      url.search ||
      url.hash
    )
      throw refuse(
        'ETCD_ENDPOINTS',
        `ETCD_ENDPOINTS must list http(s)://host:port URLs, got "${e}"`,
        'http(s)://host:port, comma-separated',
      );
    schemes.add(url.protocol);
  }
  if (schemes.size > 1) throw refuse('ETCD_ENDPOINTS', 'ETCD_ENDPOINTS mixes http:// and https:// members', 'all http or all https');
  const tls = schemes.has('https:');
  const file = (name: 'ETCD_CA_FILE' | 'ETCD_CERT_FILE' | 'ETCD_KEY_FILE'): string | null => {
    const raw = env[name];
    if (raw === undefined || raw === '') return null;
    if (!tls) throw refuse(name, `${name} is set but ETCD_ENDPOINTS are http://: use https:// endpoints for TLS`, 'needs https endpoints');
    return resolve(cwd, raw);
  };
  const caFile = file('ETCD_CA_FILE');
  const certFile = file('ETCD_CERT_FILE');
  const keyFile = file('ETCD_KEY_FILE');
  if (tls && !caFile)
    throw refuse(
      'ETCD_CA_FILE',
      "https:// ETCD_ENDPOINTS need ETCD_CA_FILE: the CA that signed the members' certificates",
      'required for https',
    );
  if ((certFile === null) !== (keyFile === null))
    throw refuse(
      certFile ? 'ETCD_KEY_FILE' : 'ETCD_CERT_FILE',
      'ETCD_CERT_FILE and ETCD_KEY_FILE go together: the client certificate and its key',
      'both or neither',
    );
  const prefix = env.ETCD_PREFIX === undefined || env.ETCD_PREFIX === '' ? 'quarry/' : env.ETCD_PREFIX;
  if (!/^[A-Za-z0-9][A-Za-z0-9._/-]*\/$/.test(prefix) || prefix.includes('//'))
    throw refuse(
      'ETCD_PREFIX',
      `ETCD_PREFIX must be letters, digits, . _ - and /, ending with "/", got "${prefix}"`,
      'e.g. quarry/ or site-a/quarry/',
    );
  // etcd rounds a shorter TTL up to its minimum (2 s with its default timing); longer only delays
  // failover.
  const leaderLeaseTtlS = envInt(env, 'LEADER_LEASE_TTL_S', 2, 2, 60);
  return { endpoints, prefix, caFile, certFile, keyFile, leaderLeaseTtlS, advertiseUrl: advertiseUrl(env.ADVERTISE_URL) };
}

function advertiseUrl(raw: string | undefined): string | null {
  if (raw === undefined || raw === '') return null;
  let url: URL | null;
  try {
    url = new URL(raw);
  } catch {
    url = null;
  }
  if (!url || !/^https?:$/.test(url.protocol) || url.username || url.password || url.search || url.hash || url.pathname !== '/')
    throw refuse('ADVERTISE_URL', `ADVERTISE_URL must be an http(s)://host:port URL, got "${raw}"`, 'http(s)://host:port');
  return url.origin;
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
  const store = storeKind(env);
  const etcd = etcdConfig(env, store, cwd);
  return Object.freeze({
    store,
    etcd: etcd && Object.freeze({ ...etcd, endpoints: Object.freeze(etcd.endpoints) }),
    port: envInt(env, 'PORT', 8080, 0, 65535),
    host: env.HOST || '0.0.0.0',
    stateDir: resolve(cwd, env.STATE_DIR || './state'),
    specsDir: resolve(cwd, env.SPECS_DIR || './specs'),
    adminPassword: env.ADMIN_PASSWORD || null,
    driver,
    labNodes: envInt(env, 'LAB_NODES', 6, 0, 100_000),
    labUrl: labUrl(env.LAB_URL, driver),
    imageRegistry: env.IMAGE_REGISTRY || null,
    imageRegistryInsecureHttp: flag(env, 'IMAGE_REGISTRY_INSECURE_HTTP'),
    imageRegistrySha256: sha256Pin(env.IMAGE_REGISTRY_SHA256),
    heartbeatTimeoutMs: envInt(env, 'HEARTBEAT_TIMEOUT_MS', 15_000, 10, 3_600_000),
    resyncMs: envInt(env, 'RESYNC_MS', 300_000, 100, 86_400_000),
    reconcileConcurrency: envInt(env, 'RECONCILE_CONCURRENCY', 16, 1, 1024),
    masterNetns: netns(env.MASTER_NETNS),
    templateTimeoutMs: envInt(env, 'TEMPLATE_TIMEOUT_MS', 2_000, 10, 60_000),
    templateMemoryMb: envInt(env, 'TEMPLATE_MEMORY_MB', 64, 16, 4_096),
    templateQueue: envInt(env, 'TEMPLATE_QUEUE', 32, 1, 10_000),
    bootLoopMaxBoots: envInt(env, 'BOOT_LOOP_MAX_BOOTS', 5, 1, 30),
    bootLoopWindowMs: envInt(env, 'BOOT_LOOP_WINDOW_MS', 600_000, 1_000, 86_400_000),
    diskGoneGraceMs: envInt(env, 'DISK_GONE_GRACE_MS', 600_000, 0, 86_400_000),
    bmcSoftOffGraceMs: envInt(env, 'BMC_SOFT_OFF_GRACE_MS', 120_000, 0, 3_600_000),
    powerOnBootMs: envInt(env, 'POWER_ON_BOOT_MS', 600_000, 1_000, 86_400_000),
    fenceAfterMs: envInt(env, 'FENCE_AFTER_MS', 300_000, 1_000, 86_400_000),
    nodeUnseenGraceMs: envInt(env, 'NODE_UNSEEN_GRACE_MS', 300_000, 100, 86_400_000),
    trustProxy: trustProxy(env.TRUST_PROXY),
    externalUrl: externalUrl(env.EXTERNAL_URL),
    allowedHosts: allowedHosts(env.ALLOWED_HOSTS),
    sseStreamsPerUser: envInt(env, 'SSE_STREAMS_PER_USER', 8, 1, 1_000),
    auditMaxEntries: envInt(env, 'AUDIT_MAX_ENTRIES', 10_000, 100, 1_000_000),
    secretsKey: env.SECRETS_KEY || null,
    // Next to STATE_DIR, not in it: a copy of the state alone holds no usable secret.
    secretsKeyFile: resolve(cwd, env.SECRETS_KEY_FILE || `${resolve(cwd, env.STATE_DIR || './state')}.key`),
    installCredentialTtlMs: envInt(env, 'INSTALL_CREDENTIAL_TTL_MS', 1_800_000, 1_000, 86_400_000),
    maxUnapprovedNodes: envInt(env, 'MAX_UNAPPROVED_NODES', 256, 0, 100_000),
    discoveryBurst: envInt(env, 'DISCOVERY_BURST', 16, 1, 100_000),
    discoveryPerMinute: envInt(env, 'DISCOVERY_PER_MINUTE', 6, 0, 100_000),
    unapprovedNodeTtlMs: envInt(env, 'UNAPPROVED_NODE_TTL_MS', 86_400_000, 1_000, 31_536_000_000),
    approvalRetrySeconds: envInt(env, 'APPROVAL_RETRY_SECONDS', 10, 1, 3_600),
    autoApproveDeclared: envBool(env, 'AUTO_APPROVE_DECLARED', true),
    runRetentionDays: envInt(env, 'RUN_RETENTION_DAYS', 30, 0, 3_650),
    runRetentionMaxRuns: envInt(env, 'RUN_RETENTION_MAX_RUNS', 50_000, 0, 10_000_000),
    runRetentionKeepPerStep: envInt(env, 'RUN_RETENTION_KEEP_PER_STEP', 3, 1, 1_000),
    runPruneEveryMs: envInt(env, 'RUN_PRUNE_EVERY_MS', 3_600_000, 1_000, 86_400_000),
    logLevel: logLevel(env.LOG_LEVEL),
  });
}
