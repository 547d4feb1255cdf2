// One real Ceph node for a system test: a private temp dir (data, run, log), a loop device
// over a sparse file as its whole disk, a window of ports below the ephemeral range, and a
// stand-in master that serves real keys (made by Quarry's own key generator and by the real
// cluster's `ceph auth get-or-create`), the ceph.conf Quarry renders, and the monmap. Teardown
// stops every daemon it finds by pid file (never by name), unmounts what is mounted under the
// dir (monitors' disks), detaches the loop devices and removes the dir, also when the test failed.
import type { ExecutionContext } from 'ava';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CephHost } from '../../src/agent/ceph-host.js';
import type { Keyring, MasterFiles } from '../../src/agent/master.js';
import type { AgentStepContext } from '../../src/agent/steps/context.js';
import { CephClient } from '../../src/clients/ceph.js';
import { keyringText } from '../../src/model/keyring.js';
import { newCephxKey } from '../../src/model/keyring.js';
import { ZxRunner } from '../../src/exec/zx-runner.js';
import { CephConfRenderer, defaultTemplatesDir, monAddrVec } from '../../src/render/ceph-conf.js';
import { fileTemplates } from '../../src/render/template-file.js';
import type { LogLine } from '../../src/tasks/types.js';

/** Test-only speed-ups and limits of a small box (docs/real-components.md, "Small-box settings"). */
export const TEST_CONF = `[global]
osd_pool_default_pg_num = 8
osd_pool_default_pgp_num = 8
mon_max_pg_per_osd = 500
mon_data_avail_warn = 10
mon_data_avail_crit = 2
mgr_stats_period = 1
mon_mgr_digest_period = 1
osd_mon_report_interval = 1
paxos_propose_interval = 0.1
mgr_tick_period = 1
[mon]
mgr_initial_modules = iostat
[osd]
osd_memory_target = 939524096
bluestore_fsck_on_mkfs = false
[mds]
mds_cache_memory_limit = 268435456`;

export class FakeMaster implements MasterFiles {
  readonly keys: Keyring[] = [];
  constructor(readonly conf: string) {}
  add(entity: string, key: string, caps: Record<string, string>): void {
    this.keys.push({ entity, keyring: keyringText({ entity, key, caps }) });
  }
  /** How the master gets the current monmap: `ceph mon getmap`, once the cluster exists. */
  monmapFrom: () => Promise<Buffer> = async () => {
    throw new Error('no cluster yet');
  };
  config = async (): Promise<string> => this.conf;
  configHash = async (): Promise<string> => createHash('sha256').update(this.conf).digest('hex');
  keyrings = async (): Promise<Keyring[]> => this.keys;
  monmap = (): Promise<Buffer> => this.monmapFrom();
}

export interface Sandbox {
  dir: string;
  device: string;
  port: number;
  fsid: string;
  host: CephHost;
  master: FakeMaster;
  runner: ZxRunner;
  /** The admin CLI, as the master runs it. */
  admin: CephClient;
  /** The master's client.admin key (no node is handed it). */
  adminKey: string;
  /** The master's step after the first monitor's mkfs: client.admin into the cluster, as mon. */
  importAdmin(): Promise<void>;
  lines: LogLine[];
  /** A step's context on the first node, or on `host`. */
  ctx(args: Record<string, unknown>, host?: CephHost): AgentStepContext;
  /** Another node of the same machine: its own dirs, daemons bound to another loopback address. */
  addNode(name: string, addr: string): CephHost;
  /** Another loop device (a monitor's disk), detached at teardown. */
  addDisk(gib?: number): Promise<string>;
}

export async function sandbox(t: ExecutionContext, diskGiB = 3): Promise<Sandbox> {
  const runner = new ZxRunner();
  const dir = await mkdtemp(join(tmpdir(), 'qceph-'));
  let device: string | null = null;
  const more: string[] = [];
  const port = await freePortWindow();
  const hosts: CephHost[] = [];
  const addNode = (name: string, addr: string): CephHost => {
    const k = hosts.length;
    const h = new CephHost({
      runner,
      dataDir: join(dir, name, 'data'),
      runDir: join(dir, name, 'run'),
      logDir: join(dir, name, 'log'),
      publicAddr: addr,
      portRange: { min: port + 10 + 30 * k, max: port + 39 + 30 * k },
      extraConf: TEST_CONF,
      stopGraceMs: 10_000,
    });
    hosts.push(h);
    return h;
  };
  const host = addNode('n1', '127.0.0.1');
  t.teardown(async () => {
    await stopAll(hosts);
    await unmountUnder(runner, dir);
    for (const d of [...(device ? [device] : []), ...more])
      await runner.run('losetup', ['-d', d], { timeoutMs: 10_000 }).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });
  const addDisk = async (gib = 1): Promise<string> => {
    const d = await loopDevice(runner, join(dir, `disk${more.length + 1}.img`), gib);
    more.push(d);
    return d;
  };
  device = await loopDevice(runner, join(dir, 'disk.img'), diskGiB);
  const fsid = randomUUID();
  const conf = await new CephConfRenderer(fileTemplates(defaultTemplatesDir)).renderConf({
    fsid,
    monInitialMembers: ['a'],
    monHost: [monAddrVec('127.0.0.1', port)],
    publicNetwork: '127.0.0.0/8',
    clusterNetwork: null,
    poolDefaults: { size: 1, minSize: 1 },
  });
  const master = new FakeMaster(conf);
  master.monmapFrom = async () => {
    const file = join(dir, 'monmap');
    await admin.monGetmap(file);
    return readFile(file);
  };
  // The node is handed mon. only; client.admin stays on the master's side (issue #12), which
  // imports it into the cluster as mon. once the first monitor runs (importAdmin).
  const monKey = newKey();
  master.add('mon.', monKey, { mon: 'allow *' });
  const adminKey = newKey();
  const adminCaps = { mon: 'allow *', osd: 'allow *', mds: 'allow *', mgr: 'allow *' };
  const adminKeyring = join(dir, 'admin.keyring');
  await writeFile(adminKeyring, keyringText({ entity: 'client.admin', key: adminKey, caps: {} }), { mode: 0o600 });
  const admin = new CephClient({ runner, conf: host.conf, name: 'client.admin', keyring: adminKeyring, timeoutMs: 30_000 });
  const importAdmin = async (): Promise<void> => {
    const monKeyring = join(dir, 'mon.keyring');
    await writeFile(monKeyring, keyringText({ entity: 'mon.', key: monKey, caps: {} }), { mode: 0o600 });
    await admin.authImport(keyringText({ entity: 'client.admin', key: adminKey, caps: adminCaps }), {
      as: { name: 'mon.', keyring: monKeyring },
    });
  };
  const lines: LogLine[] = [];
  const ctx = (args: Record<string, unknown>, on = host): AgentStepContext => ({
    args,
    signal: new AbortController().signal,
    runner,
    host: on,
    master,
    log: (level, message) => lines.push({ timestamp: new Date().toISOString(), level, message }),
  });
  return { dir, device, port, fsid, host, master, runner, admin, adminKey, importAdmin, lines, ctx, addNode, addDisk };
}

/** Unmounts whatever is mounted under `dir`, deepest first (a monitor's disk at its data dir). */
export async function unmountUnder(runner: ZxRunner, dir: string): Promise<void> {
  const mounts = (await readFile('/proc/self/mounts', 'utf8'))
    .split('\n')
    .map((l) => l.split(' ')[1] ?? '')
    .filter((m) => m.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
  for (const m of mounts) await runner.run('umount', [m], { timeoutMs: 30_000 }).catch(() => undefined);
}

/** Stops every daemon of the nodes by its pid file, layer by layer (docs/real-components.md,
 * "Teardown order"): clients first, monitors last. */
export async function stopAll(hosts: CephHost[]): Promise<void> {
  // Gateways first (an NFS gateway is a Ceph client of the MDS and OSDs), monitors last.
  for (const type of ['nfs', 'rgw', 'mds', 'osd', 'mgr', 'mon'] as const) {
    const all = await Promise.all(hosts.map(async (h) => (await h.daemons()).filter((d) => d.type === type).map((d) => ({ h, id: d.id }))));
    await Promise.all(all.flat().map(({ h, id }) => h.stop(type, id)));
  }
}

/** A loop device over a new sparse file: a whole "disk" that costs no space. */
export async function loopDevice(runner: ZxRunner, img: string, gib: number): Promise<string> {
  await writeFile(img, '');
  await truncate(img, gib * 2 ** 30);
  return (await runner.run('losetup', ['-f', '--show', img], { timeoutMs: 10_000 })).stdout.trim();
}

export const newKey = (): string => newCephxKey(Date.now(), randomBytes);

/** A window of 100 ports below the ephemeral range (docs/real-components.md, "Ports below
 * 32768") whose first three are free. */
export async function freePortWindow(): Promise<number> {
  for (let i = 0; i < 50; i++) {
    const base = 20_000 + 100 * Math.floor(Math.random() * 120);
    if ((await Promise.all([0, 1, 2].map((k) => canBind(base + k)))).every(Boolean)) return base;
  }
  throw new Error('no free port window below 32768');
}

const canBind = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
  });

/** Polls until `ok`; the bound is a safety net against a hang, never the thing asserted. */
export async function until<T>(what: string, get: () => Promise<T>, ok: (v: T) => boolean, ms = 120_000): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await get();
      if (ok(v)) return v;
      last = v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end)
      throw new Error(`timed out waiting for ${what}; last: ${last instanceof Error ? last.message : JSON.stringify(last)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Waits for a monitor just started to answer `mon stat`: 'accepted', or the refusal's text (a
 * node's mkfs has the mon. key alone, so client.admin is refused until the master imports it). */
export function monitorAnswer(s: Pick<Sandbox, 'admin'>): Promise<string> {
  return until(
    'an answer from the monitor',
    () =>
      s.admin.monStat({ timeoutMs: 10_000 }).then(
        () => 'accepted',
        (e: unknown) => String((e as { stderr?: string }).stderr ?? e),
      ),
    (v) => v === 'accepted' || /permission denied/.test(v),
  );
}
