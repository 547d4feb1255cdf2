// The lab as a process of its own (`node dist/src/sim/serve.js`), so that several controllers
// share one datacenter and any of them may be killed without killing it: controllers started
// with DRIVER=lab and LAB_URL=<its URL> reach its Ceph, BMCs and S3 gateways over loopback HTTP
// (src/sim/remote-lab.ts), and its machines' agents speak to the controllers named in
// LAB_CONTROLLERS, or in POST /lab/start when the controllers start after the lab.
//
// Variables: LAB_PORT (0: any), LAB_NODES (6), LAB_SEED (42), LAB_DISKS_PER_MACHINE, LAB_BOOT_MS,
// LAB_STEP_MS, LAB_HEARTBEAT_MS, LAB_CLAIM_WAIT_MS, LAB_DISK_DIR, LAB_CONTROLLERS, and
// LAB_EXIT_WITH_STDIN=1 (stop when stdin closes: a parent's child). It listens on
// 127.0.0.1 only and says `{"message":"lab started","url":...}` on stderr.
import { pathToFileURL } from 'node:url';
import { LabServer, type LabServerOptions } from './lab-server.js';
import { isLoopbackUrl } from './lab-protocol.js';

type Env = Record<string, string | undefined>;

function int(env: Env, name: string, min: number, max: number): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new Error(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  return n;
}

/** The lab's options and where it listens, from its environment; throws naming a bad variable. */
export function labSettings(env: Env): { port: number; options: LabServerOptions; controllers: string[] } {
  const defined = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
  const controllers = (env.LAB_CONTROLLERS ?? '').split(',').filter((u) => u !== '');
  const bad = controllers.find((u) => !isLoopbackUrl(u));
  if (bad !== undefined) throw new Error(`LAB_CONTROLLERS: "${bad}" is not a loopback http URL`);
  const options: LabServerOptions = defined({
    nodes: int(env, 'LAB_NODES', 0, 10_000) ?? 6,
    seed: int(env, 'LAB_SEED', 0, 2 ** 31),
    disksPerMachine: int(env, 'LAB_DISKS_PER_MACHINE', 1, 24),
    bootMs: int(env, 'LAB_BOOT_MS', 0, 600_000),
    stepMs: int(env, 'LAB_STEP_MS', 0, 600_000),
    heartbeatMs: int(env, 'LAB_HEARTBEAT_MS', 10, 600_000),
    claimWaitMs: int(env, 'LAB_CLAIM_WAIT_MS', 0, 60_000),
    diskDir: env.LAB_DISK_DIR || undefined,
  });
  return { port: int(env, 'LAB_PORT', 0, 65535) ?? 0, options, controllers };
}

const say = (message: string, fields: Record<string, unknown> = {}): void =>
  void process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level: 'info', message, ...fields })}\n`);

async function main(): Promise<void> {
  const { port, options, controllers } = labSettings(process.env);
  const server = new LabServer(options);
  const url = await server.listen(port);
  const stop = (signal: string): void => {
    say('lab stopping', { signal });
    void server.stop().finally(() => process.exit(0));
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
  // A test's lab goes with the test process, however that ends (a timeout skips teardowns):
  // its stdin is a pipe from the parent, closed when the parent dies.
  if (process.env.LAB_EXIT_WITH_STDIN === '1') process.stdin.once('end', () => stop('stdin closed')).resume();
  if (controllers.length) server.start({ controllers });
  say('lab started', { url, nodes: options.nodes, controllers });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  main().catch((err: unknown) => {
    process.stderr.write(`quarry lab: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
}
