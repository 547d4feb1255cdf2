// A whole Quarry (no lab machines, the embedded store, its loops stopped) holding `n` nodes with
// 4 disks each, three of them running OSDs, and a signed-in admin: what the api and metrics
// benchmarks load.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.js';
import { newNodeSpec } from '../src/fleet/discovery.js';
import { silentLogger } from '../src/log.js';
import { startQuarry, type Quarry } from '../src/main.js';
import { diskIdFor, nodeIdForMac } from '../src/model/ids.js';
import { Kind } from '../src/model/kinds.js';
import { macFor } from '../src/sim/machines.js';

const PASSWORD = 'bench-admin-password';

export interface BenchQuarry {
  q: Quarry;
  nodeIds: string[];
  /** The admin's session cookies, as a Cookie header. */
  cookie: string;
  close(): Promise<void>;
}

async function populate(q: Quarry, n: number): Promise<string[]> {
  const ids: string[] = [];
  const CHUNK = 500;
  for (let start = 1; start <= n; start += CHUNK) {
    const writes: Promise<unknown>[] = [];
    for (let i = start; i < Math.min(n + 1, start + CHUNK); i++) {
      const mac = macFor(i);
      const id = nodeIdForMac(mac);
      ids.push(id);
      const serials = ['SYS', 'D1', 'D2', 'D3'].map((s) => `B${i}-${s}`);
      const diskIds = serials.map((s) => diskIdFor(id, s)).sort();
      // Phases spread as in a fleet that is mostly up.
      const phase = i % 50 === 0 ? 'offline' : i % 97 === 0 ? 'booting' : 'active';
      writes.push(
        q.store.create({
          kind: Kind.Node,
          id,
          name: `node-${i}`,
          spec: newNodeSpec(mac, `node-${i}`),
          status: { phase, ip: `192.0.2.${i % 250}`, diskIds, daemons: { mon: false, mgr: false, mds: false, rgw: false } },
        }),
      );
      serials.forEach((serial, d) =>
        writes.push(
          q.store.create({
            kind: Kind.Disk,
            id: diskIdFor(id, serial),
            name: `node-${i}/${serial}`,
            spec: { nodeId: id, serial, osd: d > 0, wipeGeneration: 0 },
            status: {
              present: true,
              devicePath: `/dev/sd${'abcd'[d]}`,
              capacityBytes: d === 0 ? 240e9 : 4e12,
              rotational: d > 0,
              interface: 'sata',
              model: 'M',
              vendor: 'V',
              isSystem: d === 0,
              hasFilesystem: d === 0,
              osdId: d === 0 ? null : i * 3 + d,
              ...(d === 0
                ? {}
                : {
                    osd: {
                      phase: phase === 'active' ? 'running' : 'failed',
                      reason: phase === 'active' ? 'Running' : 'NodeOffline',
                      message: '',
                    },
                  }),
            },
          }),
        ),
      );
    }
    await Promise.all(writes);
  }
  return ids;
}

/** A bench Quarry's settings: the lab driver without machines, on loopback, its state in
 * stateDir; `extra` adds or overrides variables. */
export function benchConfig(stateDir: string, adminPassword: string, extra: Record<string, string> = {}): ReturnType<typeof loadConfig> {
  return loadConfig({
    STATE_DIR: stateDir,
    SPECS_DIR: join(stateDir, 'specs'),
    SECRETS_KEY: Buffer.alloc(32, 3).toString('base64'),
    LAB_NODES: '0',
    PORT: '0',
    HOST: '127.0.0.1',
    ADMIN_PASSWORD: adminPassword,
    ...extra,
  });
}

export async function benchQuarry(n: number): Promise<BenchQuarry> {
  const stateDir = await mkdtemp(join(tmpdir(), 'quarry-bench-q-'));
  const config = benchConfig(stateDir, PASSWORD, { RESYNC_MS: '86400000' });
  const q = await startQuarry({ config, log: silentLogger, print: () => {}, auth: { scrypt: { N: 2 ** 14, r: 8, p: 1 } } });
  // The loops are stopped first: these machines have no agents, and the loops would spend the
  // run marking 10,000 nodes offline and asking a missing cluster for 30,000 OSDs. What is
  // measured is then the HTTP stack and the store under a quiet Quarry, as at steady state.
  await q.manager.stop();
  const nodeIds = await populate(q, n);
  const login = await fetch(`${q.url}/user/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: PASSWORD }),
  });
  if (login.status !== 200) throw new Error(`login: ${login.status}`);
  const cookie = login.headers
    .getSetCookie()
    .map((c) => c.split(';')[0])
    .join('; ');
  return {
    q,
    nodeIds,
    cookie,
    close: async () => {
      await q.stop();
      await rm(stateDir, { recursive: true, force: true });
    },
  };
}
