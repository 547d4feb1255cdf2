// The server's command line: every setting of README's configuration table as a flag
// (`--port 9000` is PORT=9000), `--help` and `--version`. Parsed strictly (node:util parseArgs):
// an unknown flag or a stray argument is refused with exit code 2, before anything is created.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

/** README's configuration table, short: the variable, its default, what it sets. */
export const SETTINGS: ReadonlyArray<readonly [name: string, dflt: string, meaning: string]> = [
  ['PORT', '8080', 'HTTP port of the API, boot and template endpoints'],
  ['HOST', '0.0.0.0', 'address to listen on'],
  ['STATE_DIR', './state', 'the embedded store, keys, downloaded images (0700)'],
  ['STORE', 'embedded', 'embedded: the store under STATE_DIR; etcd: an etcd cluster (ETCD_ENDPOINTS)'],
  ['ETCD_ENDPOINTS', 'none', "STORE=etcd: the members' client URLs, comma-separated"],
  ['ETCD_PREFIX', 'quarry/', 'STORE=etcd: the key prefix Quarry keeps its documents under'],
  ['ETCD_CA_FILE', 'none', "STORE=etcd with https endpoints: the CA of the members' certificates"],
  ['ETCD_CERT_FILE', 'none', 'STORE=etcd: a client certificate to authenticate with (with ETCD_KEY_FILE)'],
  ['ETCD_KEY_FILE', 'none', "STORE=etcd: the client certificate's key"],
  ['LEADER_LEASE_TTL_S', '2', "STORE=etcd: the leader's lease; a dead leader is replaced within about it (2–60)"],
  ['ADVERTISE_URL', 'the listening URL', 'STORE=etcd: where the other controllers reach this one when it leads'],
  ['SPECS_DIR', './specs', 'the watched folder of YAML specs'],
  ['ADMIN_PASSWORD', 'generated', 'password of the first admin, used only when no user exists'],
  ['DRIVER', 'lab', 'lab: the simulated datacenter; real: real commands on real nodes'],
  ['LAB_NODES', '6', 'size of the simulated datacenter'],
  ['LAB_URL', 'none', 'DRIVER=lab: a lab process on loopback (dist/src/sim/serve.js) shared by several controllers'],
  ['LOG_LEVEL', 'info', 'lowest level logged: debug, info, warn or error'],
  ['IMAGE_REGISTRY', 'built-in lab catalog', 'URL of the image catalog'],
  ['IMAGE_REGISTRY_SHA256', '-', "pins the catalog: its bytes' SHA-256"],
  ['IMAGE_REGISTRY_INSECURE_HTTP', 'false', 'accept a plain-http registry on another host without a pin'],
  ['HEARTBEAT_TIMEOUT_MS', '15000', 'a node whose agent is silent this long is offline'],
  ['RESYNC_MS', '300000', 'every loop looks at every object this often'],
  ['RECONCILE_CONCURRENCY', '16', 'reconciles running at once, across all loops'],
  ['MASTER_NETNS', 'none', 'DRIVER=real: the network namespace of the master interfaces and dnsmasq'],
  ['TEMPLATE_TIMEOUT_MS', '2000', 'a template render running longer is stopped'],
  ['TEMPLATE_MEMORY_MB', '64', 'heap of each template render process'],
  ['TEMPLATE_QUEUE', '32', 'public renders waiting before more are refused'],
  ['BOOT_LOOP_MAX_BOOTS', '5', 'more network boots than this within the window is a boot loop'],
  ['BOOT_LOOP_WINDOW_MS', '600000', 'the boot-loop window'],
  ['DISK_GONE_GRACE_MS', '600000', 'an OSD disk missing this long is taken as dead'],
  ['BMC_SOFT_OFF_GRACE_MS', '120000', 'a soft power-off not done this long is forced through the BMC'],
  ['POWER_ON_BOOT_MS', '600000', 'a node powered on that has not reported this long is powered on again'],
  ['FENCE_AFTER_MS', '300000', 'a node with fencing: bmc silent this long is power-cycled'],
  ['NODE_UNSEEN_GRACE_MS', '300000', 'a declared node no machine has booted as this long is NotSeen'],
  ['TRUST_PROXY', 'none', 'reverse proxies whose X-Forwarded-For/-Proto are believed'],
  ['EXTERNAL_URL', 'none', 'the URL machines are sent back to'],
  ['ALLOWED_HOSTS', 'HOST and the hostname', 'Host names Quarry answers under'],
  ['SSE_STREAMS_PER_USER', '8', '/events streams one user may hold at once'],
  ['SECRETS_KEY_FILE', '<STATE_DIR>.key', 'the key that encrypts secrets at rest'],
  ['SECRETS_KEY', 'none', 'the same key given directly (base64)'],
  ['INSTALL_CREDENTIAL_TTL_MS', '1800000', 'an unclaimed install credential is good this long'],
  ['MAX_UNAPPROVED_NODES', '256', 'discovered nodes waiting for approval at most'],
  ['DISCOVERY_BURST', '16', 'new MACs one address may network-boot at once'],
  ['DISCOVERY_PER_MINUTE', '6', 'then per minute'],
  ['UNAPPROVED_NODE_TTL_MS', '86400000', 'an unapproved node not seen booting this long is forgotten'],
  ['APPROVAL_RETRY_SECONDS', '10', 'how long a machine waiting for approval sleeps before it asks again'],
  ['AUTO_APPROVE_DECLARED', 'true', 'a spec naming a MAC plus a boot from our DHCP approves the node'],
  ['AUDIT_MAX_ENTRIES', '10000', 'audit entries kept; past it the oldest go first'],
  ['RUN_RETENTION_DAYS', '30', 'finished task runs and their logs older than this go (0: no age limit)'],
  ['RUN_RETENTION_MAX_RUNS', '50000', 'the run history above which the oldest finished runs go (0: no limit)'],
  ['RUN_RETENTION_KEEP_PER_STEP', '3', 'newest runs kept per object and step whatever their age'],
  ['RUN_PRUNE_EVERY_MS', '3600000', 'how often the run history is pruned'],
];

type Env = Record<string, string | undefined>;

/** The flag of a variable: PORT → port, LAB_NODES → lab-nodes. */
export const flagOf = (name: string): string => name.toLowerCase().replace(/_/g, '-');

export interface Flags {
  /** The environment with the flags' values over it. */
  env: Env;
  /** Set when the command line is answered without starting: what to print, the exit code. */
  exit?: { code: number; text: string };
}

export function usage(): string {
  const width = Math.max(...SETTINGS.map(([n]) => flagOf(n).length)) + 10;
  const rows = SETTINGS.map(([name, dflt, meaning]) => `  --${`${flagOf(name)} <v>`.padEnd(width)}${name}: ${meaning} (default: ${dflt})`);
  return [
    'Usage: node dist/src/main.js [options]   (or: npm start -- [options])',
    '',
    'Runs Quarry: the API, the reconcile loops and (DRIVER=lab) the simulated datacenter.',
    'Every setting is an environment variable, or the flag of the same name (the flag wins).',
    '',
    'Options:',
    `  ${'-h, --help'.padEnd(width + 2)}print this and exit`,
    `  ${'-v, --version'.padEnd(width + 2)}print the version and exit`,
    ...rows,
    '',
  ].join('\n');
}

export function version(): string {
  // dist/src/main/flags.js and src/main/flags.ts are both three levels below the package.
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

export function parseFlags(argv: string[], env: Env): Flags {
  const options = Object.fromEntries(SETTINGS.map(([name]) => [flagOf(name), { type: 'string' as const }]));
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: { ...options, help: { type: 'boolean', short: 'h' }, version: { type: 'boolean', short: 'v' } },
    });
  } catch (err) {
    // parseArgs says which argument and why ("Unknown option '--prot'"); the value is not echoed
    // further than that, and a secret given as a value of a known flag is never in it.
    const why = err instanceof Error ? err.message.split('. ')[0] : String(err);
    return { env, exit: { code: 2, text: `quarry: ${why}\nTry --help for the flags.\n` } };
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  if (values.help) return { env, exit: { code: 0, text: usage() } };
  if (values.version) return { env, exit: { code: 0, text: `${version()}\n` } };
  const out: Env = { ...env };
  for (const [name] of SETTINGS) {
    const v = values[flagOf(name)];
    if (typeof v === 'string') out[name] = v;
  }
  return { env: out };
}
