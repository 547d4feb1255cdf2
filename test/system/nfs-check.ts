// The NFS gateway seen from a client, on a real cluster: a userspace NFS client (libnfs-utils:
// nfs-cp, nfs-cat; no kernel mount, no rpcbind) writes a file into the export, reads it back
// both ways, and the filesystem's data pool is asked, with rados, for the object holding those
// bytes. Given how the master's CLI connects and the gateway's address, so it serves any
// cluster: a NetnsCluster (c.runner, ['-c', c.cephConf]) once `nfs` is a daemon of the API, a
// node-sandbox (nfs-node.system.ts), or one brought up by hand. Findings behind it: docs/real-components.md, "NFS gateway".
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandError } from '../../src/errors.js';
import type { Runner } from '../../src/exec/runner.js';

export interface NfsTarget {
  runner: Runner;
  /** How `ceph` and `rados` reach the cluster as an admin: ['-c', conf] when the conf names the
   * admin keyring, else with '-n', 'client.admin', '-k', keyring. */
  cephArgs: string[];
  /** The gateway's address and NFS port. */
  addr: string;
  port: number;
  /** The exported filesystem: its pseudo path is /<fs>. */
  fs: string;
  /** A gateway just (re)started with known clients refuses opens for its grace period (90 s). */
  graceMs?: number;
}

export interface NfsRoundTrip {
  /** The file's name in the export. */
  name: string;
  bytes: number;
  dataPool: string;
  /** The RADOS object of the data pool that holds the file's bytes. */
  object: string;
  writeMs: number;
  readMs: number;
}

/** libnfs 4.0 (Debian 12) cannot send an NFSv4 WRITE above ~3.9 KB (it fails before sending):
 * one small write carries the proof. Text, so nfs-cat's stdout compares byte for byte. */
const FILE_BYTES = 3000;
const TOOL_MS = 30_000;

export async function nfsRoundTrip(target: NfsTarget): Promise<NfsRoundTrip> {
  const { runner, cephArgs, addr, port, fs } = target;
  const ceph = async (cmd: string, args: string[]): Promise<string> =>
    (await runner.run(cmd, [...cephArgs, ...args], { timeoutMs: TOOL_MS })).stdout;
  const fsInfo = (JSON.parse(await ceph('ceph', ['fs', 'ls', '-f', 'json'])) as Array<{ name: string; data_pools: string[] }>).find(
    (f) => f.name === fs,
  );
  const dataPool = fsInfo?.data_pools[0];
  if (!dataPool) throw new Error(`no filesystem ${fs} with a data pool in this cluster`);
  const host = addr.includes(':') ? `[${addr}]` : addr;
  const name = `quarry-nfs-${randomBytes(6).toString('hex')}.txt`;
  const url = `nfs://${host}/${fs}/${name}?version=4&nfsport=${port}`;
  const dir = await mkdtemp(join(tmpdir(), 'qnfs-'));
  try {
    const content = randomBytes(FILE_BYTES / 2).toString('hex');
    const local = join(dir, 'out.txt');
    const back = join(dir, 'back.txt');
    await writeFile(local, content);
    const before = new Set(await objects(ceph, dataPool));
    let t0 = Date.now();
    await inGrace(target, () => runner.run('nfs-cp', [local, url], { timeoutMs: TOOL_MS }));
    const writeMs = Date.now() - t0;
    t0 = Date.now();
    await inGrace(target, () => runner.run('nfs-cp', [url, back], { timeoutMs: TOOL_MS }));
    const readMs = Date.now() - t0;
    const copied = await readFile(back, 'utf8');
    if (copied !== content) throw new Error(`nfs-cp read back ${copied.length} bytes that differ from the ${content.length} written`);
    const cat = (await runner.run('nfs-cat', [url], { timeoutMs: TOOL_MS })).stdout;
    if (cat !== content) throw new Error(`nfs-cat read back ${cat.length} bytes that differ from the ${content.length} written`);
    // CephFS names a file's objects <inode hex>.<block>: the new ones since the write are the
    // candidates, and the one holding exactly these bytes is the file.
    let object: string | undefined;
    for (const o of (await objects(ceph, dataPool)).filter((x) => !before.has(x))) {
      const got = join(dir, 'object');
      await ceph('rados', ['-p', dataPool, 'get', o, got]);
      if ((await readFile(got, 'utf8')) === content) object = o;
    }
    if (!object) throw new Error(`no object of pool ${dataPool} holds the ${content.length} bytes written through NFS`);
    return { name, bytes: content.length, dataPool, object, writeMs, readMs };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

async function objects(ceph: (cmd: string, args: string[]) => Promise<string>, pool: string): Promise<string[]> {
  return (await ceph('rados', ['-p', pool, 'ls'])).split('\n').filter((l) => /^[0-9a-f]+\.[0-9a-f]{8}$/.test(l));
}

/** Retries a client command while the gateway is in its grace period (NFS4ERR_GRACE). */
async function inGrace<T>(target: NfsTarget, run: () => Promise<T>): Promise<T> {
  const end = Date.now() + (target.graceMs ?? 95_000);
  for (;;) {
    try {
      return await run();
    } catch (err) {
      const grace = err instanceof CommandError && /NFS4ERR_GRACE/.test(`${err.stderr}${err.message}`);
      if (!grace || Date.now() > end) throw err;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}
