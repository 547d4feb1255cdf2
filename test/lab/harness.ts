// Starts the whole of Quarry against a small, fast lab for a test, and tears it down after.
import type { ExecutionContext } from 'ava';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../../src/config.js';
import { silentLogger } from '../../src/log.js';
import { startQuarry, type Quarry, type QuarryOptions } from '../../src/main.js';
import type { Doc } from '../../src/model/document.js';
import { Kind, type NodeSpec, type NodeStatusFields } from '../../src/model/kinds.js';
import { createMemoryStore } from '../../src/store/index.js';
import { MemoryLogStore } from '../../src/tasks/logs.js';
import { EventBus, type AnyBusEvent } from '../../src/tasks/bus.js';
import { Client } from '../http/client.js';
import { waitFor } from '../helpers/wait.js';
export { waitFor };

export const ADMIN_PASSWORD = 'lab-admin-password';
/** The key of secrets at rest for every lab (32 bytes, base64): no key file per test. */
export const SECRETS_KEY = Buffer.alloc(32, 7).toString('base64');
// Cheap hashing for tests; the OWASP parameters are tested once, in test/http.
const FAST_SCRYPT = { N: 2 ** 10, r: 8, p: 1 };

export const FAST = { bootMs: 20, stepMs: 10, heartbeatMs: 40, claimWaitMs: 200 };

export interface LabQuarry extends Quarry {
  events: AnyBusEvent[];
  nodes(): Promise<Doc<NodeSpec, NodeStatusFields>[]>;
  nodeOf(machineIndex: number): Promise<Doc<NodeSpec, NodeStatusFields>>;
}

/** `approve: false`: discovered machines wait for approval; by default the harness approves each
 * one through the API (POST /invoke/node node.approve) as an admin would. */
export async function startLab(
  t: ExecutionContext,
  nodes: number,
  over: Partial<QuarryOptions> & { stateDir?: string; env?: Record<string, string>; approve?: boolean } = {},
): Promise<LabQuarry> {
  const stateDir = over.stateDir ?? (await mkdtemp(join(tmpdir(), 'quarry-lab-')));
  if (!over.stateDir) t.teardown(() => rm(stateDir, { recursive: true, force: true }));
  const config = loadConfig({
    STATE_DIR: stateDir,
    LAB_NODES: String(nodes),
    // Generous against a loaded 2-core machine: a stalled event loop must not look like a dead node.
    // A test process starting several labs at once stalls for seconds under load (ajv compiles,
    // lab image contents): 1 s let nodes flap offline in the middle of tests.
    HEARTBEAT_TIMEOUT_MS: '5000',
    RESYNC_MS: '2000',
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_PASSWORD,
    SECRETS_KEY,
    // Never the repository's specs/ folder: each lab watches its own.
    SPECS_DIR: join(stateDir, 'specs'),
    ...over.env,
  });
  const events: AnyBusEvent[] = [];
  const bus = new EventBus();
  bus.subscribe((e) => events.push(e));
  const approver = over.approve === false ? null : new Approver();
  if (approver) bus.subscribe((e) => e.type === 'node.approval.required' && approver.want((e.payload as { nodeId: string }).nodeId));
  const q = await startQuarry({
    bus,
    config,
    log: silentLogger,
    // The audit trail on, as Quarry runs it (main turns it on for the store it opens itself).
    store: over.store ?? (over.stateDir ? undefined : await createMemoryStore({ auditMaxEntries: 10_000 })),
    logs: over.logs ?? new MemoryLogStore(),
    retryBaseMs: 20,
    // startGraceMs is how long a started daemon has to show in a heartbeat before it is started
    // again: shorter than a stall, it made extra start runs that tests count. monGatherMs is how
    // long the first monitors declared are gathered: 200 ms split three declarations in a row
    // into a first monmap of one under load.
    cephTiming: { pollMs: 100, queryTimeoutMs: 300, startGraceMs: 2_000, blockedRecheckMs: 100, monGatherMs: 2_000 },
    auth: { scrypt: FAST_SCRYPT },
    print: () => {},
    // A deadline, not a speed: 2 s failed node-level runs that a stalled process was slow to claim.
    runTimeoutMs: 10_000,
    specs: { stableMs: 50 },
    ...over,
    lab: { ...FAST, ...over.lab },
  });
  approver?.start(q.url);
  let stopped = false;
  const stop = q.stop.bind(q);
  const lq: LabQuarry = Object.assign(q, {
    events,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      approver?.stop();
      await stop();
    },
    nodes: () => q.store.list<NodeSpec, NodeStatusFields>(Kind.Node),
    nodeOf: async (i: number) => {
      const m = q.lab!.machine(i);
      const all = await lq.nodes();
      const n = all.find((x) => x.spec.macs.includes(m.spec.mac));
      if (!n) throw new Error(`machine ${i} has no node yet`);
      return n;
    },
  });
  t.teardown(() => lq.stop());
  return lq;
}

/** Approves every node that asks, through the API, in batches; what arrives before Quarry
 * answers waits for start(). */
class Approver {
  private readonly waiting = new Set<string>();
  private client: Client | null = null;
  private running = false;
  private stopped = false;

  want(nodeId: string): void {
    this.waiting.add(nodeId);
    void this.drain();
  }

  start(url: string): void {
    this.client = new Client(url);
    void this.drain();
  }

  stop(): void {
    this.stopped = true;
  }

  private async drain(): Promise<void> {
    if (this.running || !this.client || this.stopped) return;
    this.running = true;
    try {
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- stop() sets `stopped` while this awaits; TypeScript keeps it narrowed to false (TS#9998)
      while (this.waiting.size && !this.stopped) {
        const ids = [...this.waiting].slice(0, 100);
        for (const id of ids) this.waiting.delete(id);
        const body = { operation: 'node.approve', nodeIds: ids };
        // Logged in on first use, and again when the session expired (tests shorten tokens to
        // a second, which a loaded machine may spend between a login and the next request).
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- as above
        for (let attempt = 0; attempt < 20 && !this.stopped; attempt++) {
          if ((await this.client.post('/invoke/node', body)).status !== 401) break;
          await this.client.post('/user/login', { username: 'admin', password: ADMIN_PASSWORD });
        }
      }
    } catch {
      // Quarry is stopping; nothing to approve any more.
    } finally {
      this.running = false;
    }
  }
}

export async function allActive(q: LabQuarry, count: number): Promise<Doc<NodeSpec, NodeStatusFields>[]> {
  return waitFor(`${count} active nodes`, async () => {
    const ns = await q.nodes();
    return ns.length === count && ns.every((n) => n.status.phase === 'active') ? ns : undefined;
  });
}
